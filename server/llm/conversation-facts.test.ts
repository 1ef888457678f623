import { describe, expect, it } from "vitest";
import { conversationFacts, resolveFirstPerson, splitCompound } from "./conversation-facts";
import { OfflineModel } from "./offline-model";

const SESSION = [
  "# 8 May 2023",
  "Caroline: Hey Mel! Good to see you! How have you been?",
  "Melanie: Hey Caroline! I'm swamped with the kids & work. What's up with you?",
  "Caroline: I went to a LGBTQ support group yesterday and it was so powerful. My dog died last week, but I adopted a cat.",
  "Melanie: Wow, that's great! I no longer live in Lisbon; we moved to Porto in March.",
].join("\n\n");

describe("offline fact extraction from a conversation", () => {
  it("keeps every informative sentence with its speaker and turn, drops small talk", () => {
    expect(conversationFacts(SESSION)).toEqual([
      { fact: "Melanie is swamped with the kids & work.", speaker: "Melanie", turn: 2 },
      { fact: "Caroline went to a LGBTQ support group yesterday and it was so powerful.", speaker: "Caroline", turn: 3 },
      { fact: "Caroline's dog died last week.", speaker: "Caroline", turn: 3 },
      { fact: "Caroline adopted a cat.", speaker: "Caroline", turn: 3 },
      // One change of state told in two clauses stays one fact, with the state it sets ("we" is Melanie's household).
      {
        fact: "Melanie no longer lives in Lisbon; we moved to Porto in March.",
        speaker: "Melanie",
        turn: 4,
        state: { subject: "Melanie", slot: "residence", value: "Porto", polarity: "current", old: "Lisbon", replaces: true },
      },
    ]);
  });

  it("drops fixed phatic expressions (greetings, catching up, well-wishing) but keeps statements that share their words", () => {
    const content = [
      "# 2 June 2023",
      "Ana: Long time no see! Just wanted to say hi! Hope you're doing well, Bo. It's so good to hear from you again!",
      "Bo: Take care and have a great weekend! It took a long time to see the doctor. I wanted to say sorry to my sister.",
      "Ana: Hope you're doing well with the new job. Catching up with old friends at the reunion was fun.",
    ].join("\n\n");
    expect(conversationFacts(content)?.map((f) => f.fact)).toEqual([
      "It took a long time to see the doctor.",
      "Bo wanted to say sorry to Bo's sister.",
      "Hope you're doing well with the new job.",
      "Catching up with old friends at the reunion was fun.",
    ]);
  });

  it("splits compounds where a new subject starts and resolves the first person", () => {
    expect(splitCompound("I sold my car, and she bought a bike; we are happy.")).toEqual(["I sold my car.", "She bought a bike.", "We are happy."]);
    expect(splitCompound("Tea and coffee are fine.")).toEqual(["Tea and coffee are fine."]);
    // A question states nothing: its answer is the fact, and carries the question it answers.
    expect(conversationFacts("Ann: What inspired you to paint the old lighthouse?\n\nBo: My grandfather kept it.")).toEqual([
      { fact: "Bo's grandfather kept it (asked: what inspired Bo to paint the old lighthouse).", speaker: "Bo", turn: 2 },
    ]);
    expect(resolveFirstPerson("I'm tired, my cat woke me and I have a cold. I love it; I went out.", "Ana")).toBe(
      "Ana is tired, Ana's cat woke Ana and Ana has a cold. Ana loves it; Ana went out.",
    );
  });

  it("an answer's first fact carries the question it answers, persons resolved; small-talk questions and one's own do not", () => {
    const content = [
      "# 1 June 2023",
      "Caroline: Wow, that's great! How long have you been practicing art?",
      "Melanie: Seven years now, and I've finally found my real muses: painting and pottery.",
      "Caroline: How are you?",
      "Melanie: I went to the beach with my kids.",
      "Melanie: Do you like the beach? The kids loved the sand.",
    ].join("\n\n");
    expect(conversationFacts(content)).toEqual([
      { fact: "Seven years now (asked: how long has Melanie been practicing art).", speaker: "Melanie", turn: 2 },
      { fact: "Melanie has finally found Melanie's real muses: painting and pottery.", speaker: "Melanie", turn: 2 },
      { fact: "Melanie went to the beach with Melanie's kids.", speaker: "Melanie", turn: 4 },
      { fact: "The kids loved the sand.", speaker: "Melanie", turn: 5 },
    ]);
  });

  it("has no cap: a long conversation keeps every fact (the old extractor kept at most 25)", () => {
    const turns = Array.from({ length: 60 }, (_, i) => `${i % 2 ? "Bo" : "Ann"}: I visited museum number ${i + 1} in the old town.`);
    const content = ["# 1 June 2023", ...turns].join("\n\n");
    const text = new OfflineModel().run({ model: "offline/extractive", prompt: content, temperature: 0, task: "extract-list", inputs: [{ id: "s", content }] });
    const facts = JSON.parse(text) as Array<{ fact: string; turn: number }>;
    expect(facts).toHaveLength(60);
    expect(facts[59]).toMatchObject({ fact: "Bo visited museum number 60 in the old town.", speaker: "Bo", turn: 60 });
  });
});

describe("offline fact extraction: the user's own facts only (issue 47)", () => {
  it("takes nothing from assistant turns, keeps short changes of state and strips their lead-ins", () => {
    const chat = [
      "user: Big news: I moved from Lisbon to Porto!",
      "assistant: Porto is a lovely city. Hope this helps!",
      "user: I'm keto now.",
      "assistant: Adatum sounds like a great company.",
      "user: Guess who's the newest hire at Vandelay? Me!",
    ].join("\n\n");
    const facts = conversationFacts(chat)!;
    expect(facts.every((f) => f.speaker === "user")).toBe(true);
    expect(facts.map((f) => f.fact)).toEqual(["user moved from Lisbon to Porto!", "user is keto now.", "Guess who's the newest hire at Vandelay?"]);
    expect(facts.map((f) => [f.state?.slot, f.state?.value])).toEqual([
      ["residence", "Porto"],
      ["diet", "keto"],
      ["employer", "Vandelay"],
    ]);
  });
});

describe("offline fact extraction: what the assistant confirms", () => {
  it("keeps an assistant sentence that restates the user's fact, as the user's, and nothing else it says", () => {
    const facts = conversationFacts(
      ["user: Where did I leave the spare key for the old lighthouse cabin?", "assistant: You told me the lighthouse key is hidden under the blue ceramic frog by the porch steps. Hope this helps!"].join("\n\n"),
    )!;
    expect(facts).toEqual([{ fact: "User said the lighthouse key is hidden under the blue ceramic frog by the porch steps.", speaker: "user", turn: 2 }]);
  });
});
