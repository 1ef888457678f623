/** `synthex eval freshness`: a small run (1 person, memex and mem0) reports the metrics per template, as JSON. */
import { describe, expect, it, vi } from "vitest";
import { freshnessCommand } from "./eval-freshness";

const fail = (message: string): never => {
  throw new Error(message);
};

describe("synthex eval freshness", () => {
  it("builds and scores each template in memory; no memory comes from the assistant", async () => {
    const out: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((s: string) => void out.push(s));
    try {
      await freshnessCommand({ template: "memex,mem0", json: true, people: "1", seed: "3" }, fail, ["memex", "mem0", "chat-memory"]);
    } finally {
      log.mockRestore();
    }
    const report = JSON.parse(out.join("\n")) as { benchmark: string; dataset: { people: number }; results: Array<{ template: string; current1: number; staleAboveCurrent: number; memoriesFromAssistant: number }> };
    expect(report).toMatchObject({ benchmark: "freshness", dataset: { people: 1 } });
    expect(report.results.map((r) => r.template)).toEqual(["memex", "mem0"]);
    for (const r of report.results) {
      expect(r.memoriesFromAssistant).toBe(0);
      expect(r.current1).toBeGreaterThanOrEqual(0.85);
      expect(r.staleAboveCurrent).toBeLessThanOrEqual(0.1);
    }
  }, 120_000);

  it("refuses an unknown template", async () => {
    await expect(freshnessCommand({ template: "nope" }, fail, ["memex"])).rejects.toThrow(/Unknown template "nope"/);
  });
});
