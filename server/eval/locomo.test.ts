import { describe, expect, it } from "vitest";
import { loadDataset } from "./datasets";
import { normalizeEvidence, parseLocomo, parseLocomoDate } from "./locomo";
import { locomoFixture } from "./testing/locomo-fixture";

describe("LoCoMo loader", () => {
  const { dataset, skips } = parseLocomo(JSON.stringify(locomoFixture()), "tiny-locomo.json");

  it("reads samples, sessions (not orphan date keys), turns with captions, dates as UTC", () => {
    expect(dataset.samples.map((s) => s.id)).toEqual(["conv-a", "conv-b"]);
    const a = dataset.samples[0]!;
    expect(a.speakers).toEqual(["Ann", "Ben"]);
    expect(a.sessions.map((s) => s.id)).toEqual(["1", "2", "3"]);
    expect(a.sessions[0]!.time).toBe("2023-05-08T13:56:00.000Z");
    expect(a.sessions[2]!.turns.at(-1)).toEqual({ id: "D3:4", speaker: "Ben", text: "Look at my garden! [a photo of tomato plants in a greenhouse]" });
  });

  it("normalizes the evidence anomalies and counts every repair and drop", () => {
    const byQ = new Map(dataset.questions.map((q) => [q.question, q]));
    expect(byQ.get("Which pets and instruments does Ann have?")!.evidence).toEqual(["D1:1", "D2:1"]);
    expect(byQ.get("Which pets and instruments does Ann have?")!.evidenceSessions).toEqual(["1", "2"]);
    expect(byQ.get("Who teaches Ann the cello?")!.evidence).toEqual(["D2:3"]);
    expect(byQ.get("Where did Ann move for her job?")!.evidence).toEqual(["D3:1"]);
    expect(byQ.get("What is Cleo painting on the library wall?")!.evidence).toEqual(["D2:1"]);
    expect(skips).toEqual(
      expect.arrayContaining([
        { where: "conv-a qa[2]", reason: 'evidence "D1:1; D2:1" holds 2 ids in one string; split', dropped: false },
        { where: "conv-a qa[3]", reason: 'evidence "D" is not a turn id; dropped', dropped: true },
        { where: "conv-a qa[4]", reason: 'evidence "D:3:1" read as D3:1', dropped: false },
        { where: "conv-a qa[5]", reason: "question has no usable evidence; skipped", dropped: true },
        { where: "conv-b qa[1]", reason: 'evidence "D9:9" names no turn of this conversation; dropped', dropped: true },
      ]),
    );
    // The question without evidence is left out; the others stay.
    expect(dataset.questions).toHaveLength(9);
    expect(dataset.questions.some((q) => q.question === "Would Ann enjoy a concert?")).toBe(false);
  });

  it("keeps adversarial questions apart with the 'not mentioned' gold, and coerces numeric answers", () => {
    const adversarial = dataset.questions.find((q) => q.category === "5")!;
    expect(adversarial.apart).toBe(true);
    expect(adversarial.answer).toBe("Not mentioned in the conversation");
    expect(dataset.questions.find((q) => q.question.startsWith("What plants"))!.answer).toBe("2023");
    expect(dataset.questions.filter((q) => q.apart)).toHaveLength(1);
  });

  it("splits ids joined by spaces and zero-padded ids", () => {
    const skips: Array<{ where: string; reason: string; dropped: boolean }> = [];
    expect(normalizeEvidence(["D9:1 D4:4 D4:6", "D30:05"], new Set(["D9:1", "D4:4", "D4:6", "D30:5"]), "q", skips)).toEqual(["D9:1", "D4:4", "D4:6", "D30:5"]);
    expect(skips.filter((s) => !s.dropped)).toHaveLength(2);
  });

  it("parses LoCoMo's date format and refuses others", () => {
    expect(parseLocomoDate("12:19 am on 4 January, 2024")).toBe("2024-01-04T00:19:00.000Z");
    expect(parseLocomoDate("12:05 pm on 4 January, 2024")).toBe("2024-01-04T12:05:00.000Z");
    expect(parseLocomoDate("yesterday")).toBeNull();
  });

  it("refuses malformed and truncated files with what and where", () => {
    const text = JSON.stringify(locomoFixture());
    expect(() => loadDataset({ benchmark: "locomo", text: text.slice(0, text.length / 2), name: "cut.json" })).toThrow(/cut\.json: not valid JSON .*truncated/);
    expect(() => loadDataset({ benchmark: "locomo", text: "{}", name: "obj.json" })).toThrow(/obj\.json: a LoCoMo file is a JSON array of conversations; found object/);
    const noQa = locomoFixture().map((s, i) => (i === 1 ? { ...s, qa: undefined } : s));
    expect(() => loadDataset({ benchmark: "locomo", text: JSON.stringify(noQa), name: "x.json" })).toThrow(/x\.json: \[1\]\.qa \(conv-b\) is missing or not a list/);
    const badSession = locomoFixture().map((s, i) => (i === 0 ? { ...s, conversation: { ...s.conversation, session_2: "oops" } } : s));
    expect(() => loadDataset({ benchmark: "locomo", text: JSON.stringify(badSession), name: "y.json" })).toThrow(/\[0\]\.conversation\.session_2 is not a list of turns/);
    expect(() => loadDataset({ benchmark: "locomo", name: "z.json" })).toThrow(/needs its file/);
  });
});
