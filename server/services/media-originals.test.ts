/**
 * Images' originals (issue 35): stored with their records, bounded (a large image is re-encoded to
 * ≤ 1600 px WebP, a small one kept byte for byte), content-addressed (the same image imported into
 * two pipelines is one row), read through the record (`record.original`, over tRPC with the same
 * checks as the record), and purged with the last record that names them.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { textPng } from "../importers/testing/media-fixtures";
import { ragBaselineSpec } from "../pipeline/templates/rag";
import { createTestDb } from "../store/test-db";
import { importFile } from "./imports";
import { recordOriginal } from "./media-originals";
import { createPipeline } from "./pipelines";
import { purgeRecord } from "./purge";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let tmp: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "originals@example.com", password: "originals-password-1" }));
  tmp = await mkdtemp(path.join(tmpdir(), "synthex-originals-"));
}, 60_000);
afterAll(async () => {
  await close?.();
  await rm(tmp, { recursive: true, force: true });
});

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("image originals", () => {
  it("are stored bounded and once per content, read through the record, and purged with the last record naming them", async () => {
    const small = await textPng(["Parking level 3, spot 42"], { width: 700 });
    const large = await textPng(["Quarterly roadmap: launch in March"], { width: 3200, fontSize: 90 });
    await writeFile(path.join(tmp, "parking.png"), small);
    await writeFile(path.join(tmp, "roadmap.png"), large);
    const { pipeline: a } = await createPipeline(db, workspaceId, { name: "pics-a", spec: ragBaselineSpec("folder") });
    const { pipeline: b } = await createPipeline(db, workspaceId, { name: "pics-b", spec: ragBaselineSpec("folder") });
    for (const p of [a, b]) for (const f of ["parking.png", "roadmap.png"]) await importFile(db, { workspaceId, pipelineId: p.id, source: "chats", path: path.join(tmp, f) });

    // Content-addressed: two pipelines, two images → two rows.
    expect(await db.mediaBlob.count({ where: { workspaceId } })).toBe(2);
    const smallRow = await db.mediaBlob.findUniqueOrThrow({ where: { workspaceId_sha256: { workspaceId, sha256: sha(small) } } });
    expect(Buffer.from(smallRow.bytes).equals(small)).toBe(true);
    const largeRow = await db.mediaBlob.findUniqueOrThrow({ where: { workspaceId_sha256: { workspaceId, sha256: sha(large) } } });
    expect(largeRow).toMatchObject({ type: "image/webp", width: 1600 });
    const decoded = await sharp(Buffer.from(largeRow.bytes)).metadata();
    expect([decoded.format, decoded.width]).toEqual(["webp", 1600]);

    const recordOf = (pipelineId: string, name: string) => db.record.findFirstOrThrow({ where: { pipelineId, step: "chats", metadata: { path: ["file", "name"], equals: name } } });
    const roadmapA = await recordOf(a.id, "roadmap.png");
    expect(roadmapA.metadata).toMatchObject({ image: { width: 3200, original: { type: "image/webp", width: 1600, bytes: largeRow.bytes.length } } });
    const read = await recordOriginal(db, workspaceId, roadmapA.id);
    expect(read).toMatchObject({ name: "roadmap.png", type: "image/webp", width: 1600 });
    expect(Buffer.from(read.dataUrl.replace(/^data:image\/webp;base64,/, ""), "base64").equals(Buffer.from(largeRow.bytes))).toBe(true);
    await expect(recordOriginal(db, "another-workspace", roadmapA.id)).rejects.toThrow(/not found/);

    // Purged in pipeline a: pipeline b's record still names it, so it stays; purged there too, it goes.
    await purgeRecord(db, { workspaceId, actor: "user:test", dryRun: false }, roadmapA.id);
    expect(await db.mediaBlob.count({ where: { workspaceId, sha256: sha(large) } })).toBe(1);
    const roadmapB = await recordOf(b.id, "roadmap.png");
    await purgeRecord(db, { workspaceId, actor: "user:test", dryRun: false }, roadmapB.id);
    expect(await db.mediaBlob.count({ where: { workspaceId, sha256: sha(large) } })).toBe(0);
    await expect(recordOriginal(db, workspaceId, (await recordOf(b.id, "parking.png")).id)).resolves.toMatchObject({ type: "image/png", width: 700 });
  }, 120_000);
});
