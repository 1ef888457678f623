"use client";
import { fmtDate, fmtUsd } from "@/components/runs/format";
import { RunStatusBadge } from "@/components/runs/run-status-badge";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { fmtMetric, type EvalRunSummary } from "./format";
import { JudgeCell } from "./judge-cell";
import { RetryButton } from "./retry-button";

/** The metric columns, in order: [metric, header, what it means]. */
const METRIC_COLUMNS = [
  ["session_hit@1", "hit@1", "Share of questions whose first hit is from a gold session"],
  ["session_hit@5", "hit@5", "Share of questions with a gold session in the first 5 hits"],
  ["evidence_recall@2k", "recall@2k", "Share of the gold evidence within the first 2,000 context tokens"],
  ["mrr", "mrr", "Mean reciprocal rank of the first gold hit"],
  ["f1", "F1", "Token F1 of the answer against gold"],
] as const;

const head = "h-auto px-1.5 py-2 align-bottom text-xs whitespace-normal";
const num = "px-1.5 text-right tabular-nums";

/**
 * The Evals tab's runs, fitted to the page at 1024 px and up: the status, date and what was scored
 * (benchmark, search) sit under the run's name, the numbers keep their own narrow columns, and a run that did
 * not complete spans the number columns with its progress, its whole reason and Retry.
 */
export function EvalRunsTable({ runs, selected, onToggle, onCancel }: { runs: EvalRunSummary[]; selected: string[]; onToggle: (id: string) => void; onCancel: (id: string) => void }) {
  return (
    <div className="w-full overflow-x-auto" data-testid="eval-runs-frame">
      <table className="w-full text-sm" data-testid="eval-runs-table">
        <thead className="border-b">
          <tr className="text-muted-foreground">
            <th className={cn(head, "w-8")} />
            <th className={cn(head, "text-left")}>Eval</th>
            <th className={cn(head, "text-right")} title="Questions in the headline metrics">
              Questions
            </th>
            {METRIC_COLUMNS.map(([m, label, hint]) => (
              <th key={m} className={cn(head, "text-right")} title={`${m}: ${hint}`}>
                {label}
              </th>
            ))}
            <th className={cn(head, "text-right")} title="LLM judge: share of answers graded CORRECT">
              j
            </th>
            <th className={cn(head, "text-right")} title="What building the eval's memory cost, and the search latency's median">
              Build cost
              <br />
              <span className="font-normal">p50</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <EvalRow key={r.id} run={r} checked={selected.includes(r.id)} baseline={selected[0] === r.id} onToggle={() => onToggle(r.id)} onCancel={() => onCancel(r.id)} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function EvalRow({ run, checked, baseline, onToggle, onCancel }: { run: EvalRunSummary; checked: boolean; baseline: boolean; onToggle: () => void; onCancel: () => void }) {
  const progress = run.progress as { phase?: string; done?: number; total?: number };
  const cost = run.cost as { buildCostUsd?: number };
  const latency = run.latency as { p50?: number };
  const active = run.status === "queued" || run.status === "running";
  const done = run.status === "completed";
  const cell = "px-1.5 py-2 align-top";
  return (
    <tr className="border-b last:border-0 hover:bg-muted/50" data-testid="eval-run-row" data-label={run.label} data-status={run.status} data-run={run.id}>
      <td className={cell}>
        <input type="checkbox" className="mt-1" aria-label={`Select ${run.label}`} checked={checked} disabled={!done} onChange={onToggle} />
      </td>
      <td className={cn(cell, "min-w-40")}>
        <div className="grid gap-0.5">
          <span className="font-medium break-words" data-testid="eval-run-label">
            {run.label}
          </span>
          <span className="flex flex-wrap items-center gap-x-2 gap-y-0.5">
            <RunStatusBadge status={run.status} testId="eval-status" />
            {baseline && <span className="rounded bg-muted px-1.5 py-0.5 text-xs text-muted-foreground">baseline</span>}
            <span className="text-xs text-muted-foreground" data-testid="eval-run-date">
              {fmtDate(run.createdAt)}
            </span>
          </span>
          <span className="text-xs break-words text-muted-foreground" data-testid="eval-run-setting">
            {run.benchmark} · {run.mode}
            {run.step ? ` @ ${run.step}` : " (every indexed step)"}
          </span>
        </div>
      </td>
      {done ? (
        <>
          <td className={cn(cell, num)} data-field="questions">
            <span data-testid="eval-value" data-field="questions">{run.questions}</span>
          </td>
          {METRIC_COLUMNS.map(([m]) => (
            <td key={m} className={cn(cell, num)} data-testid={`metric-${m}`} data-field={m}>
              <span data-testid="eval-value" data-field={m}>
                {fmtMetric(m, run.metrics[m])}
              </span>
            </td>
          ))}
          <td className={cn(cell, num)} data-testid="metric-j" data-field="j">
            {/* A div: the judge cell's own span is the one tests and tooltips read. */}
            <div data-testid="eval-value" data-field="j" className="inline-block">
              <JudgeCell run={run} />
            </div>
          </td>
          <td className={cn(cell, num)} data-field="cost">
            <span className="block whitespace-nowrap" data-testid="eval-value" data-field="buildCostUsd">
              {fmtUsd(cost.buildCostUsd)}
            </span>
            <span className="block text-xs whitespace-nowrap text-muted-foreground" data-testid="eval-value" data-field="p50">
              {latency.p50 !== undefined ? `${latency.p50.toFixed(1)} ms` : "—"}
            </span>
          </td>
        </>
      ) : (
        <td className={cell} colSpan={METRIC_COLUMNS.length + 3} data-testid="eval-run-state">
          <div className="flex flex-wrap items-center gap-2">
            {active && (
              <>
                <span className="text-xs text-muted-foreground" data-testid="eval-run-progress">
                  {progress.phase ?? "queued"} {progress.total ? `${progress.done ?? 0}/${progress.total}` : ""}
                </span>
                <Button size="sm" variant="ghost" onClick={onCancel}>
                  Cancel
                </Button>
              </>
            )}
            {run.error && (
              <span className="min-w-0 flex-1 text-xs break-words text-destructive" data-testid="eval-run-reason">
                {run.error}
              </span>
            )}
            <RetryButton run={run} testId="eval-run-retry" />
          </div>
        </td>
      )}
    </tr>
  );
}
