import { describe, expect, it } from "vitest";
import { loadDataset } from "./datasets";
import { parseLongMemEvalDate } from "./longmemeval";

/** A small file in LongMemEval's shape (the real one is user-supplied). */
function longMemEvalFixture() {
  return [
    {
      question_id: "e47becba",
      question_type: "single-session-user",
      question: "What degree did I graduate with?",
      answer: "Business Administration",
      question_date: "2023/05/30 (Tue) 23:40",
      haystack_session_ids: ["sharegpt_x_0", "answer_e47becba"],
      haystack_dates: ["2023/05/20 (Sat) 02:21", "2023/05/22 (Mon) 10:00"],
      haystack_sessions: [
        [{ role: "user", content: "Tell me a joke." }, { role: "assistant", content: "Why did the chicken cross the road?" }],
        [
          { role: "user", content: "I graduated with a degree in Business Administration.", has_answer: true },
          { role: "assistant", content: "Congratulations on your degree!", has_answer: false },
        ],
      ],
      answer_session_ids: ["answer_e47becba"],
    },
    {
      question_id: "gpt4_1_abs",
      question_type: "knowledge-update",
      question: "What is my cat's name?",
      answer: "You never mentioned a cat.",
      question_date: "2023/06/01 (Thu) 09:00",
      haystack_session_ids: ["s1"],
      haystack_dates: ["2023/05/01 (Mon) 09:00"],
      haystack_sessions: [[{ role: "user", content: "I have a dog." }]],
      answer_session_ids: [],
    },
    {
      question_id: "q3",
      question_type: "multi-session",
      question: "How many trips did I take?",
      answer: "2",
      haystack_session_ids: ["answer_a_1", "answer_a_2"],
      haystack_dates: ["2023/01/01 (Sun) 10:00", "2023/02/01 (Wed) 10:00"],
      haystack_sessions: [[{ role: "user", content: "Back from Rome." }], [{ role: "user", content: "Back from Oslo." }]],
      answer_session_ids: ["answer_a_1", "answer_a_2"],
    },
  ];
}

describe("LongMemEval loader", () => {
  it("one sample per question, has_answer turns as gold (never in the text), abstention apart", () => {
    const { dataset, skips } = loadDataset({ benchmark: "longmemeval", text: JSON.stringify(longMemEvalFixture()), name: "lme.json" });
    expect(dataset.samples.map((s) => s.id)).toEqual(["e47becba", "gpt4_1_abs", "q3"]);
    const first = dataset.questions[0]!;
    expect(first).toMatchObject({ sample: "e47becba", category: "single-session-user", evidence: ["answer_e47becba#1"], evidenceSessions: ["answer_e47becba"], apart: false, askedAt: "2023-05-30T23:40:00.000Z" });
    expect(dataset.samples[0]!.sessions[1]!.time).toBe("2023-05-22T10:00:00.000Z");
    expect(JSON.stringify(dataset.samples)).not.toContain("has_answer");
    expect(dataset.questions.find((q) => q.id === "gpt4_1_abs")!.apart).toBe(true);
    // Sessions that mark no turn: the whole session is the evidence (counted).
    expect(dataset.questions.find((q) => q.id === "q3")!.evidence).toEqual(["answer_a_1#1", "answer_a_2#1"]);
    expect(skips.filter((s) => !s.dropped)).toHaveLength(2);
  });

  it("reads JSONL too, and refuses malformed files with what and where", () => {
    const jsonl = longMemEvalFixture().map((q) => JSON.stringify(q)).join("\n");
    expect(loadDataset({ benchmark: "longmemeval", text: jsonl, name: "lme.jsonl" }).dataset.questions).toHaveLength(3);
    expect(() => loadDataset({ benchmark: "longmemeval", text: jsonl.slice(0, 300), name: "cut.jsonl" })).toThrow(/cut\.jsonl: line 1 is not valid JSON/);
    const broken = longMemEvalFixture().map((q, i) => (i === 2 ? { ...q, haystack_sessions: [[]] } : q));
    expect(() => loadDataset({ benchmark: "longmemeval", text: JSON.stringify(broken), name: "b.json" })).toThrow(/b\.json: \[2\] \(q3\): haystack_session_ids and haystack_sessions must be parallel lists/);
  });

  it("parses its dates", () => {
    expect(parseLongMemEvalDate("2023/05/30 (Tue) 23:40")).toBe("2023-05-30T23:40:00.000Z");
    expect(parseLongMemEvalDate("May 30")).toBeNull();
  });
});
