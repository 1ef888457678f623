/**
 * The lexical baselines of shared/tools/locomo-baseline, reproduced inside Synthex as the
 * `bm25-sessions` and `bm25-windows` templates, must match the script within ±0.01 on the LoCoMo
 * dev split. Needs ../shared/data/locomo-dev (never committed: CC BY-NC) and a Python with NLTK to
 * run the script; says so and skips when either is absent.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { runEval } from "./service";
import { evalWorkspace } from "./testing/eval-workspace";

const DATA = path.resolve("../shared/data/locomo-dev/locomo-dev.json");
const SCRIPT = path.resolve("../shared/tools/locomo-baseline");

function baselineRows(): Record<string, Record<string, number>> | null {
  if (!existsSync(DATA) || !existsSync(SCRIPT)) return null;
  for (const python of ["/usr/bin/python3", "python3"]) {
    const out = spawnSync(python, [SCRIPT, DATA], { encoding: "utf8", timeout: 120_000 });
    if (out.status !== 0) continue;
    const rows: Record<string, Record<string, number>> = {};
    for (const line of out.stdout.split("\n")) {
      const [kind, ...rest] = line.trim().split(/\s+/);
      if (!kind || kind === "questions") continue;
      const row: Record<string, number> = {};
      for (let i = 0; i + 1 < rest.length; i += 2) row[rest[i]!] = Number(rest[i + 1]);
      rows[kind] = row;
    }
    return rows;
  }
  return null;
}

const baseline = baselineRows();
/** Shown beside each skipped test and in `npm test`'s list of skips. */
const SKIP_REASON = `needs ${DATA} (the LoCoMo dev split beside the repository) and python3 with NLTK (apt-get install -y python3-nltk)`;

describe("BM25 templates on the LoCoMo dev split match shared/tools/locomo-baseline", () => {
  let db: Db;
  let close: () => Promise<void>;
  let workspaceId: string;
  let datasetId: string;
  beforeEach((ctx) => ctx.skip(!baseline, SKIP_REASON));
  beforeAll(async () => {
    if (!baseline) return;
    ({ db, close, workspaceId, datasetId } = await evalWorkspace("dev-split@example.com", { text: readFileSync(DATA, "utf8"), name: "locomo-dev.json" }));
  }, 120_000);
  afterAll(() => close?.());

  it.each([
    ["bm25-sessions", "session"],
    ["bm25-windows", "window"],
  ] as const)("%s within 0.01 of the script's %s row", async (template, row) => {
    const run = await runEval(db, { workspaceId, template, datasetId });
    expect(run.status).toBe("completed");
    expect(run.questions).toBe(383);
    const m = run.metrics as Record<string, number>;
    const b = baseline![row]!;
    const pairs: Array<[string, string]> = [
      ["session_hit@1", "hit@1"],
      ["session_hit@3", "hit@3"],
      ["session_hit@5", "hit@5"],
      ["session_recall@5", "recall@5"],
      ["evidence_recall@10", "evidence_recall@10"],
      ["evidence_recall@2k", "evidence_recall@2k"],
    ];
    for (const [ours, theirs] of pairs) expect(Math.abs(m[ours]! - b[theirs]!), `${ours}: ${m[ours]} vs ${b[theirs]}`).toBeLessThanOrEqual(0.01);
    expect(Math.abs(m.context_tokens! - b.ctx_tokens!) / b.ctx_tokens!).toBeLessThanOrEqual(0.01);
  }, 300_000);
});
