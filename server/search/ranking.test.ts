/**
 * Search that answers questions: BM25 OR ranking (idf from the indexed step, length
 * normalisation, phrase boost), turn windows with their turn numbers, the relevance floor, and
 * the posting index following each branch's pointers.
 * Real PGlite, the real engine and indexing; no model (operators only).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Pipeline } from "../pipeline/sdk";
import type { Db } from "../core/db";
import type { SourceItem } from "../core/source-item";
import { createBranch, deleteBranch } from "../services/branches";
import { appendSourceRecords, createPipeline, getBranch } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { indexPipeline } from "./indexing";
import { search, type SearchInput } from "./search";

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let notes: string;
let chats: string;

async function pipelineWith(name: string, spec: Pipeline, source: string, items: SourceItem[]) {
  const { pipeline } = await createPipeline(db, workspaceId, { name, spec: spec.toSpec() });
  await appendSourceRecords(db, pipeline.id, source, items);
  const run = await runPipeline(db, { workspaceId, pipelineId: pipeline.id });
  expect(run.status).toBe("completed");
  return pipeline.id;
}

const NOTES: Record<string, string> = {
  phrase: "The rust borrow checker rejected my code again today.",
  scattered: "In rust the checker complained: I tried to borrow a value twice.",
  borrowShort: "I had to borrow a ladder.",
  borrowLong: "After planting tomatoes, beans and peas and fixing the fence, we had to borrow a ladder from the neighbours.",
  rust1: "Rust on my bike chain.",
  rust2: "The rust belt has old factories.",
  rust3: "Rust is a fast language.",
  rust4: "Rust never sleeps.",
  rust5: "Rust-coloured leaves.",
  rust6: "Rust remover works.",
  unrelated: "Sourdough starter smells like acetone.",
};

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  ({ workspace: { id: workspaceId } } = await signUp(db, { email: "ranking@example.com", password: "ranking-password-1" }));
  notes = await pipelineWith(
    "notes",
    new Pipeline("notes").source("notes", { format: "jsonl" }).transform("clean", { from: "notes", operator: { kind: "identity" } }).output("search", { from: "clean", surface: "search" }),
    "notes",
    Object.entries(NOTES).map(([id, content]) => ({ externalId: id, content, metadata: { chat: { conversation_id: id } } })),
  );
  const turns = [
    "user: Hi! How was your weekend?",
    "assistant: Great, I went to the LGBTQ support group on Sunday, it was really moving.",
    "user: That sounds powerful. What did you talk about?",
    "assistant: Transgender stories, mostly. Then I went painting by the lake.",
    "user: I love that. See you soon!",
  ];
  chats = await pipelineWith(
    "chats",
    new Pipeline("chats")
      .source("chats", { format: "jsonl" })
      .transform("transcripts", { from: "chats", operator: { kind: "identity" } })
      .split("windows", { from: "transcripts", operator: { kind: "turns", size: 3, stride: 1 } })
      .output("search", { from: ["transcripts", "windows"], surface: "search" }),
    "chats",
    [
      { externalId: "c1", content: `# Weekend\n2023-05-08\n\n${turns.join("\n\n")}`, metadata: { time: { created_at: "2023-05-08T13:56:00Z" }, chat: { conversation_id: "c1" } } },
      { externalId: "c2", content: "# Groceries\n\nuser: We need milk and eggs.\n\nassistant: And bread for the week.", metadata: { chat: { conversation_id: "c2" } } },
    ],
  );
}, 120_000);
afterAll(async () => close());

const q = (pipelineId: string, query: string, extra: Partial<SearchInput> = {}) => search(db, { workspaceId, pipelineId, query, ...extra });
const noteOf = (h: { metadata: Record<string, unknown> }) => (h.metadata.chat as { conversation_id: string }).conversation_id;

describe("BM25 ranking (fts)", () => {
  it("orders a hand-built corpus as BM25 says: phrase, all words, rare word in a short record, rare word in a long one, common word", async () => {
    const res = await q(notes, "rust borrow checker", { mode: "fts" });
    const order = res.hits.map(noteOf);
    // phrase: all three words adjacent (phrase boost) beats the same words scattered.
    expect(order.slice(0, 2)).toEqual(["phrase", "scattered"]);
    // "borrow" (4 records) is rarer than "rust" (8): higher idf; a short record beats a longer one (length normalisation).
    expect(order.slice(2, 4)).toEqual(["borrowShort", "borrowLong"]);
    expect(new Set(order.slice(4))).toEqual(new Set(["rust1", "rust2", "rust3", "rust4", "rust5", "rust6"]));
    expect(order).not.toContain("unrelated");
    // Scores are normalised: 0 < score ≤ ~1, decreasing.
    const scores = res.hits.map((h) => h.score.fts!);
    expect(scores[0]).toBeLessThanOrEqual(1.5);
    expect(scores.every((s, i) => s > 0 && (i === 0 || s <= scores[i - 1]!))).toBe(true);
  });

  it("a question with words absent from the record still finds it by its other words", async () => {
    // "when", "did", "go" are stop words or absent; "meeting" and "last" are in no record at all.
    const res = await q(chats, "When did she go to the LGBTQ support group meeting last weekend?", { mode: "fts" });
    expect(res.hits.length).toBeGreaterThan(0);
    expect(res.hits[0]!.content).toContain("LGBTQ support group");
    expect(res.hits.some((h) => h.content.includes("milk and eggs"))).toBe(false);
  });

  it("exact stays literal: the words in another order are not a match", async () => {
    const exact = await q(notes, "borrow checker rust", { exact: true, step: "clean" });
    expect(exact.hits).toHaveLength(0);
    const literal = await q(notes, "rust borrow checker", { exact: true, step: "clean" });
    expect(literal.hits.map(noteOf)).toEqual(["phrase"]);
  });
});

describe("turn windows", () => {
  it("cut a transcript into overlapping 3-turn windows whose metadata names the turns, found unscoped with the transcript as a lower hit", async () => {
    const res = await q(chats, "LGBTQ support group", { mode: "fts" });
    const top = res.hits[0]!;
    expect(top.step).toBe("windows");
    const turns = (top.metadata.custom as { turns: number[] }).turns;
    expect(turns).toHaveLength(3);
    expect(turns).toContain(2);
    // The window repeats the conversation's header, so its date and title are searchable in it.
    expect(top.content).toContain("# Weekend");
    expect(top.lowerHits.map((h) => h.step)).toContain("transcripts");
    // 5 turns, stride 1, size 3: windows start at turns 1, 2, 3.
    const all = await q(chats, "weekend", { step: "windows", mode: "fts", limit: 50 });
    const starts = all.hits.map((h) => (h.metadata.custom as { turns: number[] }).turns[0]).sort();
    expect(starts).toEqual([1, 2, 3]);
  });
});

describe("relevance floor", () => {
  it("hybrid returns nothing for a query that shares no words or meaning with any record", async () => {
    for (const pipelineId of [notes, chats]) {
      const res = await q(pipelineId, "xylophone quasar zeppelin", { mode: "hybrid" });
      expect(res.hits).toEqual([]);
    }
    // …and so does semantic search: its floor (fusion.semanticFloor) keeps nearest neighbours that
    // mean nothing out, and says so.
    const sem = await q(notes, "xylophone quasar zeppelin", { mode: "semantic" });
    expect([sem.hits, sem.noMatch]).toEqual([[], true]);
    const cut = await q(notes, "xylophone quasar zeppelin", { mode: "semantic", minScore: 0.3 });
    expect(cut.hits).toEqual([]);
  });

  it("a related question still gets hybrid results, relevance ordered", async () => {
    const res = await q(notes, "which language has a borrow checker?", { mode: "hybrid" });
    expect(res.hits.length).toBeGreaterThan(0);
    expect(["phrase", "scattered"]).toContain(noteOf(res.hits[0]!));
  });
});

describe("dates named in the query", () => {
  it("boost by default, filter on request, and say which range they read", async () => {
    const boosted = await q(chats, "what did we need for the week in May 2023?", { mode: "fts" });
    expect(boosted.dateRange).toMatchObject({ from: "2023-05-01T00:00:00.000Z", use: "boost" });
    // The groceries chat (no date) still matches its words; the filter keeps only May 2023.
    expect(boosted.hits.some((h) => h.content.includes("milk and eggs"))).toBe(true);
    const filtered = await q(chats, "what did we need for the week in May 2023?", { mode: "fts", dates: "filter" });
    expect(filtered.hits.length).toBeGreaterThan(0);
    expect(filtered.hits.every((h) => (h.metadata.time as { created_at: string }).created_at.startsWith("2023-05"))).toBe(true);
    const off = await q(chats, "what did we need in May 2023?", { mode: "fts", dates: "off" });
    expect(off.dateRange).toBeUndefined();
  });
});

describe("the BM25 index (postings per branch and step)", () => {
  const postings = async (branchId: string, step: string, recordId?: string) =>
    (
      await db.$queryRawUnsafe<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM "SearchPosting" WHERE "branchId" = $1 AND step = $2 AND ($3::text IS NULL OR "recordId" = $3)`,
        branchId,
        step,
        recordId ?? null,
      )
    )[0]!.n;

  it("follows the branch's pointers: a record that leaves the branch is never returned, and its postings go at the next index", async () => {
    await indexPipeline(db, notes);
    const { branch } = await getBranch(db, notes);
    const before = await q(notes, "sourdough acetone", { mode: "fts" });
    const gone = before.hits[0]!;
    expect(noteOf(gone)).toBe("unrelated");
    expect(await postings(branch.id, "clean", gone.id)).toBeGreaterThan(0);
    await db.$executeRawUnsafe(`DELETE FROM "BranchPointer" WHERE "branchId" = $1 AND "recordId" = $2`, branch.id, gone.id);
    // Not yet re-indexed: the postings are behind the pointers, the search is not.
    expect((await q(notes, "sourdough acetone", { mode: "fts" })).hits).toEqual([]);
    const result = await indexPipeline(db, notes);
    expect(result.lexicalStats).toEqual(["clean"]);
    expect(await postings(branch.id, "clean", gone.id)).toBe(0);
    // Unchanged pointers: nothing recomputed.
    expect((await indexPipeline(db, notes)).lexicalStats).toEqual([]);
  });

  it("a branch gets its own index, and deleting the branch deletes its index and statistics", async () => {
    const { branch } = await createBranch(db, notes, { name: "index-test" });
    // The index comes with the pointers: the new branch searches like main before any index run of its own.
    expect(await postings(branch.id, "clean")).toBeGreaterThan(0);
    const res = await q(notes, "rust borrow checker", { mode: "fts", branch: "index-test" });
    expect(res.hits.map(noteOf).slice(0, 2)).toEqual(["phrase", "scattered"]);
    await indexPipeline(db, notes, "index-test");
    await deleteBranch(db, notes, "index-test");
    const left = await db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT ((SELECT count(*) FROM "SearchPosting" WHERE "branchId" = $1) + (SELECT count(*) FROM "SearchDoc" WHERE "branchId" = $1)
        + (SELECT count(*) FROM "SearchTermStat" WHERE "branchId" = $1) + (SELECT count(*) FROM "SearchStepStat" WHERE "branchId" = $1))::int AS n`,
      branch.id,
    );
    expect(left[0]!.n).toBe(0);
  });

  it("a record that leaves the branch gives its place to the next in rank: the branch check runs down the ranking until the limit is filled", async () => {
    await indexPipeline(db, notes);
    const { branch } = await getBranch(db, notes);
    const ranked = (await q(notes, "rust", { mode: "fts", step: "clean", limit: 8 })).hits;
    expect(ranked.length).toBeGreaterThanOrEqual(5);
    const gone = ranked[0]!;
    expect(noteOf(gone)).toMatch(/^rust\d$/);
    await db.$executeRawUnsafe(`DELETE FROM "BranchPointer" WHERE "branchId" = $1 AND "recordId" = $2`, branch.id, gone.id);
    // Not yet re-indexed: its postings still rank it first; the three after it fill the three places.
    const after = await q(notes, "rust", { mode: "fts", step: "clean", limit: 3 });
    expect(after.hits.map((h) => h.id)).toEqual(ranked.slice(1, 4).map((h) => h.id));
  });
});
