/* eslint-disable @typescript-eslint/no-explicit-any -- hand-built export JSON of loose shape */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Pipeline } from "../pipeline/sdk";
import type { Db } from "../core/db";
import { ImportFailedError, importFile } from "../services/imports";
import { createPipeline, getBranch } from "../services/pipelines";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";

const FIX = path.join(import.meta.dirname, "__fixtures__");
let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let tmp: string;
let n = 0;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "importer@example.com", password: "importer-password" }));
  tmp = await mkdtemp(path.join(tmpdir(), "synthex-import-file-"));
});
afterAll(async () => {
  await close();
  await rm(tmp, { recursive: true, force: true });
});

async function newPipeline(format: "chatgpt-export" | "folder" | "jsonl", scope?: string) {
  n += 1;
  const spec = new Pipeline("imp", { agent: "test" })
    .source("chats", { format, ...(scope ? { scope } : {}) })
    .toSpec();
  const { pipeline } = await createPipeline(db, workspaceId, { name: `imp${n}`, spec });
  return pipeline.id;
}

async function pointed(pipelineId: string) {
  const { branch } = await getBranch(db, pipelineId, "main");
  const pointers = await db.branchPointer.findMany({ where: { branchId: branch.id, step: "chats" } });
  return db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } }, orderBy: { createdAt: "asc" } });
}

describe("importFile", () => {
  it("imports a ChatGPT export, is idempotent, and adds only new or changed conversations from a newer export", async () => {
    const pipelineId = await newPipeline("chatgpt-export", "me:personal");
    const file = path.join(FIX, "chatgpt", "conversations.json");
    const first = await importFile(db, { workspaceId, pipelineId, source: "chats", path: file });
    expect(first).toMatchObject({ format: "chatgpt-export", status: "completed", received: 4, added: 4, unchanged: 0, skipped: 0, warnings: [] });
    const row = await db.sourceImport.findUniqueOrThrow({ where: { id: first.importId } });
    expect(row).toMatchObject({ status: "completed", format: "chatgpt-export", fileName: "conversations.json", source: "chats", error: null });
    expect(row.stats).toMatchObject({ received: 4, added: 4 });
    expect(row.finishedAt).not.toBeNull();
    const records = await pointed(pipelineId);
    expect(records).toHaveLength(4);
    expect(records.every((r) => r.scope === "me:personal")).toBe(true);
    const meta = records.find((r) => r.content.includes("Sourdough"))!.metadata as Record<string, any>;
    expect(meta.chat.conversation_id).toBe("c0ffee00-0000-4000-8000-000000000001");
    expect(meta.time.created_at).toBe("2024-06-10T06:13:20.250Z");
    expect(meta.source).toMatchObject({ type: "chatgpt-export", path: file });

    const again = await importFile(db, { workspaceId, pipelineId, source: "chats", path: file });
    expect(again).toMatchObject({ received: 4, added: 0, unchanged: 4 });
    expect(await db.record.count({ where: { pipelineId } })).toBe(4);

    // A newer export: one conversation grew a turn, one is new, the rest are unchanged.
    const convs = JSON.parse(await readFile(file, "utf8")) as any[];
    const c4 = convs[3];
    c4.mapping.o3 = { id: "o3", parent: "o2", children: [], message: { id: "o3", author: { role: "assistant" }, content: { content_type: "text", parts: ["In autumn, before the ground freezes."] }, metadata: {}, recipient: "all" } };
    c4.mapping.o2.children = ["o3"];
    c4.current_node = "o3";
    convs.push({ id: "new-conv", title: "New", create_time: 1730000000, current_node: "z", mapping: { z: { id: "z", parent: null, children: [], message: { author: { role: "user" }, content: { content_type: "text", parts: ["brand new"] } } } } });
    const newer = path.join(tmp, "newer.json");
    await writeFile(newer, JSON.stringify(convs));
    const third = await importFile(db, { workspaceId, pipelineId, source: "chats", path: newer });
    expect(third).toMatchObject({ received: 5, added: 2, unchanged: 3 });
    const after = await pointed(pipelineId);
    expect(after).toHaveLength(5);
    expect(after.find((r) => (r.metadata as any).chat.conversation_id === c4.id)!.content).toContain("assistant: In autumn");
    expect(await db.sourceImport.count({ where: { pipelineId } })).toBe(3);
  });

  it("batches through appendSourceRecords and reports skipped conversations with warnings", async () => {
    const pipelineId = await newPipeline("chatgpt-export");
    const progress: number[] = [];
    const res = await importFile(db, { workspaceId, pipelineId, source: "chats", path: path.join(FIX, "chatgpt", "damaged.json"), batchSize: 2, onProgress: (p) => progress.push(p.received) });
    expect(res).toMatchObject({ received: 3, added: 3, skipped: 5, warningCount: 7 });
    expect(progress).toEqual([2, 3]);
    const row = await db.sourceImport.findUniqueOrThrow({ where: { id: res.importId } });
    expect((row.warnings as unknown[]).length).toBe(7);
  });

  it("marks the import failed with a clear error for a truncated file, keeping complete batches", async () => {
    const pipelineId = await newPipeline("chatgpt-export");
    const full = await readFile(path.join(FIX, "chatgpt", "conversations.json"));
    const file = path.join(tmp, "cut.json");
    await writeFile(file, full.subarray(0, full.indexOf("c0ffee00-0000-4000-8000-000000000003") + 100));
    const err = await importFile(db, { workspaceId, pipelineId, source: "chats", path: file, batchSize: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportFailedError);
    const failed = err as ImportFailedError;
    expect(failed.message).toMatch(/cut\.json is truncated: .*conversation #3 \("c0ffee00-0000-4000-8000-000000000003"\).*2 new record\(s\) from the 2 item\(s\) before it were imported/);
    const row = await db.sourceImport.findUniqueOrThrow({ where: { id: failed.importId } });
    expect(row).toMatchObject({ status: "failed", format: "chatgpt-export" });
    expect(row.error).toMatch(/truncated/);
    expect(await pointed(pipelineId)).toHaveLength(2);
  });

  it("detects the format, honours an override, and refuses an unknown source", async () => {
    const pipelineId = await newPipeline("folder");
    const res = await importFile(db, { workspaceId, pipelineId, source: "chats", path: path.join(FIX, "notes") });
    expect(res).toMatchObject({ format: "folder", received: 3, added: 3 });
    const jsonl = await importFile(db, { workspaceId, pipelineId, source: "chats", path: path.join(FIX, "transcript.md"), format: "text" });
    expect(jsonl).toMatchObject({ format: "text", received: 1, added: 1 });
    await expect(importFile(db, { workspaceId, pipelineId, source: "nope", path: path.join(FIX, "notes") })).rejects.toThrow(/Source "nope" is not in pipeline/);
    const bad = await importFile(db, { workspaceId, pipelineId, source: "chats", path: path.join(FIX, "transcript.md"), format: "chatgpt-export" }).catch((e: Error) => e);
    expect(bad).toBeInstanceOf(ImportFailedError);
    expect((bad as Error).message).toMatch(/transcript\.md is not a JSON array of conversations/);
  });

  it("stores each JSONL line in its own scope, the source's scope where a line names none; a re-import moves a changed scope", async () => {
    const pipelineId = await newPipeline("jsonl", "acme:shared");
    const file = path.join(tmp, "many-users.jsonl");
    const line = (id: string, scope?: string) => JSON.stringify({ id, ...(scope ? { scope } : {}), messages: [{ role: "user", content: `note ${id}` }] });
    await writeFile(file, [line("u1", "acme:user-1"), line("u2", "acme:user-2"), line("team")].join("\n"));
    expect(await importFile(db, { workspaceId, pipelineId, source: "chats", path: file })).toMatchObject({ format: "jsonl", added: 3, warnings: [] });
    const scopeOf = async () => Object.fromEntries((await pointed(pipelineId)).map((r) => [(r.metadata as { chat: { conversation_id: string } }).chat.conversation_id, r.scope]));
    expect(await scopeOf()).toEqual({ u1: "acme:user-1", u2: "acme:user-2", team: "acme:shared" });

    // The same conversation filed under another user: the new scope replaces the old one, no copy stays behind.
    await writeFile(file, [line("u1", "acme:user-3"), line("u2", "acme:user-2"), line("team")].join("\n"));
    expect(await importFile(db, { workspaceId, pipelineId, source: "chats", path: file })).toMatchObject({ added: 1, unchanged: 2 });
    expect(await scopeOf()).toEqual({ u1: "acme:user-3", u2: "acme:user-2", team: "acme:shared" });
  });
});
