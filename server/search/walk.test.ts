/**
 * The walk's group context (walk.ts withGroupContext): the level above votes for the records folded
 * into it, so a match in a group about the question comes before an equal or slightly better match
 * in a group about something else, and the group's records that match nothing follow its matches.
 */
import { describe, expect, it } from "vitest";
import { CONTEXT_WEIGHT, withGroupContext } from "./walk";

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
