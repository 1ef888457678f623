/**
 * Exact KNN over one scope (nearestExact with a scope filter) reads half-precision copies of the
 * vectors from the scope index and ranks a pool by full precision: its answer must be exactly the
 * n nearest by full precision, tie-broken as before, also where half precision cannot tell the
 * vectors apart, and when the pool is too narrow to be sure (then it reads full precision).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { Pipeline } from "../pipeline/sdk";
import { appendSourceRecords, createPipeline } from "../services/pipelines";
import { signUp } from "../services/users";
import { storeEmbeddings, toVectorLiteral } from "./embedding-store";
import { sqlTrace } from "./record-sql";
import { HALF_MAX_DIMS, nearestExact } from "./search-reads";
import { createTestDb } from "./test-db";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;
let branchId: string;
const DIMS = 16;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "scope-knn@example.com", password: "scope-knn-password" }));
  const spec = new Pipeline("knn", { agent: "test" }).source("notes", { format: "jsonl" }).output("search", { from: ["notes"], surface: "search" }).toSpec();
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "knn", spec }));
  branchId = (await db.branch.findFirstOrThrow({ where: { pipelineId, name: "main" }, select: { id: true } })).id;
});
afterAll(async () => close());

/** A deterministic pseudo-random vector (components in -1..1). */
function vec(seed: number): number[] {
  return Array.from({ length: DIMS }, (_, j) => Math.sin(seed * 12.9898 + j * 78.233));
}
const cosDist = (a: number[], b: number[]) => {
  const dot = (x: number[], y: number[]) => x.reduce((sum, v, i) => sum + v * y[i]!, 0);
  return 1 - dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
};

/** Records of one scope with the given vectors (model `model`): their ids in order. */
async function seed(scope: string, model: string, vectors: number[][]): Promise<string[]> {
  await appendSourceRecords(db, pipelineId, "notes", vectors.map((_, i) => ({ externalId: `${scope}-${i}`, content: `${scope} note ${i}`, scope })));
  const rows = await db.record.findMany({ where: { pipelineId, scope }, select: { id: true, content: true, step: true, scope: true, pipelineId: true } });
  const byContent = new Map(rows.map((r) => [r.content, r]));
  const ordered = vectors.map((_, i) => byContent.get(`${scope} note ${i}`)!);
  const embedder = { id: model, dimensions: DIMS, embed: async (texts: string[]) => texts.map((t) => vectors[Number(t.split(" ").at(-1))]!) };
  await storeEmbeddings(db, workspaceId, embedder, ordered);
  return ordered.map((r) => r.id);
}

/** nearestExact over one scope, and the labels of the reads it made. */
async function knn(scope: string, model: string, query: number[], n: number) {
  const reads: string[] = [];
  sqlTrace.fn = (label) => reads.push(label);
  try {
    const got = await nearestExact(db, { workspaceId, branchId, steps: ["notes"], filters: { scope }, vector: toVectorLiteral(query), dims: DIMS, model, n, pipelineId, maxCandidates: 20_000 });
    return { got, reads };
  } finally {
    sqlTrace.fn = null;
  }
}

describe("exact KNN over a scope", () => {
  it("returns the n nearest by full precision, in order", async () => {
    expect(DIMS).toBeLessThanOrEqual(HALF_MAX_DIMS);
    const vectors = Array.from({ length: 300 }, (_, i) => vec(i + 1));
    const ids = await seed("team:a", "m-a", vectors);
    const query = vec(9999);
    const expected = ids.map((id, i) => ({ id, d: cosDist(vectors[i]!, query) })).sort((x, y) => x.d - y.d);
    const { got, reads } = await knn("team:a", "m-a", query, 10);
    expect(reads).toEqual(["semantic-scope-half"]);
    expect(got.map((g) => g.id)).toEqual(expected.slice(0, 10).map((e) => e.id));
    for (const [i, g] of got.entries()) expect(g.dist).toBeCloseTo(expected[i]!.d, 6);
  });

  it("orders by full precision vectors that half precision cannot tell apart", async () => {
    // Near copies of one vector: their distances differ far below half precision's resolution.
    const base = vec(42);
    const vectors = Array.from({ length: 40 }, (_, i) => base.map((v, j) => v + (j === 0 ? (40 - i) * 2e-5 : 0)));
    const ids = await seed("team:b", "m-b", vectors);
    const query = base.map((v, j) => (j === 0 ? v - 1 : v));
    const expected = ids.map((id, i) => ({ id, d: cosDist(vectors[i]!, query) })).sort((x, y) => x.d - y.d);
    const { got, reads } = await knn("team:b", "m-b", query, 5);
    expect(reads).toEqual(["semantic-scope-half"]);
    expect(got.map((g) => g.id)).toEqual(expected.slice(0, 5).map((e) => e.id));
  });

  it("is exact when more records than its pool lie within half precision's error of the n-th", async () => {
    // 150 near copies (the pool for n = 1 holds 52): the answer is read at full precision.
    const base = vec(7);
    const vectors = Array.from({ length: 150 }, (_, i) => base.map((v, j) => v + (j === 1 ? (150 - i) * 2e-5 : 0)));
    const ids = await seed("team:c", "m-c", vectors);
    const query = base.map((v, j) => (j === 1 ? v - 1 : v));
    const expected = ids.map((id, i) => ({ id, d: cosDist(vectors[i]!, query) })).sort((x, y) => x.d - y.d);
    const { got, reads } = await knn("team:c", "m-c", query, 1);
    expect(reads).toEqual(["semantic-scope-half", "semantic-scope"]);
    expect(got.map((g) => g.id)).toEqual([expected[0]!.id]);
  });
});
