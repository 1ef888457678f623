import { describe, expect, it } from "vitest";
import { dictionaryIndex, entityCard, entityId, extractMentions, resolveEntities, speakerName, type MentionSource } from "./entity-extract";

const source = (recordId: string, time: string | null, content: string, dictionary?: Record<string, string[]>): MentionSource => ({
  recordId,
  time,
  mentions: extractMentions(content, dictionaryIndex(dictionary)),
});

describe("entity extraction", () => {
  it("finds speakers and capitalised names, drops greetings, weekdays and possessives", () => {
    const mentions = extractMentions("Caroline: Hey Mel! I saw Melanie's painting at the Louvre in Paris last Friday.");
    expect(mentions.map((m) => m.surface)).toEqual(["Caroline", "Mel", "Melanie", "Louvre", "Paris"]);
    expect(mentions[0]).toMatchObject({ speaker: true, type: "person" });
    expect(mentions.find((m) => m.surface === "Paris")?.type).toBe("place");
  });

  it("reads roles as roles: the user of a chat export is one person, the assistant is nobody", () => {
    expect(speakerName("user")).toBe("User");
    expect(speakerName("assistant (to python)")).toBeNull();
    expect(speakerName("Melanie")).toBe("Melanie");
    expect(speakerName("melanie")).toBe("Melanie");
    expect(speakerName("user (caroline)")).toBe("Caroline");
  });
});

describe("entity resolution", () => {
  it("merges a short form and possessives into the most frequent full form", () => {
    const entities = resolveEntities("s1", [
      source("r1", "2023-05-08T00:00:00.000Z", "Caroline: How is Melanie doing? I miss Melanie."),
      source("r2", "2023-06-01T00:00:00.000Z", "Caroline: Mel's kids painted with Mel yesterday."),
      source("r3", "2023-07-01T00:00:00.000Z", "Caroline: I think Melanie would love it."),
    ]);
    const mel = entities.find((e) => e.name === "Melanie")!;
    expect(mel).toMatchObject({ id: entityId("s1", "Melanie"), aliases: ["Mel"], type: "person", mentions: 5, firstSeen: "2023-05-08T00:00:00.000Z", lastSeen: "2023-07-01T00:00:00.000Z" });
    expect(mel.sources).toEqual(["r1", "r2", "r3"]);
    expect(entities.map((e) => e.name).sort()).toEqual(["Caroline", "Melanie"]);
    expect(entityCard(mel)).toBe("Melanie (person). Also: Mel. Mentioned 5 times, 2023-05-08 – 2023-07-01.");
  });

  it("keeps an ambiguous short form apart and a word seen only at sentence starts out", () => {
    const entities = resolveEntities("s1", [
      source("r1", null, "Jo: I went with Melanie and then with Melvin to see Mel. Sounds good."),
      source("r2", null, "Jo: Melanie and Melvin both came."),
    ]);
    expect(entities.map((e) => e.name).sort()).toEqual(["Jo", "Mel", "Melanie", "Melvin"]);
    expect(entities.some((e) => e.name === "Sounds")).toBe(false);
  });

  it("uses the dictionary: canonical names and aliases that are not prefixes", () => {
    const dictionary = { Robert: ["Bobby", "Rob"] };
    const entities = resolveEntities(
      "s1",
      [source("r1", null, "Ann: I met Bobby at the market.", dictionary), source("r2", null, "Ann: Robert said hi, and Rob laughed.", dictionary)],
      dictionaryIndex(dictionary),
    );
    expect(entities.find((e) => e.name === "Robert")).toMatchObject({ aliases: ["Bobby", "Rob"], mentions: 3 });
  });

  it("resolves per scope: the same name in two scopes is two entities", () => {
    const a = resolveEntities("conv-a", [source("a1", null, "Caroline: Mel and Melanie are the same person.")]);
    const b = resolveEntities("conv-b", [source("b1", null, "Ben: My cat is called Mel.")]);
    expect(a.find((e) => e.name === "Melanie")?.aliases).toEqual(["Mel"]);
    expect(b.find((e) => e.name === "Mel")).toBeDefined();
    expect(a.find((e) => e.name === "Melanie")!.id).not.toBe(b.find((e) => e.name === "Mel")!.id);
  });
});
