/**
 * The leaderboard as text: the numbers formatted one way for the page, Markdown (a PR
 * description), CSV and the terminal (`synthex eval compare`). Pure: the browser imports it too.
 */
import type { Leaderboard, LeaderboardCell, LeaderboardRow } from "./leaderboard-rows";

const isCount = (metric: string) => metric === "context_tokens";

export function fmtValue(metric: string, v: number | null | undefined): string {
  if (v === null || v === undefined || Number.isNaN(v)) return "—";
  return isCount(metric) ? Math.round(v).toLocaleString("en-US") : v.toFixed(3);
}

/** "+0.031", "−0.004", "±0". */
export function fmtSigned(metric: string, d: number): string {
  if (Math.abs(d) < 5e-7) return "±0";
  const abs = Math.abs(d);
  return `${d > 0 ? "+" : "−"}${isCount(metric) ? Math.round(abs).toLocaleString("en-US") : abs.toFixed(3)}`;
}

/** "[−0.012, +0.020]". */
export function fmtInterval(metric: string, ci: [number, number] | null): string {
  return ci ? `[${fmtSigned(metric, ci[0])}, ${fmtSigned(metric, ci[1])}]` : "";
}

/** The delta cell as one string: "+0.031 [+0.010, +0.052]" or "+0.004 [−0.012, +0.020] within noise". */
export function fmtDeltaCell(metric: string, cell: LeaderboardCell | undefined): string {
  if (!cell || cell.delta === null) return "";
  const ci = fmtInterval(metric, cell.ci95);
  return `${fmtSigned(metric, cell.delta)}${ci ? ` ${ci}` : ""}${cell.withinNoise ? " within noise" : ""}`;
}

export const fmtUsd = (v: number | null) => (v === null ? "—" : v === 0 ? "$0" : v < 0.01 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`);
export const fmtMs = (v: number | null) => (v === null ? "—" : `${v.toFixed(1)} ms`);
export const fmtTokens = (v: number | null) => (v === null ? "—" : Math.round(v).toLocaleString("en-US"));

/** A run that did not complete: its state, progress or reason. */
export function fmtState(row: LeaderboardRow): string {
  if (row.status === "completed") return "completed";
  const p = row.progress ? ` (${row.progress.phase} ${row.progress.done}/${row.progress.total})` : "";
  return `${row.status}${p}${row.error ? `: ${row.error}` : ""}`;
}

function rowLabel(row: LeaderboardRow): string {
  return `${row.label}${row.version ? ` ${row.version}` : ""}${row.isBaseline ? " (baseline)" : ""}`;
}

/** Header and cells, one array per row: what Markdown, CSV and the terminal table print. */
export function leaderboardTable(board: Leaderboard): { header: string[]; rows: string[][] } {
  const header = ["run", "state", "questions", ...board.metrics.flatMap((m) => [m, `Δ ${m} (95% CI)`]), "build cost", "query tokens", "query cost", "p50 latency"];
  const rows = board.rows.map((r) => [
    rowLabel(r),
    fmtState(r),
    r.status === "completed" ? String(r.questions) : "—",
    ...board.metrics.flatMap((m) => [fmtValue(m, r.metrics[m]?.value), r.isBaseline ? "baseline" : fmtDeltaCell(m, r.metrics[m]) || (r.note ?? "")]),
    fmtUsd(r.buildCostUsd),
    fmtTokens(r.queryTokens),
    fmtUsd(r.queryCostUsd),
    fmtMs(r.latencyP50Ms),
  ]);
  return { header, rows };
}

const mdCell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function leaderboardMarkdown(board: Leaderboard): string {
  const { header, rows } = leaderboardTable(board);
  const lines = [`| ${header.map(mdCell).join(" | ")} |`, `| ${header.map((_, i) => (i < 2 ? "---" : "---:")).join(" | ")} |`, ...rows.map((r) => `| ${r.map(mdCell).join(" | ")} |`)];
  const notes = board.rows.filter((r) => r.offlineStandIn).map((r) => `- ${r.label}: ${r.offlineStandIn}`);
  return [`Leaderboard · ${board.benchmark ?? "?"} · 95% intervals from a paired bootstrap over questions`, "", ...lines, ...(notes.length ? ["", ...notes] : [])].join("\n");
}

const csvCell = (s: string | number | null) => {
  const text = s === null ? "" : String(s);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/** Raw numbers (not formatted): one column per value, delta and interval bound. */
export function leaderboardCsv(board: Leaderboard): string {
  const header = ["run_id", "run", "baseline", "status", "error", "questions", ...board.metrics.flatMap((m) => [m, `${m}_delta`, `${m}_ci95_low`, `${m}_ci95_high`]), "build_cost_usd", "build_tokens", "query_tokens", "query_cost_usd", "latency_p50_ms", "latency_p95_ms"];
  const rows = board.rows.map((r) => [
    r.id,
    r.label,
    r.isBaseline ? "yes" : "",
    r.status,
    r.error,
    r.questions,
    ...board.metrics.flatMap((m) => {
      const c = r.metrics[m];
      return [c?.value ?? null, c?.delta ?? null, c?.ci95?.[0] ?? null, c?.ci95?.[1] ?? null];
    }),
    r.buildCostUsd,
    r.buildTokens,
    r.queryTokens,
    r.queryCostUsd,
    r.latencyP50Ms,
    r.latencyP95Ms,
  ]);
  return [header, ...rows].map((r) => r.map(csvCell).join(",")).join("\n") + "\n";
}
