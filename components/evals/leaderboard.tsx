"use client";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { AlertTriangle, ArrowDown, ArrowUp, Copy, Download, Info, X } from "lucide-react";
import { useEffect, useMemo, useState } from "react";
import { RunStatusBadge } from "@/components/runs/run-status-badge";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { toast } from "@/components/ui/sonner";
import { cn } from "@/components/ui/cn";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { fmtInterval, fmtMs, fmtSigned, fmtTokens, fmtUsd, fmtValue, leaderboardCsv, leaderboardMarkdown } from "@/server/eval/leaderboard-export";
import type { EvalLeaderboard, LeaderboardRunRow } from "./format";
import { RetryButton } from "./retry-button";
import { runColors } from "./run-colors";

type SortKey = { kind: "metric"; metric: string } | { kind: "delta"; metric: string } | { kind: "label" } | { kind: "buildCost" } | { kind: "queryTokens" } | { kind: "latency" };

const sortValue = (row: LeaderboardRunRow, key: SortKey): number | string | null => {
  switch (key.kind) {
    case "metric":
      return row.metrics[key.metric]?.value ?? null;
    case "delta":
      return row.metrics[key.metric]?.delta ?? null;
    case "label":
      return row.label;
    case "buildCost":
      return row.buildCostUsd;
    case "queryTokens":
      return row.queryTokens;
    case "latency":
      return row.latencyP50Ms;
  }
};

/** A metric name that may wrap after "_" and before "@" (narrow screens). */
function breakable(metric: string) {
  const parts = metric.split(/(?<=_)|(?=@)/);
  return parts.map((p, i) => (
    <span key={i}>
      {i > 0 ? <wbr /> : null}
      {p}
    </span>
  ));
}

const sameKey = (a: SortKey | null, b: SortKey) => !!a && a.kind === b.kind && ("metric" in a ? a.metric : "") === ("metric" in b ? b.metric : "");

/**
 * The leaderboard: one row per run, the baseline pinned on top, each headline metric with its delta
 * and 95% interval (the paired bootstrap of server/eval/leaderboard-rows.ts), build and query cost,
 * latency; runs that failed or are running are rows with their state, reason, progress and Retry.
 */
export function Leaderboard({ runIds, baselineId, onLoaded, onRemove }: {
  runIds: string[];
  baselineId?: string;
  /** Called with each answer (e.g. to learn the default baseline). */
  onLoaded?: (board: EvalLeaderboard) => void;
  /** Offered as × on non-baseline rows: take the run out of the comparison. */
  onRemove?: (id: string) => void;
}) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const board = useQuery({
    ...trpc.evals.leaderboard.queryOptions({ workspaceId: workspace.id, runIds, baselineId }, { enabled: runIds.length > 0 }),
    refetchInterval: (q) => (q.state.data?.rows.some((r) => r.status === "queued" || r.status === "running") ? 1500 : false),
    // A run joining or leaving keeps the table on screen until the new answer arrives.
    placeholderData: keepPreviousData,
  });
  useEffect(() => {
    if (board.data) onLoaded?.(board.data);
  }, [board.data, onLoaded]);
  if (!runIds.length) return null;
  if (board.isPending) return <Skeleton className="h-48 w-full" data-testid="leaderboard-loading" />;
  if (board.isError) return <EmptyState icon={AlertTriangle} title="The leaderboard could not be loaded" description={errorMessage(board.error)} />;
  return <LeaderboardTable board={board.data} onRemove={onRemove} />;
}

function LeaderboardTable({ board, onRemove }: { board: EvalLeaderboard; onRemove?: (id: string) => void }) {
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean } | null>(null);
  const colors = useMemo(() => runColors(board.rows.map((r) => r.id)), [board.rows]);
  const lower = new Set(board.lowerIsBetter);
  const rows = useMemo(() => {
    if (!sort) return board.rows;
    const [pinned, rest] = [board.rows.filter((r) => r.isBaseline), board.rows.filter((r) => !r.isBaseline)];
    const sorted = [...rest].sort((a, b) => {
      const [x, y] = [sortValue(a, sort.key), sortValue(b, sort.key)];
      if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1; // no value: last either way
      const c = typeof x === "string" ? x.localeCompare(String(y)) : x - (y as number);
      return sort.desc ? -c : c;
    });
    return [...pinned, ...sorted];
  }, [board.rows, sort]);
  const toggle = (key: SortKey) => setSort((s) => (sameKey(s?.key ?? null, key) ? { key, desc: !s!.desc } : { key, desc: key.kind !== "label" && key.kind !== "latency" && key.kind !== "buildCost" && key.kind !== "queryTokens" }));
  const arrow = (key: SortKey) => (sameKey(sort?.key ?? null, key) ? sort!.desc ? <ArrowDown className="inline size-3" /> : <ArrowUp className="inline size-3" /> : null);
  const head = "px-1.5 py-2 text-left align-bottom text-xs font-medium text-muted-foreground";
  const sortButton = "inline-flex items-center gap-0.5 hover:text-foreground";

  const copyMarkdown = async () => {
    await navigator.clipboard.writeText(leaderboardMarkdown(board));
    toast.success("Leaderboard copied as Markdown");
  };
  const downloadCsv = () => {
    const url = URL.createObjectURL(new Blob([leaderboardCsv(board)], { type: "text/csv" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = `leaderboard-${board.benchmark ?? "eval"}.csv`;
    a.click();
    URL.revokeObjectURL(url);
  };

  return (
    <section className="grid gap-2" data-testid="leaderboard">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 className="text-base font-semibold">Leaderboard</h2>
        <div className="flex gap-2">
          <Button size="sm" variant="outline" onClick={copyMarkdown} data-testid="leaderboard-copy-md">
            <Copy className="size-3.5" /> Markdown
          </Button>
          <Button size="sm" variant="outline" onClick={downloadCsv} data-testid="leaderboard-csv">
            <Download className="size-3.5" /> CSV
          </Button>
        </div>
      </div>
      <p className="text-xs text-muted-foreground">
        Δ is the difference to the baseline; the bracket is its 95% interval from a paired bootstrap over the questions. &ldquo;within noise&rdquo; when the interval includes zero.
      </p>
      {/* Why this baseline (the server's rule, the same `synthex eval compare` prints); the full rule on hover. */}
      <p className="flex items-start gap-1.5 text-xs text-muted-foreground" data-testid="leaderboard-baseline-rule" data-kind={board.baselineRule.kind} title={board.baselineRule.rule}>
        <Info className="mt-0.5 size-3.5 shrink-0" aria-hidden />
        <span>
          Baseline: <span className="font-medium text-foreground">{board.rows.find((r) => r.isBaseline)?.label ?? "none"}</span>. {board.baselineRule.text}
          <span className="sr-only"> {board.baselineRule.rule}</span>
        </span>
      </p>
      <div className="w-full overflow-x-auto rounded-lg border">
        <table className="w-full border-collapse text-sm" data-testid="leaderboard-table">
          <thead className="border-b bg-muted/40">
            <tr>
              <th className={cn(head, "min-w-32")}>
                <button type="button" className={sortButton} onClick={() => toggle({ kind: "label" })}>
                  Run {arrow({ kind: "label" })}
                </button>
              </th>
              {board.metrics.map((m) => (
                <th key={m} className={cn(head, "text-right")} data-testid={`leaderboard-head-${m}`}>
                  <button type="button" className={cn(sortButton, "font-mono")} onClick={() => toggle({ kind: "metric", metric: m })} title={`Sort by ${m}`}>
                    <span>{breakable(m)}</span> {arrow({ kind: "metric", metric: m })}
                  </button>
                  <br />
                  <button type="button" className={cn(sortButton, "text-[11px] font-normal")} onClick={() => toggle({ kind: "delta", metric: m })} title={`Sort by the delta of ${m}`}>
                    Δ · CI {arrow({ kind: "delta", metric: m })}
                  </button>
                </th>
              ))}
              <th className={cn(head, "text-right")}>
                <button type="button" className={sortButton} onClick={() => toggle({ kind: "buildCost" })}>
                  Build {arrow({ kind: "buildCost" })}
                </button>
                <br />
                <button type="button" className={cn(sortButton, "text-[11px] font-normal")} onClick={() => toggle({ kind: "queryTokens" })}>
                  per query {arrow({ kind: "queryTokens" })}
                </button>
                <br />
                <button type="button" className={cn(sortButton, "text-[11px] font-normal")} onClick={() => toggle({ kind: "latency" })}>
                  latency {arrow({ kind: "latency" })}
                </button>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <LeaderboardRowView key={r.id} row={r} metrics={board.metrics} lower={lower} color={colors.get(r.id)!} apartLabel={board.apartLabel} onRemove={onRemove} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function LeaderboardRowView({
  row,
  metrics,
  lower,
  color,
  apartLabel,
  onRemove,
}: {
  row: LeaderboardRunRow;
  metrics: string[];
  lower: Set<string>;
  color: string;
  apartLabel: string;
  onRemove?: (id: string) => void;
}) {
  const done = row.status === "completed";
  const cell = "px-1.5 py-2 align-top";
  const num = "block whitespace-nowrap tabular-nums";
  return (
    <tr className={cn("border-b last:border-0", row.isBaseline && "bg-muted/30")} data-testid="leaderboard-row" data-run={row.id} data-status={row.status} data-baseline={row.isBaseline ? "true" : undefined}>
      <td className={cn(cell, "min-w-32")}>
        <div className="flex items-start gap-2">
          <span className="mt-1.5 size-2.5 shrink-0 rounded-full" style={{ background: color }} data-testid="leaderboard-color" data-color={color} />
          <div className="grid min-w-0 gap-0.5">
            <span className="font-medium break-words" data-testid="leaderboard-label" title={`spec ${row.specHash}`}>
              {row.label}
            </span>
            <span className="text-xs break-words text-muted-foreground">
              {row.mode}
              {row.step ? ` @ ${row.step}` : ""}
              {row.version ? ` · ${row.version}` : ""}
              {done && !row.questionsApart ? ` · ${row.questions} q` : ""}
            </span>
            {done && row.questionsApart ? (
              <span className="text-xs break-words text-muted-foreground" data-testid="leaderboard-questions" data-scored={row.questions} data-apart={row.questionsApart}>
                {row.questions} q scored · {row.questionsApart} {apartLabel} not scored
              </span>
            ) : null}
            {row.isBaseline ? <span className="text-xs font-medium text-primary">baseline</span> : null}
            {row.offlineStandIn ? (
              <span className="text-xs break-words text-amber-700 dark:text-amber-400" data-testid="leaderboard-offline">
                {row.offlineStandIn}
              </span>
            ) : null}
            {row.note ? <span className="text-xs break-words text-muted-foreground">{row.note}</span> : null}
          </div>
          {onRemove && !row.isBaseline ? (
            <button type="button" className="ml-auto text-muted-foreground hover:text-foreground" onClick={() => onRemove(row.id)} aria-label={`Remove ${row.label} from the comparison`}>
              <X className="size-3.5" />
            </button>
          ) : null}
        </div>
      </td>
      {done ? (
        <>
          {metrics.map((m) => {
            const c = row.metrics[m];
            const good = c?.delta == null || Math.abs(c.delta) < 5e-7 ? null : lower.has(m) ? c.delta < 0 : c.delta > 0;
            return (
              <td key={m} className={cn(cell, "text-right")} data-metric={m}>
                <span className={cn(num, row.isBaseline && "font-semibold")} data-testid="lb-value" data-metric={m}>
                  {fmtValue(m, c?.value)}
                </span>
                {c && c.delta !== null ? (
                  <>
                    <span className={cn(num, "text-xs", c.withinNoise ? "text-muted-foreground" : good ? "text-emerald-600" : good === false ? "text-red-600" : "text-muted-foreground")} data-testid="lb-delta" data-metric={m}>
                      {fmtSigned(m, c.delta)}
                    </span>
                    {c.ci95 ? (
                      <span className="block text-[11px] text-muted-foreground tabular-nums" data-testid="lb-ci" data-metric={m}>
                        {fmtInterval(m, c.ci95)}
                      </span>
                    ) : null}
                    {c.withinNoise ? <span className={cn(num, "text-[11px] text-muted-foreground italic")}>within noise</span> : null}
                  </>
                ) : null}
              </td>
            );
          })}
          <td className={cn(cell, "text-right")}>
            <span className={num} data-testid="lb-build-cost" title={`${fmtTokens(row.buildTokens)} build tokens`}>
              {fmtUsd(row.buildCostUsd)}
            </span>
            <span className={cn(num, "text-xs")} data-testid="lb-query-tokens" title="context tokens read per question">
              {fmtTokens(row.queryTokens)} tok/q
            </span>
            <span className={cn(num, "text-xs text-muted-foreground")} data-testid="lb-query-cost" title="answer and judge spend per question">
              {fmtUsd(row.queryCostUsd)}/q
            </span>
            <span className={cn(num, "text-xs text-muted-foreground")} data-testid="lb-latency" title={`search latency p50 (p95 ${fmtMs(row.latencyP95Ms)})`}>
              {fmtMs(row.latencyP50Ms)}
            </span>
          </td>
        </>
      ) : (
        <td className={cell} colSpan={metrics.length + 1}>
          <RunState row={row} />
        </td>
      )}
    </tr>
  );
}

/** A run that did not complete: state, per-run progress or the reason, and Retry. */
function RunState({ row }: { row: LeaderboardRunRow }) {
  const p = row.progress;
  const pct = p && p.total > 0 ? Math.round((100 * p.done) / p.total) : 0;
  return (
    <div className="flex flex-wrap items-center gap-3" data-testid="leaderboard-state">
      <RunStatusBadge status={row.status} />
      {p && (row.status === "running" || row.status === "queued") ? (
        <span className="flex items-center gap-2 text-xs text-muted-foreground" data-testid="leaderboard-progress">
          <span className="h-1.5 w-32 overflow-hidden rounded-full bg-muted">
            <span className="block h-full bg-primary" style={{ width: `${pct}%` }} />
          </span>
          {p.phase} {p.done.toLocaleString("en-US")}/{p.total.toLocaleString("en-US")}
        </span>
      ) : null}
      {row.error ? (
        <span className="min-w-0 flex-1 text-sm break-words text-red-700 dark:text-red-400" data-testid="leaderboard-reason">
          {row.error}
        </span>
      ) : null}
      <RetryButton run={row} testId="leaderboard-retry" />
    </div>
  );
}
