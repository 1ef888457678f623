/**
 * The walk's group context (walk.ts withGroupContext): the level above votes for the records folded
 * into it, so a match in a group about the question comes before an equal or slightly better match
 * in a group about something else, and the group's records that match nothing follow its matches.
 */
import { describe, expect, it } from "vitest";
import { CONTEXT_WEIGHT, otherBranchWeight, SHARP_HITS, withGroupContext } from "./walk";

const row = (id: string, score: number, parentId: string | null = null) => ({ id, step: "observations", scope: "s", content: id, metadata: {}, time: null, key: id, parentId, score });

describe("withGroupContext", () => {
  // Group g1 is about the question (score 3), g2 a little (1), g3 not at all (0).
  const groups = [row("g1", 3), row("g2", 1), row("g3", 0)];
  const members = [row("a", 0, "g1"), row("c", 0, "g1"), row("d", 0, "g1"), row("b", 0, "g2"), row("e", 0, "g3")];
  const membersOf = async (ids: string[]) => members.filter((m) => ids.includes(m.parentId!));
  const rows = [row("a", 2), row("b", 2), row("e", 1.5), row("c", 1), row("d", 0)];

  it("orders matches by their own score plus CONTEXT_WEIGHT of their group's, scaled to the best record", async () => {
    expect(CONTEXT_WEIGHT).toBe(0.5);
    const lifted = await withGroupContext(rows, groups, membersOf);
    // scale = 0.5 × 2 / 3: a = 2 + 1, b = 2 + 1/3, c = 1 + 1 (beside the best turns) before e = 1.5 (unrelated
    // group); d, no query word but in the best group (the turn around a match), gets the group's 1.
    expect(lifted.map((r) => r.id)).toEqual(["a", "b", "c", "e", "d"]);
    expect(lifted.map((r) => r.score)).toEqual([3, 2.333333, 2, 1.5, 1]);
  });

  it("a record outside every matching group keeps its own score", async () => {
    const outside = [...rows, row("f", 0)];
    const lifted = await withGroupContext(outside, groups, membersOf);
    expect(lifted.at(-1)).toMatchObject({ id: "f", score: 0 });
  });

  it("changes nothing when no group or no record matches", async () => {
    expect(await withGroupContext(rows, [row("g1", 0)], membersOf)).toBe(rows);
    const none = rows.map((r) => ({ ...r, score: 0 }));
    expect(await withGroupContext(none, groups, membersOf)).toBe(none);
  });
});

describe("otherBranchWeight", () => {
  const flat = (...scores: Array<[string, number]>) => scores.map(([id, score]) => ({ id, score }));

  it("is the mean score of the other branches' records over the branch's, on the flat first page", () => {
    // A sharp question: the branch holds the strong matches (mean 8), the rest are weak (mean 2).
    expect(otherBranchWeight(new Set(["a", "b"]), flat(["a", 9], ["b", 7], ["x", 3], ["y", 1]))).toBe(0.25);
    // An open question: the branch's matches are no better than the others' (mean 5 and 4).
    expect(otherBranchWeight(new Set(["a", "b"]), flat(["a", 6], ["x", 5], ["y", 3], ["b", 4]))).toBe(0.8);
  });

  it("never counts another branch above the walk's own, and is 1 when the page has one side only", () => {
    expect(otherBranchWeight(new Set(["a", "b"]), flat(["x", 9], ["a", 1], ["b", 1]))).toBe(1);
    expect(otherBranchWeight(new Set(["a"]), flat(["a", 3]))).toBe(1);
    expect(otherBranchWeight(new Set(["q"]), flat(["a", 3], ["b", 2]))).toBe(1);
    expect(otherBranchWeight(new Set(["a"]), flat(["a", 0], ["b", 0]))).toBe(1);
  });

  it("reads only the first page: records past SHARP_HITS do not move it", () => {
    const page = Array.from({ length: SHARP_HITS }, (_, i) => ({ id: i < 2 ? `in${i}` : `out${i}`, score: i < 2 ? 10 : 5 }));
    const branch = new Set(["in0", "in1", "in-late"]);
    const weight = otherBranchWeight(branch, page);
    expect(weight).toBe(0.5);
    expect(otherBranchWeight(branch, [...page, { id: "in-late", score: 0.1 }, { id: "out-late", score: 0 }])).toBe(weight);
  });
});
