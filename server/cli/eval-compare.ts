/**
 * `synthex eval compare <run-id…> [--baseline <run-id>] [--json]`: the leaderboard of the Compare
 * page in the terminal (the same service, over tRPC), and the pool that scores several targets
 * (`--template all`) at once, up to the machine's cores.
 */
import { availableParallelism } from "node:os";
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../api/root";
import { fmtDeltaCell, fmtMs, fmtState, fmtTokens, fmtUsd, fmtValue } from "../eval/leaderboard-export";
import type { Connection } from "./api";
import { table } from "./output";

type Board = inferRouterOutputs<AppRouter>["evals"]["leaderboard"];

/** The `--json` shape: per run and metric `value`, `delta`, `ci95: [low, high]`. */
export function leaderboardJson(board: Board) {
  return {
    baselineId: board.baselineId,
    baselineRule: board.baselineRule,
    benchmark: board.benchmark,
    datasetId: board.datasetId,
    metrics: board.metrics,
    runs: board.rows.map((r) => ({
      id: r.id,
      label: r.label,
      baseline: r.isBaseline,
      status: r.status,
      error: r.error,
      progress: r.progress,
      questions: r.questions,
      version: r.version,
      mode: r.mode,
      step: r.step,
      metrics: Object.fromEntries(Object.entries(r.metrics).map(([m, c]) => [m, { value: c.value, delta: c.delta, ci95: c.ci95, withinNoise: c.withinNoise }])),
      buildCostUsd: r.buildCostUsd,
      buildTokens: r.buildTokens,
      queryTokens: r.queryTokens,
      queryCostUsd: r.queryCostUsd,
      latencyP50Ms: r.latencyP50Ms,
      latencyP95Ms: r.latencyP95Ms,
      offlineStandIn: r.offlineStandIn,
      note: r.note,
    })),
  };
}

/** Runs as rows; each metric's value with its delta and 95% interval (marked "within noise" when it spans zero). */
export function leaderboardText(board: Board): string {
  const rows = board.rows.map((r) => ({
    run: `${r.label}${r.isBaseline ? " (baseline)" : ""}`,
    id: r.id,
    state: fmtState(r),
    questions: r.status === "completed" ? r.questions : "",
    ...Object.fromEntries(board.metrics.map((m) => [m, `${fmtValue(m, r.metrics[m]?.value)}${r.isBaseline ? "" : fmtDeltaCell(m, r.metrics[m]) ? ` ${fmtDeltaCell(m, r.metrics[m])}` : ""}`])),
    "build cost": fmtUsd(r.buildCostUsd),
    "query tokens": fmtTokens(r.queryTokens),
    "query cost": fmtUsd(r.queryCostUsd),
    p50: fmtMs(r.latencyP50Ms),
  }));
  const notes = board.rows.filter((r) => r.offlineStandIn || r.note).map((r) => `${r.label}: ${[r.offlineStandIn, r.note].filter(Boolean).join("; ")}`);
  return [
    `Leaderboard · ${board.benchmark ?? "?"} · deltas to the baseline with 95% intervals (paired bootstrap over questions)`,
    `Baseline: ${board.rows.find((r) => r.isBaseline)?.label ?? "none"} · ${board.baselineRule.text}`,
    "",
    table(rows),
    ...(notes.length ? ["", ...notes] : []),
  ].join("\n");
}

export async function compareCommand(conn: Connection, runIds: string[], o: { baseline?: string; json?: boolean }, fail: (message: string, exitCode?: number) => never) {
  if (!runIds.length && !o.baseline) fail("Name the eval runs to compare: synthex eval compare <run-id…> [--baseline <run-id>] (ids from `synthex eval report` or the Evals tab).", 2);
  const board = await conn.api.evals.leaderboard.query({ workspaceId: conn.workspaceId, runIds: runIds.length ? runIds : [o.baseline!], baselineId: o.baseline });
  console.log(o.json ? JSON.stringify(leaderboardJson(board), null, 2) : leaderboardText(board));
}

/** How many evals a command scores at once: the machine's cores, at most the targets. */
export function evalConcurrency(targets: number, env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number(env.SYNTHEX_EVAL_CONCURRENCY);
  const cores = Number.isInteger(configured) && configured > 0 ? configured : availableParallelism();
  return Math.max(1, Math.min(targets, cores));
}

/** Runs `work` over `items`, at most `limit` at a time; results in the items' order. */
export async function pool<T, R>(items: T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!, i);
    }
  });
  await Promise.all(lanes);
  return results;
}
