/**
 * The same template built twice from the same data, in two fresh databases, ranks the same: every
 * question retrieves the same records (by content: record ids are random) in the same order with
 * the same scores, and every metric is equal. Record ids must never decide an order.
 *
 * Runs on the tiny LoCoMo fixture; `SYNTHEX_TWIN_DATA=<locomo.json>` runs it on that file instead
 * (e.g. the dev split, by hand: minutes per template).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runEval } from "./service";
import { storedHitsSchema } from "./stored";
import { evalWorkspace } from "./testing/eval-workspace";

const file = process.env.SYNTHEX_TWIN_DATA?.trim();
const data = file ? { text: readFileSync(file, "utf8"), name: path.basename(file) } : {};
const TEMPLATES = (process.env.SYNTHEX_TWIN_TEMPLATES?.trim() || "chat-memory,synapse,synapsis,pyramid").split(",");

async function build(template: string) {
  const ws = await evalWorkspace("twin@example.com", data);
  try {
    const run = await runEval(ws.db, { workspaceId: ws.workspaceId, template, datasetId: ws.datasetId });
    expect(run.status, run.error ?? "").toBe("completed");
    const cases = await ws.db.evalCase.findMany({ where: { evalRunId: run.id }, orderBy: { position: "asc" }, select: { questionId: true, retrieved: true, scores: true } });
    return {
      metrics: run.metrics,
      // What a question retrieved, by content and rank, without the (random) record ids.
      topK: Object.fromEntries(cases.map((c) => [c.questionId, storedHitsSchema.parse(c.retrieved).map((h) => `${h.step}|${h.score.toFixed(9)}|${h.sessions.join(",")}|${h.goldTurns.join(",")}|${h.turns}|${h.preview}`)])),
      scores: Object.fromEntries(cases.map((c) => [c.questionId, c.scores])),
    };
  } finally {
    await ws.close();
  }
}

describe("twin builds rank the same", () => {
  it.each(TEMPLATES)("%s: identical top-k for every question, every metric delta 0", async (template) => {
    const a = await build(template);
    const b = await build(template);
    const differing = Object.keys(a.topK).filter((q) => JSON.stringify(a.topK[q]) !== JSON.stringify(b.topK[q]));
    expect(Object.keys(a.topK).length).toBeGreaterThan(0);
    const first = differing[0] ? a.topK[differing[0]]!.findIndex((x, i) => x !== b.topK[differing[0]!]![i]) : -1;
    const at = (list?: string[]) => list?.[first]?.replace(/\s+/g, " ").slice(0, 160);
    expect(differing, `questions ranked differently: ${differing.slice(0, 5).join(", ")}; ${differing[0]} at rank ${first + 1}: ${at(a.topK[differing[0]!])} | ${at(b.topK[differing[0]!])}`).toEqual([]);
    expect(b.scores).toEqual(a.scores);
    expect(b.metrics).toEqual(a.metrics);
  }, 1_800_000);
});
