/* eslint-disable @typescript-eslint/no-explicit-any -- record metadata read loosely */
/**
 * Synapsis's template takes documents, images and voice memos (issue 35): a folder with a 3-page
 * PDF, a photo of a whiteboard and a memo (transcribed by the mock OpenAI server) is imported into a
 * Synapsis pipeline, the pipeline runs offline, search over its `search` output finds a phrase of
 * page 2, of the image and of the memo, and each hit's drill-down (its source records) shows the
 * page number / the image with its OCR lines / the memo's time range.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { textPdf, textPng, toneWav } from "../importers/testing/media-fixtures";
import { startMockOpenAIServer } from "../llm/testing/mock-openai-server";
import { synapsisSpec } from "../pipeline/templates/synapsis";
import { leaves } from "../search/provenance";
import { search } from "../search/search";
import { createTestDb } from "../store/test-db";
import { importFile } from "./imports";
import { createPipeline } from "./pipelines";
import { upsertProvider } from "./providers";
import { runPipeline } from "./runs";
import { signUp } from "./users";

process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-synapsis-media";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let tmp: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "synapsis-media@example.com", password: "synapsis-media-1" }));
  tmp = await mkdtemp(path.join(tmpdir(), "synthex-synapsis-media-"));
}, 60_000);
afterAll(async () => {
  await close?.();
  await rm(tmp, { recursive: true, force: true });
});

describe("Synapsis over documents, images and memos", () => {
  it("import → run → search finds page 2, the image and the memo; drill-down shows page / image / time range", async () => {
    const dir = path.join(tmp, "inbox");
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "lease.pdf"), await textPdf(["Lease agreement\nTenant: Sam", "The landlord keeps the spare key under the blue planter.", "Signatures"], { title: "Lease", author: "Agency" }));
    await writeFile(path.join(dir, "whiteboard.png"), await textPng(["Offsite venue: Marseille harbour", "Budget approved"]));
    await toneWav(path.join(dir, "memo.wav"), 3);

    const { pipeline } = await createPipeline(db, workspaceId, { name: "synapsis-media", spec: synapsisSpec("folder") });
    const mock = await startMockOpenAIServer({ apiKey: "sk-synapsis" });
    try {
      await upsertProvider(db, workspaceId, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-synapsis", timeoutMs: 5000 });
      const imported = await importFile(db, { workspaceId, pipelineId: pipeline.id, source: "sessions", path: dir, actor: "user:test" });
      expect(imported).toMatchObject({ format: "folder", received: 5, added: 5, skipped: 0, warnings: [] });
    } finally {
      await mock.close();
    }
    const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id });
    expect(run.status).toBe("completed");

    const drill = async (query: string, phrase: RegExp) => {
      const found = await search(db, { workspaceId, pipelineId: pipeline.id, query, mode: "fts", output: "search", limit: 5 });
      const hit = found.hits.find((h) => phrase.test(h.content));
      expect(hit, `a hit for "${query}"`).toBeDefined();
      expect(hit!.step).not.toBe("sessions");
      const { leaves: sources } = await leaves(db, workspaceId, hit!.id);
      const source = sources.find((s) => phrase.test(s.content));
      expect(source, `the source record of "${query}"`).toBeDefined();
      return source!.metadata as any;
    };

    expect(await drill("spare key blue planter", /blue planter/)).toMatchObject({ modality: "document", position: { page: 2, pages: 3 }, file: { name: "lease.pdf" }, document: { title: "Lease" } });
    const image = await drill("Marseille harbour", /Marseille harbour/);
    expect(image).toMatchObject({ modality: "image", file: { name: "whiteboard.png", type: "image/png" }, image: { width: expect.any(Number), thumbnail: expect.stringMatching(/^data:image\/webp;base64,/) } });
    expect(image.ocr.lines.map((l: { text: string }) => l.text)).toEqual(["Offsite venue: Marseille harbour", "Budget approved"]);
    expect(await drill("water the basil balcony", /water the basil/)).toMatchObject({ modality: "audio", position: { start_s: 0, end_s: 3 }, file: { name: "memo.wav" }, transcript: { status: "done" } });
  }, 180_000);
});
