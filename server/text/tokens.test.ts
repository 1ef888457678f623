import { describe, expect, it } from "vitest";
import { MAX_EXACT_CHARS, countTokens, estimateTokens, truncateToTokens } from "./tokens";

describe("countTokens", () => {
  it("counts BPE tokens", () => {
    expect(countTokens("")).toBe(0);
    expect(countTokens("hello world")).toBe(2);
    expect(countTokens("The quick brown fox jumps over the lazy dog.")).toBe(10);
  });

  it("treats special-token text as ordinary text instead of throwing", () => {
    expect(countTokens("before <|endoftext|> after")).toBeGreaterThan(3);
  });

  it("estimates very long texts at ~4 chars per token (no BPE over them)", () => {
    const text = "memory ".repeat(Math.ceil((MAX_EXACT_CHARS * 3) / 7));
    expect(text.length).toBeGreaterThan(MAX_EXACT_CHARS);
    expect(countTokens(text)).toBe(estimateTokens(text));
    expect(countTokens(text)).toBe(Math.ceil(text.length / 4));
  });

  it("is exact up to the threshold", () => {
    const text = "word ".repeat(1000);
    expect(countTokens(text)).toBeGreaterThanOrEqual(1000);
    expect(countTokens(text)).toBeLessThanOrEqual(1001);
  });
});

describe("truncateToTokens", () => {
  const text = "Synthex folds agent conversations into durable memories. ".repeat(50);

  it("returns a prefix of at most max tokens", () => {
    for (const max of [1, 5, 17, 100]) {
      const out = truncateToTokens(text, max);
      expect(text.startsWith(out)).toBe(true);
      expect(countTokens(out)).toBeLessThanOrEqual(max);
      expect(countTokens(out)).toBeGreaterThanOrEqual(max - 1);
    }
  });

  it("leaves text that fits unchanged and handles empty budgets", () => {
    expect(truncateToTokens("short text", 10)).toBe("short text");
    expect(truncateToTokens("short text", 0)).toBe("");
    expect(truncateToTokens("short text", -3)).toBe("");
    expect(truncateToTokens("", 5)).toBe("");
  });

  it("never splits a multi-byte character", () => {
    const emoji = "🧠💾🤖 記憶 ".repeat(40);
    for (let max = 1; max < 30; max++) {
      const out = truncateToTokens(emoji, max);
      expect(emoji.startsWith(out)).toBe(true);
      expect(out).not.toContain("\uFFFD");
      expect(countTokens(out)).toBeLessThanOrEqual(max);
    }
  });

  it("truncates huge inputs to a prefix within the budget", () => {
    // Speed is measured by benches, not asserted here (a loaded machine would fail a timed test).
    const huge = "lorem ipsum dolor sit amet ".repeat(40_000); // ~1 MB
    const out = truncateToTokens(huge, 300);
    expect(huge.startsWith(out)).toBe(true);
    expect(countTokens(out)).toBeLessThanOrEqual(300);
    expect(countTokens(out)).toBeGreaterThan(290);
  });
});
