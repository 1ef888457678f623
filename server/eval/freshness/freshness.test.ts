/** The freshness benchmark: a deterministic generator with varied phrasings, and its metrics. */
import { describe, expect, it } from "vitest";
import { FRESHNESS_SLOTS, generateFreshness } from "./generate";
import { scoreFreshness, summarize } from "./metrics";
import phrasings from "./phrasings.json";
import { askedSlot } from "../../search/current-state";

describe("freshness generator", () => {
  it("is deterministic, covers 40 people and every attribute, with ≥ 10 phrasings per kind of change", () => {
    const a = generateFreshness({ seed: 7 });
    expect(generateFreshness({ seed: 7 })).toEqual(a);
    expect(generateFreshness({ seed: 8 })).not.toEqual(a);
    expect(a.samples).toHaveLength(40);
    expect(a.questions).toHaveLength(40 * FRESHNESS_SLOTS.length);
    for (const slot of FRESHNESS_SLOTS) expect((phrasings.change as Record<string, string[]>)[slot]!.length).toBeGreaterThanOrEqual(10);
    for (const kind of Object.values(phrasings.end)) expect(kind.length).toBeGreaterThanOrEqual(10);
    // Ended attributes, changes and assistant turns that name values are all there.
    expect(a.questions.some((q) => q.current === null)).toBe(true);
    expect(a.questions.filter((q) => q.changes > 0).length).toBeGreaterThan(200);
    const assistant = a.samples.flatMap((s) => s.sessions.flatMap((x) => x.turns.filter((t) => t.speaker === "assistant").map((t) => t.text)));
    expect(assistant.some((t) => /sounds like a great company/.test(t))).toBe(true);
    expect(assistant).toContain("Hope this helps!");
  });
});

describe("freshness metrics", () => {
  const q = { id: "p:residence", sample: "p", slot: "residence" as const, question: "Which city does the user live in now?", current: "Porto", stale: ["Lisbon"], changes: 1 };
  it("current@1 needs the current value and no stale one at the top; a stale value above the current one counts", () => {
    expect(scoreFreshness(q, ["user lives in Porto", "user lives in Lisbon"])).toMatchObject({ current1: true, staleAboveCurrent: false });
    // A hit naming both values is not a current@1 (it does not say which holds), nor stale above current.
    expect(scoreFreshness(q, ["user moved from Lisbon to Porto"])).toMatchObject({ current1: false, staleAboveCurrent: false });
    expect(scoreFreshness(q, ["user lives in Lisbon", "user lives in Porto"])).toMatchObject({ current1: false, staleAboveCurrent: true });
  });
  it("an ended attribute is returned as current when the top hit names it without saying it ended", () => {
    const ended = { ...q, slot: "hobby" as const, current: null, stale: ["pottery"] };
    expect(scoreFreshness(ended, ["user's hobby is pottery"]).endedAsCurrent).toBe(true);
    expect(scoreFreshness(ended, ["user no longer has the hobby pottery"]).endedAsCurrent).toBe(false);
    expect(summarize([{ q: ended, c: scoreFreshness(ended, ["user's hobby is pottery"]) }])).toMatchObject({ endedAsCurrent: 1, endedN: 1 });
  });
  it("a question about what holds now names its slot", () => {
    expect(askedSlot("Which city does the user live in now?")).toBe("residence");
    expect(askedSlot("Which company does the user work for now?")).toBe("employer");
    expect(askedSlot("What phone does the user use now?")).toBe("device");
    expect(askedSlot("What hobby is the user into these days?")).toBe("hobby");
    // Not about the present: left alone.
    expect(askedSlot("Where did Caroline live in 2019?")).toBeNull();
  });
});
