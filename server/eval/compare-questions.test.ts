import { describe, expect, it } from "vitest";
import { QUESTION_OUTCOMES } from "./compare-kinds";
import { questionOutcome, questionOutcomes, type CaseScores } from "./compare-questions";

const c = (questionId: string, hit: number, extra: Partial<CaseScores> = {}): CaseScores => ({
  questionId,
  question: `question ${questionId}?`,
  category: "1",
  sample: "s1",
  scores: { "session_hit@5": hit, "evidence_recall@2k": hit ? 0.2 : 0.9 },
  ...extra,
});

describe("question outcomes (baseline against one run)", () => {
  it("puts each pair of scores in exactly one outcome", () => {
    expect(questionOutcome({ "session_hit@5": 1 }, { "session_hit@5": 0 }, "session_hit@5")).toBe("regressed");
    expect(questionOutcome({ "session_hit@5": 0 }, { "session_hit@5": 1 }, "session_hit@5")).toBe("improved");
    expect(questionOutcome({ "session_hit@5": 0 }, { "session_hit@5": 0 }, "session_hit@5")).toBe("both_wrong");
    expect(questionOutcome({ "session_hit@5": 1 }, { "session_hit@5": 1 }, "session_hit@5")).toBe("both_right");
    // An unmeasured metric is a miss, not a crash; a question one run lacks is apart.
    expect(questionOutcome({}, { "session_hit@5": 1 }, "session_hit@5")).toBe("improved");
    expect(questionOutcome(undefined, { "session_hit@5": 1 }, "session_hit@5")).toBe("only_one");
    // Shares are right from 0.5 on: the same rule both ways (no looser rule for regressions).
    expect(questionOutcome({ "evidence_recall@2k": 0.9 }, { "evidence_recall@2k": 0.3 }, "evidence_recall@2k")).toBe("regressed");
    expect(questionOutcome({ "evidence_recall@2k": 0.3 }, { "evidence_recall@2k": 0.9 }, "evidence_recall@2k")).toBe("improved");
    expect(questionOutcome({ "evidence_recall@2k": 0.9 }, { "evidence_recall@2k": 0.6 }, "evidence_recall@2k")).toBe("both_right");
  });

  it("counts add up to the number of questions, each question once, regressions first", () => {
    const base = [c("q1", 1), c("q2", 0), c("q3", 0), c("q4", 1), c("q5", 1), c("q6", 1, { category: "5" })];
    // q5 is missing from the other run; q7 only in it; q6 repeats (a duplicate row is one question).
    const other = [c("q1", 0), c("q2", 1), c("q3", 0), c("q4", 1), c("q6", 0, { category: "5" }), c("q6", 0, { category: "5" }), c("q7", 1)];
    const out = questionOutcomes(base, other, "session_hit@5");
    expect(out.total).toBe(7);
    expect(out.rows.map((r) => r.questionId).sort()).toEqual(["q1", "q2", "q3", "q4", "q5", "q6", "q7"]);
    expect(out.counts).toEqual({ regressed: 2, improved: 1, both_wrong: 1, both_right: 1, only_one: 2 });
    expect(QUESTION_OUTCOMES.reduce((n, k) => n + out.counts[k], 0)).toBe(out.total);
    expect(out.rows.map((r) => r.outcome)).toEqual(["regressed", "regressed", "improved", "both_wrong", "only_one", "only_one", "both_right"]);
    expect(out.rows.find((r) => r.questionId === "q5")).toMatchObject({ base: 1, other: null });
    expect(out.rows.find((r) => r.questionId === "q7")).toMatchObject({ base: null, other: 1, question: "question q7?" });
  });

  it("says how many questions are scored and how many are scored apart (the leaderboard's count and the rest)", () => {
    const base = [c("q1", 1), c("q2", 0), c("q3", 1, { category: "5" })];
    const other = [c("q1", 1), c("q2", 1), c("q3", 0, { category: "5" })];
    const out = questionOutcomes(base, other, "session_hit@5", new Set(["q3"]));
    expect(out).toMatchObject({ total: 3, scored: 2, apart: 1 });
    expect(out.rows.find((r) => r.questionId === "q3")!.apart).toBe(true);
    expect(questionOutcomes(base, other, "session_hit@5")).toMatchObject({ total: 3, scored: 3, apart: 0 });
  });

  it("the old rule's overcount cannot happen: a 383-question pair gives 383 in all", () => {
    // Every question lost by the evidence-recall rule and won by the hit rule at once used to count twice.
    const base = Array.from({ length: 383 }, (_, i) => c(`q${i}`, i % 3 === 0 ? 1 : 0));
    const other = Array.from({ length: 383 }, (_, i) => c(`q${i}`, i % 2 === 0 ? 1 : 0));
    const out = questionOutcomes(base, other, "session_hit@5");
    expect(Object.values(out.counts).reduce((a, b) => a + b, 0)).toBe(383);
    expect(out.counts.regressed + out.counts.improved).toBeLessThanOrEqual(383);
  });
});
