/**
 * Labels, sentence-initial words and stop words are not people (issue 34): "Question:", "Ref:",
 * "Date:" lines are fields, not speakers; a capitalised word the texts also use in lower case is
 * not a person just because it opens sentences or a line.
 */
import { describe, expect, it } from "vitest";
import { extractMentions, lowercaseWords, resolveEntities, speakerName, type MentionSource } from "./entity-extract";

const TEXTS = [
  "Question: Did Ana move from Lisbon?\n\nAnswer: Ana moved to Porto with Marta.\n\nRef: ticket 4411\n\nDate: 8 May 2023",
  "Note: Marta asked the question.\n\nSummary: Ana says the answer is in the ref list, dated last week.",
  "Caroline: Honestly, Ana told me yesterday. Then Marta called. Anyway, Thanks for asking!",
];

function resolved() {
  const sources: MentionSource[] = TEXTS.map((content, i) => ({ recordId: `r${i}`, time: null, mentions: extractMentions(content) }));
  return resolveEntities("s", sources, undefined, { lowercaseWords: lowercaseWords(TEXTS) });
}

describe("entity extraction: labels and stop words are not people", () => {
  it("reads field labels as labels, not speakers", () => {
    for (const label of ["Question", "Answer", "Ref", "Date", "Note", "Summary", "Q", "A"]) expect(speakerName(label)).toBeNull();
    expect(speakerName("Caroline")).toBe("Caroline");
  });

  it("types the people of the texts as people, and nothing else", () => {
    const people = resolved()
      .filter((e) => e.type === "person")
      .map((e) => e.name)
      .sort();
    expect(people).toEqual(["Ana", "Caroline", "Marta"]);
  });
});
