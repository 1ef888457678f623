/**
 * Named statements for the search path on PostgreSQL (`TEST_DATABASE_URL`): the registered reads
 * are prepared on the connection and the HNSW read is not; a search answers the same with them on
 * as with every statement sent unnamed; the embedded database never gets names.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaClient } from "../generated/prisma/client";
import { Pipeline } from "../pipeline/sdk";
import { search } from "../search/search";
import { indexPipeline } from "../search/indexing";
import { appendSourceRecords, createPipeline } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { pgAdapterOptions, prepared, statementName } from "./prepared-statements";
import { createTestDb, type TestDb } from "./test-db";

let t: TestDb;
let unnamed: PrismaClient;
let pool: pg.Pool;
let workspaceId: string;
let pipelineId: string;
const TOPICS = ["tomato seedlings", "balcony door", "train to Lyon", "sourdough starter", "tax return"];

beforeAll(async () => {
  t = await createTestDb();
  ({ workspace: { id: workspaceId } } = await signUp(t.db, { email: "prepared@example.com", password: "prepared-password-1" }));
  const spec = new Pipeline("notes")
    .source("notes", { format: "jsonl" })
    .transform("clean", { from: "notes", operator: { kind: "identity" } })
    .aggregate("weekly", { from: "clean", every: 3, prompt: "{% for r in records %}{{ r.content }}\n{% endfor %}" })
    .output("search", { from: ["clean", "weekly"], surface: "search" });
  ({ pipeline: { id: pipelineId } } = await createPipeline(t.db, workspaceId, { name: "notes", spec: spec.toSpec() }));
  await appendSourceRecords(t.db, pipelineId, "notes", Array.from({ length: 24 }, (_, i) => ({ externalId: `n${i}`, content: `Note ${i} about the ${TOPICS[i % TOPICS.length]}: step ${i % 4}.` })));
  expect((await runPipeline(t.db, { workspaceId, pipelineId })).status).toBe("completed");
  await indexPipeline(t.db, pipelineId);
  // The same database with every statement unnamed (as the embedded database connects).
  pool = new pg.Pool({ connectionString: t.url!, max: 4 });
  unnamed = new PrismaClient({ adapter: new PrismaPg(pool, pgAdapterOptions(true)) });
}, 180_000);
afterAll(async () => {
  await unnamed?.$disconnect();
  await pool?.end();
  await t?.close();
});

describe("named statements on PostgreSQL", () => {
  it("prepares the registered search reads on the connection, and not the HNSW read", async () => {
    // One connection, as the app connects on PostgreSQL: what it prepared is visible to its next query.
    const one = new pg.Pool({ connectionString: t.url!, max: 1 });
    const db = new PrismaClient({ adapter: new PrismaPg(one, pgAdapterOptions(false)) });
    let statements: Array<{ name: string; statement: string }>;
    try {
      await search(db, { workspaceId, pipelineId, query: "tomato balcony step 2", mode: "hybrid", limit: 5 });
      statements = await db.$queryRawUnsafe<Array<{ name: string; statement: string }>>(`SELECT name, statement FROM pg_prepared_statements`);
    } finally {
      await db.$disconnect();
      await one.end();
    }
    const named = statements.filter((s) => s.name.startsWith("sx_"));
    expect(named.some((s) => s.statement.includes(`"SearchPosting"`))).toBe(true); // BM25
    expect(named.some((s) => s.statement.includes("WITH RECURSIVE walk"))).toBe(true); // shapes and dedupe
    expect(named.some((s) => s.statement.includes("ts_headline"))).toBe(true); // hit rows
    expect(statements.some((s) => s.statement.includes("hnsw.iterative_scan"))).toBe(false);
  });

  it("answers every search as the unnamed statements do", async () => {
    for (const mode of ["hybrid", "fts", "semantic"] as const) {
      for (let i = 0; i < 8; i++) {
        const input = { workspaceId, pipelineId, query: `${TOPICS[i % TOPICS.length]} ${i % 4}`, mode, limit: 10 };
        const [a, b] = [await search(t.db, input), await search(unnamed, input)];
        expect(a.hits.length).toBeGreaterThan(0);
        expect(a.hits.map((h) => [h.id, h.score, h.snippet, h.highlights, h.lowerHits])).toEqual(b.hits.map((h) => [h.id, h.score, h.snippet, h.highlights, h.lowerHits]));
      }
    }
  });

  it("names only registered texts, and none on the embedded database or when turned off", () => {
    const sql = prepared(`SELECT 1 AS one /* prepared-statements test */`);
    expect(statementName({ sql })).toMatch(/^sx_[0-9a-f]{20}$/);
    expect(statementName({ sql: `SELECT 2 AS two` })).toBeUndefined();
    expect(pgAdapterOptions(true)).toEqual({});
    const saved = process.env.SYNTHEX_DB_PREPARED;
    process.env.SYNTHEX_DB_PREPARED = "off";
    try {
      expect(pgAdapterOptions(false)).toEqual({});
      process.env.SYNTHEX_DB_PREPARED = "maybe";
      expect(() => pgAdapterOptions(false)).toThrow(/SYNTHEX_DB_PREPARED must be "on" or "off"/);
    } finally {
      if (saved === undefined) delete process.env.SYNTHEX_DB_PREPARED;
      else process.env.SYNTHEX_DB_PREPARED = saved;
    }
    expect(pgAdapterOptions(false).statementNameGenerator).toBe(statementName);
  });
});
