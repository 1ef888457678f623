import { describe, expect, it } from "vitest";
import {
  extractiveSummary,
  keywords,
  rankSentences,
  segmentSentences,
  splitSentences,
  terms,
} from "./text-rank";
import { countTokens } from "./tokens";

describe("splitSentences", () => {
  it("splits on terminal punctuation", () => {
    expect(splitSentences("One thing. Another thing! A question? Yes.")).toEqual([
      "One thing.",
      "Another thing!",
      "A question?",
      "Yes.",
    ]);
  });

  it("does not split after abbreviations, initials or inside numbers and URLs", () => {
    expect(
      splitSentences(
        "Dr. Smith met Mr. Jones at 3.30 p.m. on Monday. Fruit, e.g. apples, i.e. Fuji, costs $2.50 each. " +
          "J. R. R. Tolkien wrote it. See No. 5 in Fig. 3 at example.com/a.b today. The U.S. Army agreed.",
      ),
    ).toEqual([
      "Dr. Smith met Mr. Jones at 3.30 p.m. on Monday.",
      "Fruit, e.g. apples, i.e. Fuji, costs $2.50 each.",
      "J. R. R. Tolkien wrote it.",
      "See No. 5 in Fig. 3 at example.com/a.b today.",
      "The U.S. Army agreed.",
    ]);
  });

  it("keeps closing quotes and brackets with their sentence; ellipses split before capitals", () => {
    expect(splitSentences('He said "Stop." Then he left. (It was late.) Wait... What? well... maybe')).toEqual([
      'He said "Stop."',
      "Then he left.",
      "(It was late.)",
      "Wait...",
      "What?",
      "well... maybe",
    ]);
  });

  it("treats line breaks, blank lines, bullets and headings as boundaries", () => {
    const text = [
      "# Notes",
      "user: hi there",
      "assistant: hello",
      "",
      "- first item",
      "* second item. It has two sentences",
      "1. numbered item",
      "",
      "Last paragraph",
    ].join("\r\n");
    expect(splitSentences(text)).toEqual([
      "Notes",
      "user: hi there",
      "assistant: hello",
      "first item",
      "second item.",
      "It has two sentences",
      "numbered item",
      "Last paragraph",
    ]);
  });

  it("joins hard-wrapped prose lines", () => {
    const text =
      "This paragraph was wrapped by an email client at a fixed width and\ncontinues here on the next line. Then it ends.";
    expect(splitSentences(text)).toEqual([
      "This paragraph was wrapped by an email client at a fixed width and\ncontinues here on the next line.",
      "Then it ends.",
    ]);
  });

  it("never joins transcript turns", () => {
    const text = "user: can you remind me what we decided about the pipeline schedule\nassistant: we decided to run it nightly";
    expect(splitSentences(text)).toEqual([
      "user: can you remind me what we decided about the pipeline schedule",
      "assistant: we decided to run it nightly",
    ]);
  });

  it("keeps fenced code blocks as one unit, or skips them", () => {
    const text = "Intro sentence. Another one.\n```ts\nconst x = 1.5; // not. split. Here\n\nfoo();\n```\nAfter code.";
    expect(splitSentences(text)).toEqual([
      "Intro sentence.",
      "Another one.",
      "```ts\nconst x = 1.5; // not. split. Here\n\nfoo();\n```",
      "After code.",
    ]);
    expect(splitSentences(text, { code: "skip" })).toEqual(["Intro sentence.", "Another one.", "After code."]);
    const units = segmentSentences(text);
    expect(units.map((u) => u.code)).toEqual([false, false, true, false]);
  });

  it("handles CJK terminators and drops punctuation-only lines", () => {
    expect(splitSentences("今日は晴れです。明日は雨でしょう！\n---\n本当？")).toEqual(["今日は晴れです。", "明日は雨でしょう！", "本当？"]);
    expect(splitSentences("")).toEqual([]);
    expect(splitSentences("   \n\n ... \n")).toEqual([]);
  });

  it("returns verbatim substrings with exact offsets", () => {
    const text = "  Alpha beta.  Gamma delta!\n\n- Item one\n  continued item\n```\ncode\n```\nDr. Who? Yes.";
    for (const s of segmentSentences(text)) {
      expect(text.slice(s.start, s.end)).toBe(s.text);
      expect(s.text).toBe(s.text.trim());
    }
  });
});

// A crafted input: the hub shares words with every other sentence; the others share only with it.
const HUB = "The memory pipeline summarizes agent conversations into durable facts every night.";
const SPOKES = [
  "Bananas are yellow and grow in tropical climates.",
  "A memory is only useful when it can be recalled.",
  "Each pipeline step records tokens and cost.",
  "Agent conversations can be very long.",
  "Durable facts survive restarts and redeploys.",
  "Every night the scheduler wakes up.",
  "Penguins cannot fly but they swim well.",
];
const CRAFTED = [...SPOKES.slice(0, 3), HUB, ...SPOKES.slice(3)].join(" ");

describe("rankSentences / extractiveSummary", () => {
  it("ranks the most central sentence first", () => {
    const ranked = rankSentences(splitSentences(CRAFTED));
    expect(ranked[0]!.sentence).toBe(HUB);
    expect(ranked[0]!.index).toBe(3);
    // Sentences sharing nothing with anything get the floor score (1 - d) and rank last, by position.
    expect(ranked.slice(-2).map((r) => r.index)).toEqual([0, 7]);
    expect(ranked.at(-1)!.score).toBeCloseTo(0.15, 6);
    expect(extractiveSummary(CRAFTED, { maxSentences: 1 })).toBe(HUB);
  });

  it("still finds the hub when the graph is pruned (maxNodes)", () => {
    const ranked = rankSentences(splitSentences(CRAFTED), { maxNodes: 3 });
    expect(ranked[0]!.sentence).toBe(HUB);
    expect(ranked.filter((r) => r.score > 0)).toHaveLength(3);
  });

  it("breaks ties by position", () => {
    const ranked = rankSentences(["Cats purr.", "Dogs bark.", "Birds sing.", "Fish swim."]);
    expect(ranked.map((r) => r.index)).toEqual([0, 1, 2, 3]);
    const symmetric = rankSentences(["red green", "green blue", "blue red"]);
    expect(symmetric.map((r) => r.index)).toEqual([0, 1, 2]);
  });

  it("returns verbatim input sentences in original order, within the budget", () => {
    const text = `${CRAFTED}\n\n${CRAFTED.replace(/\./g, "!")}\nMore memory facts about pipeline agents appear here.`;
    const sentences = splitSentences(text);
    for (const options of [{ maxSentences: 3 }, { maxTokens: 40 }, { maxChars: 120 }, {}]) {
      const summary = extractiveSummary(text, options);
      const picked = segmentSentences(summary).map((s) => s.text);
      expect(picked.length).toBeGreaterThan(0);
      for (const s of picked) expect(sentences).toContain(s);
      const positions = picked.map((s) => text.indexOf(s));
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
      if ("maxTokens" in options) expect(countTokens(summary)).toBeLessThanOrEqual(40);
      if ("maxChars" in options) expect(summary.length).toBeLessThanOrEqual(120);
    }
    expect(segmentSentences(extractiveSummary(text))).toHaveLength(5);
  });

  it("drops duplicate sentences and cuts an oversized top sentence to the budget", () => {
    expect(extractiveSummary("Same thing here. Same thing here. Same thing here.")).toBe("Same thing here.");
    const long = "word ".repeat(500).trim() + ".";
    const out = extractiveSummary(long, { maxTokens: 20 });
    expect(long.startsWith(out)).toBe(true);
    expect(countTokens(out)).toBeLessThanOrEqual(20);
  });

  it("is deterministic", () => {
    const text = Array.from({ length: 60 }, (_, i) => `Sentence ${i} mentions topic ${i % 7} and memory ${i % 3}.`).join(" ");
    const a = extractiveSummary(text, { maxTokens: 120 });
    const b = extractiveSummary(text, { maxTokens: 120 });
    expect(a).toBe(b);
    expect(JSON.stringify(rankSentences(splitSentences(text)))).toBe(JSON.stringify(rankSentences(splitSentences(text))));
  });

  it("summarizes 1 MB of text within the token budget, verbatim", () => {
    let seed = 42;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const vocab = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
    const parts: string[] = [];
    let length = 0;
    while (length < 1_000_000) {
      const n = 6 + Math.floor(rnd() * 18);
      const s = `The ${Array.from({ length: n }, () => vocab[Math.floor(rnd() ** 2 * vocab.length)]).join(" ")}.`;
      parts.push(s);
      length += s.length + 1;
    }
    const text = parts.join(" ");
    // Speed is for benches (a timed assertion fails on a loaded machine); here: bounded and verbatim.
    const summary = extractiveSummary(text, { maxTokens: 300 });
    expect(countTokens(summary)).toBeLessThanOrEqual(300);
    expect(summary.length).toBeGreaterThan(0);
    expect(text).toContain(summary.split(/(?<=\.)\s/)[0]!);
  });
});

describe("keywords", () => {
  it("returns the most frequent content words, ties by first occurrence", () => {
    const text = "The agent stores memories. The agent recalls a memory. Pipelines feed the agent. Pipelines run.";
    expect(keywords(text, 3)).toEqual(["agent", "memories", "pipelines"]);
    expect(keywords(text, 0)).toEqual([]);
    expect(keywords("the and of 42 1999", 3)).toEqual([]);
  });

  it("lower-cases and removes stop words", () => {
    expect(terms("The Quick brown fox isn't here")).toEqual(["quick", "brown", "fox"]);
  });
});
