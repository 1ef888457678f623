import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { inheritedMetadata } from "../engine/step-context";
import type { EngineRecord } from "../engine/types";
import type { SourceItem } from "../core/source-item";
import { Pipeline } from "../pipeline/sdk";
import { appendSourceRecords, createPipeline } from "../services/pipelines";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { createTestDb } from "../store/test-db";
import { indexPipeline } from "./indexing";
import { mentionLabel, mentionsInMetadata } from "./relative-dates";
import { search, type SearchInput } from "./search";

/**
 * Date windows (issue 39): hand-written sessions of one conversation. The evidence for "on 1 May,
 * 2022" is a session of 2 May that says "last night"; sessions with more of the question's words
 * come from other days.
 */
const SESSIONS: Array<{ id: string; date: string; text: string }> = [
  { id: "evidence", date: "2022-05-02T19:00:00Z", text: "Joanna: I watched a movie last night, Eternal Sunshine. Nate: Good pick, it is a lovely one!" },
  { id: "movies-march", date: "2022-03-10T19:00:00Z", text: "Joanna: I watched a movie about dragons. Nate: Sounds fun." },
  { id: "movies-june", date: "2022-06-20T19:00:00Z", text: "Nate: Joanna, seen a movie lately? Joanna: No, I was busy." },
  { id: "marathon", date: "2022-05-22T19:00:00Z", text: "Joanna: Three weeks ago I ran my first race, in the rain. Nate: Well done." },
  { id: "race-march", date: "2022-03-01T19:00:00Z", text: "Joanna: I ran a race, it was a hard one. Nate: Cool." },
  { id: "painting", date: "2022-06-05T19:00:00Z", text: "Joanna: I finished my painting last month, the sea at dawn. Nate: Show me." },
  { id: "painting-jan", date: "2022-01-12T19:00:00Z", text: "Joanna: I finished a painting. Nate: Nice." },
];

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let pipelineId: string;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { workspace } = await signUp(db, { email: "dates@example.com", password: "dates-password-1" });
  workspaceId = workspace.id;
  const spec = new Pipeline("dated")
    .source("chats", { format: "jsonl" })
    .transform("transcripts", { from: "chats", operator: { kind: "identity" } })
    .output("search", { from: ["transcripts"], surface: "search" })
    .toSpec();
  pipelineId = (await createPipeline(db, workspaceId, { name: "dated", spec })).pipeline.id;
  const items: SourceItem[] = SESSIONS.map((s) => ({ externalId: s.id, scope: "joanna", content: s.text, metadata: { time: { created_at: s.date } } }));
  await appendSourceRecords(db, pipelineId, "chats", items);
  const run = await runPipeline(db, { workspaceId, pipelineId }, { runOptions: { retryBaseMs: 1 }, afterRun: false });
  expect(run.status).toBe("completed");
  const indexed = await indexPipeline(db, pipelineId);
  expect(indexed.dateScanned).toBe(SESSIONS.length);
}, 120_000);
afterAll(async () => close());

const q = async (query: string, extra: Partial<SearchInput> = {}) => {
  const r = await search(db, { workspaceId, pipelineId, query, mode: "fts", step: "transcripts", ...extra });
  return r.hits.map((h) => SESSIONS.find((s) => s.text === h.content)!.id);
};

describe("relative dates at index time", () => {
  it("stores each session's resolved phrases in metadata.time.mentions, and scans a record once", async () => {
    const rows = await db.record.findMany({ where: { pipelineId, step: "transcripts" }, select: { content: true, metadata: true, contentFingerprint: true } });
    const row = (id: string) => rows.find((r) => r.content === SESSIONS.find((s) => s.id === id)!.text)!;
    const of = (id: string) => mentionsInMetadata(row(id).metadata, row(id).contentFingerprint);
    expect(of("evidence")).toEqual([{ text: "last night", from: "2022-05-01", to: "2022-05-01" }]);
    expect(of("painting")).toEqual([{ text: "last month", from: "2022-05-01", to: "2022-05-31" }]);
    expect(of("marathon")).toEqual([{ text: "Three weeks ago", from: "2022-04-28", to: "2022-05-04" }]);
    expect(of("movies-march")).toEqual([]);
    expect(of("painting").map(mentionLabel)).toEqual(["last month → 2022-05-01 – 2022-05-31"]);
    // Copied onto a record with other content, they are not its own.
    expect(mentionsInMetadata(row("evidence").metadata, "another-fingerprint")).toEqual([]);
    expect((await indexPipeline(db, pipelineId)).dateScanned).toBe(0);
  });
});

describe("date windows", () => {
  it("a question naming a day ranks the next day's 'last night' session first, and only with the boost", async () => {
    const question = "What movie did Joanna watch on 1 May, 2022?";
    expect((await q(question))[0]).toBe("evidence");
    expect((await q(question, { dates: "off" }))[0]).not.toBe("evidence");
  });

  it("a session dated after the window counts when its resolved mention falls on the day", async () => {
    const question = "Which race did Joanna run on May 1st 2022?";
    expect((await q(question))[0]).toBe("marathon");
    expect((await q(question, { dates: "off" }))[0]).toBe("race-march");
  });

  it("a question naming a month boosts sessions of that month and the two weeks after", async () => {
    const question = "What painting did Joanna finish in May 2022?";
    expect((await q(question))[0]).toBe("painting");
    expect((await q(question, { dates: "off" }))[0]).toBe("painting-jan");
  });

  it("a relative time in the question resolves against asOf", async () => {
    const question = "What movie did Joanna watch last night?";
    expect((await q(question, { asOf: "2022-05-02T21:00:00Z" }))[0]).toBe("evidence");
    // Asked today, "last night" is years after every session: no boost.
    expect(await q(question)).toEqual(await q(question, { dates: "off" }));
    await expect(q(question, { asOf: "not a date" })).rejects.toThrow(/asOf must be an ISO date/);
  });

  it("a question without a date ranks exactly as with dates off", async () => {
    for (const question of ["What movie did Joanna watch?", "Did Joanna run a race?", "painting"]) {
      const on = await search(db, { workspaceId, pipelineId, query: question, mode: "fts", step: "transcripts" });
      const off = await search(db, { workspaceId, pipelineId, query: question, mode: "fts", step: "transcripts", dates: "off" });
      expect(on.dateRange).toBeUndefined();
      expect(on.hits.map((h) => [h.id, h.score.fused])).toEqual(off.hits.map((h) => [h.id, h.score.fused]));
    }
  });
});

describe("derived records", () => {
  it("do not inherit their source's resolved mentions (they are scanned on their own text)", () => {
    const source = { id: "s", content: "x", scope: "", metadata: { time: { created_at: "2022-05-02T19:00:00Z", mentions: [{ text: "last night", from: "2022-05-01", to: "2022-05-01" }], mentions_of: "f" } } };
    expect(inheritedMetadata([source as unknown as EngineRecord])).toEqual({ time: { created_at: "2022-05-02T19:00:00Z" } });
  });
});
