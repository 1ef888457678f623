import { describe, expect, it } from "vitest";
import { extractNarrative, narrativeText } from "./narrative";
import { classifyTopic, DEFAULT_TOPIC_FALLBACK } from "./topics";

describe("narrative operator (offline Synapse entities)", () => {
  const session = [
    "# Catching up\n2023-05-08",
    "Caroline: I'm so excited about the adoption! I've been struggling with the paperwork though.",
    "Melanie: We went camping at the lake last weekend, it was so peaceful. I finally fixed the leaking tent.",
    "Caroline: The weather is nice.",
  ].join("\n\n");

  it("attributes each finding to its speaker, with evidence, energy and status", () => {
    const n = extractNarrative(session);
    expect(n.mental_state).toEqual([
      { who: "Caroline", mood: ["excited"], energy_level: "high", evidence: "I'm so excited about the adoption!" },
      { who: "Melanie", mood: ["peaceful"], energy_level: "medium", evidence: "We went camping at the lake last weekend, it was so peaceful." },
    ]);
    expect(n.tensions).toEqual([
      { who: "Caroline", description: "I've been struggling with the paperwork though.", status: "open" },
      { who: "Melanie", description: "I finally fixed the leaking tent.", status: "resolved" },
    ]);
    expect(n.environment).toEqual([{ who: "Melanie", location_type: "outdoors", vibe: "peaceful", evidence: "We went camping at the lake last weekend, it was so peaceful." }]);
    expect(narrativeText(n).split("\n")).toHaveLength(5);
  });

  it("ignores sentences not about the speaker, and says so when nothing is found", () => {
    const n = extractNarrative("user: The weather report says the office is stressed about the deadline.");
    expect(n).toEqual({ mental_state: [], tensions: [], environment: [] });
    expect(narrativeText(n)).toBe("No mental state, tension or environment mentioned.");
  });

  it("is deterministic", () => {
    expect(extractNarrative(session)).toEqual(extractNarrative(session));
  });
});

describe("topic operator (offline Pyramid mental models)", () => {
  it("picks the label sharing most stemmed keywords, ties to the earlier label, the fallback otherwise", () => {
    expect(classifyTopic("I got a promotion at work and my boss is happy")).toBe("work");
    expect(classifyTopic("Painting and reading books all weekend")).toBe("hobbies");
    expect(classifyTopic("The sky was grey")).toBe(DEFAULT_TOPIC_FALLBACK);
    expect(classifyTopic("Rust borrow checker", { rust: ["borrow", "checker"], go: ["goroutine"] }, "other")).toBe("rust");
    expect(classifyTopic("nothing relevant", { rust: ["borrow"] }, "other")).toBe("other");
  });
});
