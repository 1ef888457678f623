/* eslint-disable @typescript-eslint/no-explicit-any -- record metadata read loosely */
/**
 * End to end on a real (PGlite) database: a folder holding a 3-page PDF, a Word document and a
 * photo of text is imported into a RAG pipeline, the pipeline runs offline, and search finds a
 * phrase from page 2 and one from the image, each traceable to its page / its file and modality.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { ragBaselineSpec } from "../pipeline/templates/rag";
import { search } from "../search/search";
import { importFile } from "../services/imports";
import { createPipeline } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { startMockOpenAIServer } from "../llm/testing/mock-openai-server";
import { upsertProvider } from "../services/providers";
import { docx, encryptedPdf, textPdf, textPng, toneWav } from "./testing/media-fixtures";

process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-media";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let tmp: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "media@example.com", password: "media-password-1" }));
  tmp = await mkdtemp(path.join(tmpdir(), "synthex-import-media-"));
}, 60_000);
afterAll(async () => {
  await close?.();
  await rm(tmp, { recursive: true, force: true });
});

describe("documents and images, import → run → search", () => {
  it("finds a phrase from page 2 of a PDF and one from an image, with page number and modality", async () => {
    const dir = path.join(tmp, "inbox");
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "lease.pdf"), await textPdf(["Lease agreement\nTenant: Sam", "The landlord keeps the spare key under the blue planter.", "Signatures"], { title: "Lease", author: "Agency" }));
    await docx(path.join(dir, "recipes.docx"), [{ text: "Soups", style: "Heading1" }, { text: "Leek soup wants a pinch of nutmeg." }]);
    await writeFile(path.join(dir, "whiteboard.png"), await textPng(["Offsite venue: Marseille harbour", "Budget approved"]));
    await writeFile(path.join(dir, "locked.pdf"), encryptedPdf());

    const { pipeline } = await createPipeline(db, workspaceId, { name: "docs", spec: ragBaselineSpec("folder") });
    const imported = await importFile(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: dir, actor: "user:test" });
    expect(imported).toMatchObject({ format: "folder", received: 5, added: 5, skipped: 1 });
    expect(imported.warnings).toEqual([{ conversation: "locked.pdf", reason: expect.stringMatching(/^locked\.pdf is encrypted/), skipped: true }]);
    const audit = await db.auditEvent.findFirst({ where: { workspaceId, action: "source.import" } });
    expect(audit?.summary).toMatchObject({ status: "completed", added: 5, skipped: 1 });
    // Re-importing the same folder adds nothing.
    expect(await importFile(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: dir })).toMatchObject({ added: 0, unchanged: 5 });

    const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id });
    expect(run.status).toBe("completed");

    const page = await search(db, { workspaceId, pipelineId: pipeline.id, query: "spare key blue planter", mode: "fts", limit: 5 });
    expect(page.hits[0]!.content).toContain("spare key under the blue planter");
    const pageSource = await db.record.findFirstOrThrow({ where: { pipelineId: pipeline.id, step: "chats", content: { contains: "blue planter" } } });
    expect(pageSource.metadata).toMatchObject({ modality: "document", position: { page: 2, pages: 3 }, document: { title: "Lease", author: "Agency" }, file: { name: "lease.pdf" } });

    const image = await search(db, { workspaceId, pipelineId: pipeline.id, query: "Marseille harbour", mode: "fts", limit: 5 });
    expect(image.hits[0]!.content).toMatch(/Offsite venue: Marseille harbour/);
    const imageSource = await db.record.findFirstOrThrow({ where: { pipelineId: pipeline.id, step: "chats", content: { contains: "Marseille" } } });
    expect(imageSource.metadata as any).toMatchObject({ modality: "image", file: { name: "whiteboard.png", type: "image/png" }, ocr: { low_confidence: false } });
    expect((imageSource.metadata as any).ocr.lines).toHaveLength(2);

    const word = await search(db, { workspaceId, pipelineId: pipeline.id, query: "nutmeg", mode: "fts", limit: 5 });
    expect(word.hits[0]!.content).toContain("# Soups");
  }, 120_000);

  it("stores a voice memo as awaiting transcription without a provider; with the mock provider, timed segments that search finds", async () => {
    const memo = path.join(tmp, "memo.wav");
    await toneWav(memo, 3);
    const { pipeline } = await createPipeline(db, workspaceId, { name: "memos", spec: ragBaselineSpec("folder") });
    const waiting = await importFile(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: memo });
    expect(waiting).toMatchObject({ format: "audio", added: 1, warnings: [{ conversation: "memo.wav", reason: expect.stringMatching(/awaits transcription/) }] });
    const before = await db.record.findFirstOrThrow({ where: { pipelineId: pipeline.id, step: "chats" } });
    expect(before.content).toMatch(/memo\.wav: an audio memo of 0:03 that awaits transcription/);
    expect(before.metadata).toMatchObject({ modality: "audio", transcript: { status: "awaiting" } });

    const mock = await startMockOpenAIServer({ apiKey: "sk-memo" });
    try {
      await upsertProvider(db, workspaceId, { name: "mock", kind: "openai-compatible", baseUrl: mock.baseUrl, apiKey: "sk-memo", timeoutMs: 5000 });
      const done = await importFile(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: memo });
      expect(done).toMatchObject({ format: "audio", added: 1, warnings: [] });
      expect(mock.requests.filter((r) => r.path.endsWith("/audio/transcriptions")).map((r) => r.body)).toEqual([
        { model: "whisper-1", fileName: "memo.wav", fileSize: 44 + 3 * 16000 * 2, response_format: "verbose_json" },
      ]);
    } finally {
      await mock.close();
    }
    const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id });
    expect(run.status).toBe("completed");
    const found = await search(db, { workspaceId, pipelineId: pipeline.id, query: "water the basil balcony", mode: "fts", limit: 5 });
    expect(found.hits[0]!.content).toMatch(/\[0:01–0:03\] Remember to water the basil on the balcony/);
    // The memo's record now holds the transcript (the awaiting one is replaced, not kept beside it).
    const { branch } = await import("../services/pipelines").then((m) => m.getBranch(db, pipeline.id, "main"));
    const pointed = await db.branchPointer.findMany({ where: { branchId: branch.id, step: "chats" } });
    expect(pointed).toHaveLength(1);
    const memoRecord = await db.record.findUniqueOrThrow({ where: { id: pointed[0]!.recordId } });
    expect(memoRecord.metadata).toMatchObject({
      modality: "audio",
      position: { start_s: 0, end_s: 3 },
      transcript: { status: "done", model: "mock/whisper-1", segments: [{ start: 0, end: 1.5, text: "Voice memo memo.wav." }, { start: 1.5, end: 3 }] },
    });
  }, 120_000);
});
