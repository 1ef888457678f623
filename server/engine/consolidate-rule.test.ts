import { describe, expect, it } from "vitest";
import { DecisionError, Similarity, offlineDecision, parseDecision, sameSubject } from "./consolidate-rule";

const memories = [
  { id: "m1", content: "Alice lives in Paris" },
  { id: "m2", content: "Alice works as a nurse at the city hospital" },
];

function decide(fact: string, mode: "full" | "add-only" = "full") {
  const similarity = new Similarity();
  return offlineDecision(fact, similarity.candidates(fact, memories), similarity, 0.85, mode);
}

describe("the offline consolidate rule", () => {
  it("near-duplicate → NONE, changed value → UPDATE, negation → DELETE, new → ADD", () => {
    expect(decide("Alice lives in Paris")).toMatchObject({ event: "NONE", memoryId: "m1" });
    expect(decide("Alice lives in Berlin")).toMatchObject({ event: "UPDATE", memoryId: "m1", text: "Alice lives in Berlin" });
    expect(decide("Alice lives in Paris with her two cats")).toMatchObject({ event: "UPDATE", memoryId: "m1" });
    expect(decide("Alice no longer works as a nurse at the city hospital")).toMatchObject({ event: "DELETE", memoryId: "m2" });
    expect(decide("Alice plays chess on Tuesdays")).toMatchObject({ event: "ADD" });
    // A negation of something not remembered is a fact of its own.
    expect(decide("Alice does not eat meat")).toMatchObject({ event: "ADD" });
  });

  it("add-only never updates or deletes", () => {
    expect(decide("Alice lives in Berlin", "add-only").event).toBe("ADD");
    expect(decide("Alice no longer works as a nurse at the city hospital", "add-only").event).toBe("ADD");
    expect(decide("Alice lives in Paris", "add-only").event).toBe("NONE");
  });

  it("memories as similar as each other are shown and matched by their text, not by their ids (which derive from random record ids)", () => {
    // Both say the fact word for word; the one whose id sorts first comes second by text.
    const tied = [
      { id: "mem-1", content: "Jon likes tea." },
      { id: "mem-2", content: "Jon likes tea!" },
    ];
    const similarity = new Similarity();
    for (const list of [tied, [...tied].reverse()]) {
      const shown = similarity.candidates("Jon likes tea", list);
      expect(shown.map((c) => [c.memory.id, c.similarity])).toEqual([
        ["mem-2", 1],
        ["mem-1", 1],
      ]);
      expect(offlineDecision("Jon likes tea", shown, similarity, 0.85, "full")).toMatchObject({ event: "NONE", memoryId: "mem-2" });
    }
  });

  it("same subject needs shared leading content words and a replaced middle or end", () => {
    expect(sameSubject("Bob drinks green tea every morning", "Bob drinks coffee every morning")).toBe(true);
    expect(sameSubject("I went to the store", "I went to the beach")).toBe(false);
    expect(sameSubject("Alice lives in Paris", "Alice lives in Paris")).toBe(false);
  });
});

describe("a model's decision", () => {
  const candidates = [{ memory: memories[0]!, similarity: 0.9 }];
  it("parses the allowed events and checks the memory it names", () => {
    expect(parseDecision('{"event":"update","memory_id":"m1","text":"Alice lives in Rome"}', candidates, "full")).toMatchObject({ event: "UPDATE", memoryId: "m1", text: "Alice lives in Rome" });
    expect(parseDecision('{"event":"NONE"}', candidates, "full")).toMatchObject({ event: "NONE" });
    expect(() => parseDecision('{"event":"MERGE"}', candidates, "full")).toThrow(/unknown decision "MERGE"/);
    expect(() => parseDecision('{"event":"UPDATE","memory_id":"m1"}', candidates, "add-only")).toThrow(/add-only/);
    expect(() => parseDecision('{"event":"DELETE","memory_id":"m9"}', candidates, "full")).toThrow(/not one of the similar memories shown/);
    expect(() => parseDecision('{"event": "ADD"', candidates, "full")).toThrow(DecisionError);
  });
});
