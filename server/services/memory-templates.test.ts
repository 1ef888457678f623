/**
 * The Memex and Mem0 templates, end to end offline on a ChatGPT export fixture against a real
 * database: the spec validates, the run completes, the memories are searchable, and a scope prefix
 * with `%` and `_` in it matches literally.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { memoryMetaOf } from "../engine/steps/consolidate";
import { templateSpec } from "../pipeline/templates";
import { parseSpec } from "../pipeline/spec";
import { search } from "../search/search";
import { createTestDb } from "../store/test-db";
import { importFile } from "./imports";
import { createPipeline, getBranch } from "./pipelines";
import { runPipeline } from "./runs";
import { signUp } from "./users";

const fixture = path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json");
// LIKE wildcards in a scope: a prefix query must match them literally.
const SCOPE = "team_a%:alice";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "templates20@example.com", password: "templates-password" }));
});
afterAll(async () => close());

describe.each(["memex", "mem0"])("template %s", (id) => {
  it("validates, runs offline on a ChatGPT export and makes searchable memories; scope prefixes are literal", async () => {
    const spec = templateSpec(id, "chatgpt-export", { scope: SCOPE });
    expect(parseSpec(spec).ok).toBe(true);
    const { pipeline } = await createPipeline(db, workspaceId, { name: id, spec });
    const imported = await importFile(db, { workspaceId, pipelineId: pipeline.id, source: "chats", path: fixture });
    expect(imported.added).toBeGreaterThan(0);
    const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id });
    expect(run.status).toBe("completed");

    const { branch } = await getBranch(db, pipeline.id, "main");
    const pointers = await db.branchPointer.findMany({ where: { branchId: branch.id, step: "memories" } });
    expect(pointers.length).toBeGreaterThan(0);
    const memories = await db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) } }, orderBy: { content: "asc" } });
    expect(memories.every((m) => m.scope === SCOPE && memoryMetaOf(m as never)?.status === "active")).toBe(true);
    const facts = await db.record.count({ where: { pipelineId: pipeline.id, step: "facts" } });
    expect(facts).toBeGreaterThanOrEqual(memories.length);
    if (id === "mem0") {
      // ADD-only: no memory was ever updated or deleted.
      const events = await db.record.findMany({ where: { pipelineId: pipeline.id, step: "memories" } });
      expect(events.map((e) => memoryMetaOf(e as never)?.event).filter(Boolean).every((e) => e === "ADD" || e === "NONE")).toBe(true);
    }

    // A word of a memory finds it, under the collection and under its prefix, not under a wildcard.
    const target = memories.find((m) => /lighthouse/i.test(m.content))!;
    expect(target).toBeDefined();
    const find = async (scope?: string) =>
      (await search(db, { workspaceId, pipelineId: pipeline.id, query: "lighthouse", mode: "fts", step: "memories", scope })).hits.map((h) => h.id);
    expect(await find()).toContain(target.id);
    expect((await find(SCOPE)).length).toBeGreaterThan(0);
    expect((await find("team_a%")).length).toBeGreaterThan(0);
    expect(await find("team%")).toEqual([]);
    expect(await find("team_")).toEqual([]);

    // Unchanged re-run: nothing to do.
    const again = await runPipeline(db, { workspaceId, pipelineId: pipeline.id });
    const stats = (again.stats as { steps: Array<{ step: string; input: number }> }).steps.find((s) => s.step === "memories")!;
    expect(stats.input).toBe(0);
  });
});
