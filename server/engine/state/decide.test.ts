/** Consolidation by slot: a new value updates only its slot's memory, an end deletes it, nothing else changes. */
import { describe, expect, it } from "vitest";
import { slotDecision } from "./decide";
import { parseState } from "./parse";

const memories = [
  { id: "m-home", content: "user lives in Boston" },
  { id: "m-partner", content: "user's partner is Tom (user lives with user's partner Tom)" },
  { id: "m-diet", content: "user's diet is vegan (user has been vegan for years)" },
  { id: "m-pet", content: "user's pet is a dog named Rex" },
  { id: "m-other", content: "user has been saving for years" },
];
const decide = (text: string, mode: "full" | "add-only" = "full") => slotDecision(text, parseState(text, "user"), memories, mode);

describe("slotDecision", () => {
  it("a new value UPDATEs that slot's memory and no other (the issue's cases)", () => {
    const moved = decide("I used to live in Boston, but now I live in Prague.");
    expect(moved).toMatchObject({ event: "UPDATE", memoryId: "m-home", text: "user lives in Prague" });
    // A city statement shaped like the diet memory does not touch the diet.
    expect(decide("I've been living in Prague for years.")).toMatchObject({ event: "UPDATE", memoryId: "m-home" });
    expect(decide("I'm keto now.")).toMatchObject({ event: "UPDATE", memoryId: "m-diet", text: expect.stringMatching(/^user's diet is keto\b/) });
    expect(decide("These days I'm with Greta.")).toMatchObject({ event: "UPDATE", memoryId: "m-partner" });
  });

  it("an end DELETEs the slot's memory; a pet's name resolves the slot", () => {
    expect(decide("I'm single again.")).toMatchObject({ event: "DELETE", memoryId: "m-partner" });
    expect(decide("Rex ran away and never came back.")).toMatchObject({ event: "DELETE", memoryId: "m-pet" });
  });

  it("a value already held changes nothing; add-only adds beside it and keeps ends as memories", () => {
    expect(decide("Home for me is Boston.")).toMatchObject({ event: "NONE", memoryId: "m-home" });
    expect(decide("Quick update — we relocated to Porto.", "add-only")).toMatchObject({ event: "ADD", text: expect.stringMatching(/^user lives in Porto\b/) });
    expect(decide("I'm single again.", "add-only")).toMatchObject({ event: "ADD", text: "user no longer has a partner (user is no longer with Tom)" });
  });

  it("a fact with no state is left to the sentence rule", () => {
    expect(decide("I finished a long novel about a lighthouse family.")).toBeNull();
  });
});
