/**
 * The offline reading of change of state, on wordings that are NOT in the freshness benchmark's
 * phrasings (held out: written for this test), plus statements that must not read as a state.
 */
import { describe, expect, it } from "vitest";
import { parseState } from "./parse";

const read = (text: string, speaker?: string) => {
  const s = parseState(text, speaker);
  return s && { slot: s.slot, value: s.value, polarity: s.polarity, ...(s.old ? { old: s.old } : {}) };
};

describe("parseState (held-out wordings)", () => {
  it("reads a new value of each slot, first person resolved and lead-ins stripped", () => {
    expect(read("Exciting news! We just moved to Tallinn.", "user")).toMatchObject({ slot: "residence", value: "Tallinn", polarity: "current" });
    expect(read("Heads up: my new flat is in Ghent.", "user")).toMatchObject({ slot: "residence", value: "Ghent" });
    expect(read("I was hired by Umbrella last week.", "user")).toMatchObject({ slot: "employer", value: "Umbrella" });
    expect(read("They promoted me to senior analyst.", "user")).toMatchObject({ slot: "role", value: "senior analyst" });
    expect(read("My fiancée Clara says hi.", "user")).toMatchObject({ slot: "partner", value: "Clara" });
    expect(read("We rescued a cat called Pickles.", "user")).toMatchObject({ slot: "pet", value: "Pickles" });
    expect(read("Lately I'm hooked on bouldering.", "user")).toMatchObject({ slot: "hobby", value: "bouldering" });
    expect(read("Honestly, I'm vegetarian now.", "user")).toMatchObject({ slot: "diet", value: "vegetarian" });
    expect(read("I bought an iPhone 16 yesterday.", "user")).toMatchObject({ slot: "device", value: "iPhone 16" });
  });

  it("reads old and new values, and ends", () => {
    expect(read("I used to work for Initech, but now I work for Hooli.", "user")).toMatchObject({ slot: "employer", value: "Hooli", polarity: "current", old: "Initech" });
    expect(read("Sam and I split up in May.", "user")).toMatchObject({ slot: "partner", value: "Sam", polarity: "ended" });
    expect(read("Sadly our beagle Toby passed away.", "user")).toMatchObject({ slot: "pet", value: "Toby", polarity: "ended" });
    expect(read("I no longer go rowing.", "user")).toMatchObject({ slot: "hobby", value: "rowing", polarity: "ended" });
    // A name alone: its slot is the memory's that holds it (consolidation resolves it).
    expect(read("Bruno ran away.", "user")).toMatchObject({ slot: null, value: "Bruno", polarity: "ended" });
  });

  it("reads third-person facts (a model's) by their first word", () => {
    expect(read("Ana moved from Lisbon to Porto")).toMatchObject({ slot: "residence", value: "Porto", old: "Lisbon" });
    expect(read("Ana quit her job at Escola Azul")).toMatchObject({ slot: "employer", value: "Escola Azul", polarity: "ended" });
  });

  it("leaves alone what is not the subject's state", () => {
    expect(read("Ana's sister Marta lives in Faro")).toBeNull();
    expect(read("Thanks, that recipe was great!", "user")).toBeNull();
    expect(read("Caroline went to a LGBTQ support group yesterday.")).toBeNull();
    expect(read("Ana started working at Acme as an engineer")).toMatchObject({ slot: "employer", value: "Acme" });
  });
});
