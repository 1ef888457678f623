/**
 * Every template of the registry that indexes something, on a real (PGlite) database: its spec is
 * what `pipeline.create` stores, a ChatGPT export imports into its source, an offline run completes
 * with every step producing records and no cost, and a search finds the export's planted fact.
 * Templates added to the registry later are covered without editing this file.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { TEMPLATES } from "../pipeline/templates";
import { search } from "../search/search";
import { createTestDb } from "../store/test-db";
import { importFile } from "./imports";
import { createPipeline } from "./pipelines";
import { runPipeline } from "./runs";
import { signUp } from "./users";

const exportFixture = path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json");
const searchable = TEMPLATES.filter((t) => t.spec().outputs.some((o) => o.surface === "search"));

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;

let fixture: string;
let fixtureDir: string;

beforeAll(async () => {
  // The export's user turns name no one (only the assistant's do, and assistant turns make no facts):
  // one user turn names a person and a book, so entity steps have something of the user's to find.
  fixtureDir = await mkdtemp(path.join(tmpdir(), "synthex-templates-run-"));
  fixture = path.join(fixtureDir, "chatgpt-export.json");
  const original = await readFile(exportFixture, "utf8");
  const named = original.replace("Suggest two novels for long winter evenings.", "Suggest two novels for long winter evenings. My sister Maria Lopez loved Piranesi.");
  if (named === original) throw new Error("the fixture no longer has the turn this test names people in");
  await writeFile(fixture, named);
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "templates@example.com", password: "templates-password-1" }));
}, 60_000);
afterAll(async () => {
  await close?.();
  await rm(fixtureDir, { recursive: true, force: true });
});

describe("templates run offline end to end", () => {
  it("covers the baselines and the seed architectures", () => {
    expect(searchable.map((t) => t.id)).toEqual(expect.arrayContaining(["chat-memory", "rag-baseline", "bm25-sessions", "bm25-windows", "synapse", "pyramid"]));
  });

  it.each(searchable.map((t) => [t.id, t] as const))("%s: imports a ChatGPT export, runs offline, every step makes records, search finds the planted fact", async (id, template) => {
    const spec = template.spec("chatgpt-export");
    const { pipeline } = await createPipeline(db, workspaceId, { name: `t-${id}`, spec });
    const source = spec.sources[0]!.name;
    const imported = await importFile(db, { workspaceId, pipelineId: pipeline.id, source, path: fixture });
    expect(imported.added).toBeGreaterThan(0);
    const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id });
    expect(run.status).toBe("completed");
    const stats = run.stats as { steps: Array<{ step: string; output: number; errors: number; costUsd: number }> };
    for (const step of spec.steps) {
      const s = stats.steps.find((x) => x.step === step.name);
      expect(s, `${id}.${step.name} ran`).toBeTruthy();
      expect(s!.errors, `${id}.${step.name} errors`).toBe(0);
      expect(s!.costUsd).toBe(0);
      expect(await db.record.count({ where: { pipelineId: pipeline.id, step: step.name } }), `${id}.${step.name} records`).toBeGreaterThan(0);
    }
    const found = await search(db, { workspaceId, pipelineId: pipeline.id, query: "spare key lighthouse cabin", mode: "fts", limit: 20 });
    expect(found.hits.length, `${id} finds the planted fact`).toBeGreaterThan(0);
    expect(found.hits.some((h) => /ceramic frog/.test(h.content)), `${id}: a hit quotes where the key is`).toBe(true);
  }, 240_000);
});
