import { describe, expect, it } from "vitest";
import { loadDataset } from "./datasets";
import { generateSynthexBench } from "./synthexbench";

describe("SynthexBench generator", () => {
  it("is deterministic from its seed, and another seed gives another history", () => {
    const a = generateSynthexBench({ seed: 7, size: "tiny" });
    const b = generateSynthexBench({ seed: 7, size: "tiny" });
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    expect(JSON.stringify(generateSynthexBench({ seed: 8, size: "tiny" }).dataset.samples)).not.toBe(JSON.stringify(a.dataset.samples));
  });

  it("plants facts, changes values over time and grows a trend across months, each question traced to its turns", () => {
    const { dataset } = generateSynthexBench({ seed: 3, size: "small" });
    expect(dataset.samples).toHaveLength(2);
    expect(dataset.samples[0]!.sessions).toHaveLength(36);
    const turns = new Map(dataset.samples.flatMap((s) => s.sessions.flatMap((x) => x.turns.map((t) => [`${s.id}/${t.id}`, { text: t.text, session: x.id }] as const))));
    const categories = new Set(dataset.questions.map((q) => q.category));
    expect([...categories].sort()).toEqual(["emergent", "freshness", "planted", "temporal"]);
    for (const q of dataset.questions) {
      expect(q.evidence.length, q.id).toBeGreaterThan(0);
      for (const e of q.evidence) expect(turns.has(`${q.sample}/${e}`), `${q.id} ${e}`).toBe(true);
      expect(q.evidenceSessions).toEqual([...new Set(q.evidence.map((e) => turns.get(`${q.sample}/${e}`)!.session))]);
    }
    for (const q of dataset.questions.filter((x) => x.category === "planted")) {
      expect(q.altitude).toBe("leaf");
      expect(q.evidence.map((e) => turns.get(`${q.sample}/${e}`)!.text).join(" ")).toContain(q.answer);
    }
    for (const q of dataset.questions.filter((x) => x.category === "freshness")) {
      expect(q.stale).toBeTruthy();
      expect(q.stale).not.toBe(q.answer);
      const sample = dataset.samples.find((s) => s.id === q.sample)!;
      const when = (value: string) => sample.sessions.findIndex((s) => s.turns.some((t) => t.text.includes(` ${value} `)));
      expect(when(q.answer), q.question).toBeGreaterThan(when(q.stale!)); // the later value must win
    }
    for (const q of dataset.questions.filter((x) => x.category === "emergent")) {
      expect(q.altitude).toBe("monthly");
      expect(q.evidenceSessions.length).toBeGreaterThanOrEqual(3); // only visible across conversations
    }
  });

  it("sizes go from tiny to large; bad sizes and seeds are refused", () => {
    expect(generateSynthexBench({ size: "tiny" }).dataset.samples[0]!.sessions).toHaveLength(12);
    expect(generateSynthexBench({ size: "large" }).dataset.samples.reduce((a, s) => a + s.sessions.length, 0)).toBe(3600);
    expect(() => loadDataset({ benchmark: "synthexbench", size: "huge" })).toThrow(/Unknown SynthexBench size "huge"/);
    expect(() => loadDataset({ benchmark: "synthexbench", seed: 1.5 })).toThrow(/whole number/);
  });
});
