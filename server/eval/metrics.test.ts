import { describe, expect, it } from "vitest";
import { contextCut, estimateContextTokens, meanMetrics, percentile, rankedSessions, scoreCase, tokenF1, type TracedHit } from "./metrics";
import { Bm25Index, bm25Terms } from "../text/bm25";
import { applySplitOperator } from "../engine/operators";

const hit = (id: string, sessions: string[], turns: string[], tokens = 100, reachesSource = true, content = ""): TracedHit => ({ id, sessions, turns, tokens, reachesSource, content });

describe("retrieval metrics on hand-built cases", () => {
  // Gold: turns D2:1 and D4:3 (sessions 2 and 4).
  const evidence = ["D2:1", "D4:3"];
  const evidenceSessions = ["2", "4"];
  const hits = [
    hit("a", ["1"], ["D1:1", "D1:2"]),
    hit("b", ["1"], ["D1:3"]),
    hit("c", ["2"], ["D2:1", "D2:2"]),
    hit("d", ["3"], ["D3:1"], 100, false),
    hit("e", ["5"], ["D5:1"]),
    hit("f", ["4"], ["D4:3"]),
  ];
  const m = scoreCase({ evidence, evidenceSessions, hits });

  it("session_hit@k looks at the top k distinct sessions", () => {
    expect(rankedSessions(hits)).toEqual(["1", "2", "3", "5", "4"]);
    expect(m["session_hit@1"]).toBe(0);
    expect(m["session_hit@3"]).toBe(1);
    expect(m["session_hit@5"]).toBe(1);
  });

  it("session_recall@5 is the share of evidence sessions in the top 5 sessions", () => {
    expect(m["session_recall@5"]).toBe(1);
    const fewer = scoreCase({ evidence, evidenceSessions, hits: hits.slice(0, 4) });
    expect(fewer["session_recall@5"]).toBe(0.5);
  });

  it("evidence_recall@10 counts gold turns covered by the top 10 records", () => {
    expect(m["evidence_recall@10"]).toBe(1);
    expect(scoreCase({ evidence, evidenceSessions, hits: hits.slice(0, 3) })["evidence_recall@10"]).toBe(0.5);
  });

  it("precision@5 is the share of the top 5 that hold a gold turn; mrr the first such rank", () => {
    expect(m["precision@5"]).toBe(0.2);
    expect(m.mrr).toBeCloseTo(1 / 3);
    expect(scoreCase({ evidence, evidenceSessions, hits: [hits[0]!] }).mrr).toBe(0);
  });

  it("provenance_completeness is the share of hits whose lineage reaches a source", () => {
    expect(m.provenance_completeness).toBeCloseTo(5 / 6);
  });

  it("evidence_recall@2k cuts the context at 2,000 tokens in rank order, always counting the first record", () => {
    const big = [hit("huge", ["2"], ["D2:1", "D4:3"], 5000), hit("x", ["4"], ["D4:3"], 10)];
    const cut = scoreCase({ evidence, evidenceSessions, hits: big });
    expect(cut["evidence_recall@2k"]).toBe(1); // the first record counts even over budget
    expect(cut.context_tokens).toBe(5000); // and nothing after it

    const many = [hit("p", ["1"], ["D1:1"], 1500), hit("q", ["2"], ["D2:1"], 400), hit("r", ["4"], ["D4:3"], 200), hit("s", ["4"], ["D4:3"], 50)];
    const s = scoreCase({ evidence, evidenceSessions, hits: many });
    // p (1500) + q (400) = 1900; r would make 2100 → stop (s is not reached either).
    expect(contextCut(many).hits.map((h) => h.id)).toEqual(["p", "q"]);
    expect(s["evidence_recall@2k"]).toBe(0.5);
    expect(s.context_tokens).toBe(1900);
    expect(s["evidence_recall@10"]).toBe(1);
  });

  it("token estimate matches the baseline script (words × 4/3, floored), without heading marks", () => {
    expect(estimateContextTokens("one two three")).toBe(4);
    expect(estimateContextTokens("# 8 May, 2023\n\nAnn: hi there")).toBe(8); // 6 words
  });

  it("temporal_accuracy needs the gold answer's words in the context; freshness the current value first", () => {
    const t = scoreCase({ evidence, evidenceSessions, hits: [hit("t", ["2"], ["D2:1"], 10, true, "On 19 June 2023 she began.")], temporalAnswer: "19 June, 2023" });
    expect(t.temporal_accuracy).toBe(1);
    expect(scoreCase({ evidence, evidenceSessions, hits: [hit("t", ["2"], [], 10, true, "In June she began.")], temporalAnswer: "19 June 2023" }).temporal_accuracy).toBe(0);
    const fresh = (contents: string[]) =>
      scoreCase({ evidence, evidenceSessions, hits: contents.map((c, i) => hit(String(i), ["1"], [], 10, true, c)), freshness: { current: "Lisbon", stale: "Porto" } }).freshness;
    expect(fresh(["unrelated", "She now lives in Lisbon.", "She lived in Porto."])).toBe(1);
    expect(fresh(["She lives in Porto.", "She moved to Lisbon."])).toBe(0);
    expect(fresh(["Lisbonne is in French; Porto was home.", "She moved to Lisbon."])).toBe(0); // whole words only
  });

  it("means leave out metrics no case has; percentiles are nearest-rank", () => {
    expect(meanMetrics([{ mrr: 1, freshness: 1 }, { mrr: 0 }])).toEqual({ mrr: 0.5, freshness: 1 });
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100], 95)).toBe(19);
  });

  it("token F1 ignores case, punctuation and articles", () => {
    expect(tokenF1("The Biscuit!", "biscuit")).toBe(1);
    expect(tokenF1("a golden retriever", "golden dog")).toBeCloseTo(0.5);
    expect(tokenF1("nothing", "biscuit")).toBe(0);
  });
});

describe("BM25 as the baseline script ranks", () => {
  it("stems, drops stop words, and ranks by term weight with length normalisation", () => {
    expect(bm25Terms("When did Caroline go to the running groups?")).toEqual(["carolin", "go", "run", "group"]);
    const index = new Bm25Index([
      "we talked about the weather and the weather again",
      "caroline joined a running group in may",
      "caroline likes painting",
    ]);
    expect(index.rank("When did Caroline join the running group?").map((r) => r.index)).toEqual([1, 2]);
    expect(index.rank("the of and")).toEqual([]);
  });
});

describe("centred turn windows (the baseline's windows)", () => {
  const windows = (content: string, size: number) =>
    applySplitOperator({ kind: "turns", size, stride: 1, centered: true }, content).map((p) => (typeof p === "string" ? p : p.content));
  it("one window per turn with its neighbours, under the header", () => {
    expect(windows("# 8 May, 2023\n\nA: one\n\nB: two\n\nA: three", 3)).toEqual([
      "# 8 May, 2023\n\nA: one\n\nB: two",
      "# 8 May, 2023\n\nA: one\n\nB: two\n\nA: three",
      "# 8 May, 2023\n\nB: two\n\nA: three",
    ]);
    expect(windows("A: one\n\nB: two", 1)).toEqual(["A: one", "B: two"]);
  });
});
