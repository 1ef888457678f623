/**
 * The BM25 posting index kept incrementally (document frequencies moved by what joins and leaves,
 * impacts stored per posting) and frequent terms read only down to their best postings by impact.
 * Real PGlite, the real engine and indexing; no model.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Pipeline } from "../pipeline/sdk";
import type { Db } from "../core/db";
import { createBranch } from "../services/branches";
import { appendSourceRecords, createPipeline } from "../services/pipelines";
import { purgeRecord } from "../services/purge";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { postingScores, type TermWeight } from "../store/lexical-scores";
import { onBranch, Params } from "../store/record-sql";
import { TIME_EXPR } from "../store/search-reads";
import { createTestDb } from "../store/test-db";
import { resolveBranch } from "./context";
import { indexPipeline } from "./indexing";
import { BM25_B, BM25_K1, CANDIDATE_BUDGET, idf, loadTermStats, refreshLexicalStats, withListDepths, withoutNegligible } from "./lexical";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;

const filler = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(" ");
/** 30 notes about the garden (the frequent term, more often and in shorter notes first), 3 about tomatoes. */
const NOTES = [
  ...Array.from({ length: 30 }, (_, i) => ({ externalId: `g${i}`, content: `${"garden ".repeat(1 + (i % 3))}${filler(2 + i)}` })),
  { externalId: "t-short", content: "tomato seedlings" },
  { externalId: "t-garden", content: `tomato ${filler(60)} garden` },
  { externalId: "t-long", content: `tomato ${filler(80)}` },
];

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "lexical@example.com", password: "lexical-password-1" }));
  const spec = new Pipeline("notes").source("notes", { format: "jsonl" }).transform("clean", { from: "notes", operator: { kind: "identity" } }).output("search", { from: "clean", surface: "search" });
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "notes", spec: spec.toSpec() }));
  await appendSourceRecords(db, pipelineId, "notes", NOTES);
  expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
  await indexPipeline(db, pipelineId);
}, 120_000);
afterAll(async () => close());

/** Document frequencies as stored, and as a recount of the postings would give them. */
async function frequencies(branchId: string) {
  const stored = await db.$queryRawUnsafe<Array<{ term: string; df: number }>>(
    `SELECT term, df FROM "SearchTermStat" WHERE "branchId" = $1 AND step = 'clean' ORDER BY term`,
    branchId,
  );
  const counted = await db.$queryRawUnsafe<Array<{ term: string; df: number }>>(
    `SELECT term, count(*)::int AS df FROM "SearchPosting" WHERE "branchId" = $1 AND step = 'clean' GROUP BY term ORDER BY term`,
    branchId,
  );
  return { stored, counted };
}

describe("the posting index, kept incrementally", () => {
  it("moves document frequencies by the records that join and leave, equal to a recount", async () => {
    const ctx = await resolveBranch(db, workspaceId, pipelineId);
    const before = await frequencies(ctx.branchId);
    expect(before.stored).toEqual(before.counted);
    expect(before.stored.find((t) => t.term === "tomato")?.df).toBe(3);

    // Two records join (a run over new sources), then two leave the branch.
    await appendSourceRecords(db, pipelineId, "notes", [
      { externalId: "t-new", content: "tomato sauce recipe" },
      { externalId: "g-new", content: "garden party" },
    ]);
    expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
    await indexPipeline(db, pipelineId);
    const joined = await frequencies(ctx.branchId);
    expect(joined.stored).toEqual(joined.counted);
    expect(joined.stored.find((t) => t.term === "tomato")?.df).toBe(4);
    expect(joined.stored.find((t) => t.term === "sauc")?.df).toBe(1);

    await db.$executeRawUnsafe(
      `DELETE FROM "BranchPointer" p USING "Record" r WHERE p."branchId" = $1 AND p.step = 'clean' AND r.id = p."recordId" AND r.content IN ('tomato sauce recipe', 'tomato seedlings')`,
      ctx.branchId,
    );
    expect(await refreshLexicalStats(db, workspaceId, ctx.branchId, ["clean"])).toEqual(["clean"]);
    const left = await frequencies(ctx.branchId);
    expect(left.stored).toEqual(left.counted);
    expect(left.stored.find((t) => t.term === "tomato")?.df).toBe(2);
    // A term no record holds any more has no statistic left.
    expect(left.stored.find((t) => t.term === "sauc")).toBeUndefined();
    expect(left.stored.find((t) => t.term === "seedl")).toBeUndefined();
    // The refresh left fresh planner statistics (PGlite has no autovacuum to do it).
    const [analyzed] = await db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE relname IN ('SearchPosting', 'SearchTermStat', 'SearchDoc') AND last_analyze IS NOT NULL`,
    );
    expect(analyzed!.n).toBe(3);
    // Nothing changed since: nothing is recomputed.
    expect(await refreshLexicalStats(db, workspaceId, ctx.branchId, ["clean"])).toEqual([]);
  });

  it("keeps document frequencies equal to a recount when a record is purged from every branch", async () => {
    const ctx = await resolveBranch(db, workspaceId, pipelineId);
    const source = await db.record.findFirstOrThrow({ where: { pipelineId, step: "notes", content: { startsWith: "tomato word0" }, NOT: { content: { endsWith: "garden" } } } });
    const before = await frequencies(ctx.branchId);
    const tomato = before.stored.find((t) => t.term === "tomato")!.df;
    await purgeRecord(db, { workspaceId, actor: "user:test", dryRun: false }, source.id);
    const after = await frequencies(ctx.branchId);
    expect(after.stored).toEqual(after.counted);
    expect(after.stored.find((t) => t.term === "tomato")?.df).toBe(tomato - 1);
    // The next index refresh sees the pointer change and leaves the frequencies as they are.
    await indexPipeline(db, pipelineId);
    const refreshed = await frequencies(ctx.branchId);
    expect(refreshed.stored).toEqual(after.stored);
  });

  it("stores each posting's impact: more occurrences and a shorter record weigh more", async () => {
    const ctx = await resolveBranch(db, workspaceId, pipelineId);
    const rows = await db.$queryRawUnsafe<Array<{ tf: number; len: number; impact: number }>>(
      `SELECT tf, len, impact FROM "SearchPosting" WHERE "branchId" = $1 AND step = 'clean' AND term = 'garden' ORDER BY impact DESC`,
      ctx.branchId,
    );
    expect(rows.length).toBeGreaterThan(30);
    for (const r of rows) expect(r.impact).toBeGreaterThan(0);
    for (const r of rows) expect(r.impact).toBeLessThan(BM25_K1 + 1);
    const best = rows[0]!;
    const worst = rows.at(-1)!;
    expect(best.tf).toBeGreaterThanOrEqual(worst.tf);
    expect(best.len).toBeLessThan(worst.len);
    // A new branch starts with its origin's index, impacts included.
    const { branch } = await createBranch(db, pipelineId, { name: "impacts" });
    const copied = await db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM "SearchPosting" a JOIN "SearchPosting" b ON b."branchId" = $2 AND b.step = a.step AND b.term = a.term AND b."recordId" = a."recordId"
       WHERE a."branchId" = $1 AND a.impact = b.impact AND b.impact > 0`,
      ctx.branchId,
      branch.id,
    );
    const all = await db.searchPosting.count({ where: { branchId: ctx.branchId } });
    expect(copied[0]!.n).toBe(all);
  });
});

describe("frequent terms read down to their best postings", () => {
  async function rank(query: string[], lim: number | null, n = 5, truncated = "garden", pipeline = pipelineId) {
    const ctx = await resolveBranch(db, workspaceId, pipeline);
    const stats = (await loadTermStats(db, ctx.branchId, ["clean"], query)).get("clean")!;
    const weights: TermWeight[] = query
      .filter((t) => stats.df.has(t))
      .map((t) => ({ step: "clean", lexeme: t, idf: idf(stats.docs, stats.df.get(t)!), avg: stats.avg, selects: true, lim: t === truncated ? lim : null }));
    const params = new Params();
    return postingScores(db, {
      branchId: ctx.branchId,
      weights,
      phrases: [],
      bm25: { k1: BM25_K1, b: BM25_B },
      n,
      rescore: n,
      recordFilters: [],
      where: [`r."workspaceId" = ${params.add(workspaceId)}`, onBranch(params, ctx.branchId, ["clean"])],
      params,
      timeExpr: TIME_EXPR,
    });
  }

  it("gives the exact ranking, and a record found by a rare term still gets the frequent term's weight", async () => {
    // lim ≥ n, as search always asks (a list is read to rescore ≥ n at least): the lists hold n records at least.
    const exact = await rank(["tomato", "garden"], null, 3);
    const truncated = await rank(["tomato", "garden"], 3, 3);
    expect(truncated.map((h) => h.id)).toEqual(exact.map((h) => h.id));
    for (let i = 0; i < exact.length; i++) expect(truncated[i]!.score).toBeCloseTo(exact[i]!.score, 9);
    // "tomato … garden" holds both terms: first, with garden's weight added by probe (garden's
    // best three postings are short garden notes, not this long one).
    const both = await db.record.findFirst({ where: { pipelineId, step: "clean", content: { startsWith: "tomato word0" }, NOT: { content: { endsWith: "word79" } } } });
    expect(truncated[0]!.id).toBe(both!.id);
    const tomatoOnly = await rank(["tomato"], null, 10);
    expect(truncated[0]!.score).toBeGreaterThan(tomatoOnly.find((h) => h.id === both!.id)!.score);
  });

  it("still looks a truncated term up in a record that holds it at exactly the impact where the read stopped", async () => {
    // A record a term's read did not reach cannot hold the term when even one occurrence would
    // weigh more than the last posting read: such records are not looked up. Here plant notes of
    // one shape (three words) tie: 3 with plant twice, 20 with it once, and 3 zucchini notes with it
    // once too. A read of plant that stops inside the tie, just before a zucchini note by record
    // id, did not reach that note, and it holds plant all the same.
    const notes = [
      ...Array.from({ length: 3 }, (_, i) => ({ externalId: `p2-${i}`, content: `plant plant stem${i} leaf${i}` })),
      ...Array.from({ length: 20 }, (_, i) => ({ externalId: `p1-${i}`, content: `plant stem${i + 3} leaf${i + 3}` })),
      ...Array.from({ length: 3 }, (_, i) => ({ externalId: `z-${i}`, content: `zucchini zucchini plant vine${i}` })),
    ];
    const spec = new Pipeline("plants").source("notes", { format: "jsonl" }).transform("clean", { from: "notes", operator: { kind: "identity" } }).output("search", { from: "clean", surface: "search" });
    const { pipeline } = await createPipeline(db, workspaceId, { name: "plants", spec: spec.toSpec() });
    await appendSourceRecords(db, pipeline.id, "notes", notes);
    expect((await runPipeline(db, { workspaceId, pipelineId: pipeline.id })).status).toBe("completed");
    await indexPipeline(db, pipeline.id);
    const ctx = await resolveBranch(db, workspaceId, pipeline.id);
    const list = await db.$queryRawUnsafe<Array<{ content: string; impact: number }>>(
      `SELECT r.content, p.impact FROM "SearchPosting" p JOIN "Record" r ON r.id = p."recordId"
       WHERE p."branchId" = $1 AND p.step = 'clean' AND p.term = 'plant' ORDER BY p.impact DESC, p."recordId"`,
      ctx.branchId,
    );
    const last = list.findLastIndex((p) => p.content.startsWith("zucchini"));
    // Behind the three notes with plant twice and the two other zucchini notes: the read stops inside the tie.
    expect(last).toBeGreaterThanOrEqual(5);
    expect(list[last - 1]!.impact).toBe(list[last]!.impact);
    const exact = await rank(["zucchini", "plant"], null, 3, "plant", pipeline.id);
    const truncated = await rank(["zucchini", "plant"], last, 3, "plant", pipeline.id);
    // The three zucchini notes, each with plant's weight (equal scores: compared by id, as a sum
    // rounded in two parts may differ from one rounded whole in the last digit).
    const scores = new Map(truncated.map((h) => [h.id, h.score]));
    expect([...scores.keys()].sort()).toEqual(exact.map((h) => h.id).sort());
    for (const h of exact) expect(scores.get(h.id)).toBeCloseTo(h.score, 9);
    for (const h of exact) expect(h.score).toBeCloseTo(exact[0]!.score, 9);
  });

  it("reads a frequent term alone only down to its best records, best first", async () => {
    const exact = await rank(["garden"], null, 2);
    const truncated = await rank(["garden"], 2, 2);
    expect(truncated.map((h) => h.id)).toEqual(exact.map((h) => h.id));
    expect(truncated).toHaveLength(2);
    // A list shorter than its depth is read whole: nothing is left below it to look up.
    const whole = await rank(["tomato", "garden"], 1000, 3);
    expect(whole.map((h) => [h.id, h.score])).toEqual((await rank(["tomato", "garden"], null, 3)).map((h) => [h.id, h.score]));
  });
});

describe("terms in nearly every record", () => {
  it("leave scoring when they weigh under a thousandth of the query, step by step; a term alone stays", () => {
    const docs = 300_000;
    const w = (step: string, df: number) => ({ step, idf: idf(docs, df), df });
    // "assistant" in every transcript: idf ≈ 1.7e-6, against "kayak"'s ≈ 3.
    const everywhere = w("transcripts", docs);
    const half = w("transcripts", docs / 2);
    const kayak = w("transcripts", 15_000);
    expect(withoutNegligible([everywhere, half, kayak])).toEqual([half, kayak]);
    // In another step the same word is rare: kept there.
    const rareThere = w("summaries", 10);
    expect(withoutNegligible([everywhere, kayak, rareThere])).toEqual([kayak, rareThere]);
    // A query of that word alone still matches on it.
    expect(withoutNegligible([everywhere])).toEqual([everywhere]);
    expect(withoutNegligible([everywhere, w("transcripts", docs - 1)])).toHaveLength(2);
  });
});

describe("how deep each list is read over the whole branch", () => {
  it("splits the candidate budget over the query's lists, never below rescore, and reads short lists whole", () => {
    const list = (df: number) => ({ df, lim: null as number | null });
    expect(withListDepths([list(55_000)], 200)[0]!.lim).toBe(CANDIDATE_BUDGET);
    // Three words over three steps: nine lists, each read to a ninth of the budget.
    expect(withListDepths(Array.from({ length: 9 }, () => list(55_000)), 200).map((w) => w.lim)).toEqual(Array(9).fill(Math.floor(CANDIDATE_BUDGET / 9)));
    // Never below what the rescoring needs.
    expect(withListDepths(Array.from({ length: 40 }, () => list(55_000)), 200)[0]!.lim).toBe(200);
    // A list up to twice its depth is read whole: as cheap as stopping early.
    expect(withListDepths([list(55_000), list(1000)], 200).map((w) => w.lim)).toEqual([1000, null]);
  });
});
