"use client";
import { useQuery } from "@tanstack/react-query";
import { usePathname, useSearchParams } from "next/navigation";
import { useCallback, useState } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Skeleton } from "@/components/ui/skeleton";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { cn } from "@/components/ui/cn";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { OUTCOME_METRICS, QUESTION_OUTCOMES, RIGHT_AT, type OutcomeMetric, type QuestionOutcome } from "@/server/eval/compare-kinds";
import { RunDot } from "./run-dot";
import { CATEGORY_NAMES, fmtMetric } from "./format";
import { QuestionDrilldown } from "./question-drilldown";

const selectClass = "rounded-md border bg-background px-2 py-1 text-sm";
const SHOWN = 300;

export const OUTCOME_LABELS: Record<QuestionOutcome, string> = {
  regressed: "regressed",
  improved: "improved",
  both_wrong: "both wrong",
  both_right: "both right",
  only_one: "in one run only",
};

const OUTCOME_STYLE: Record<QuestionOutcome, string> = {
  regressed: "bg-red-100 text-red-700 dark:bg-red-950 dark:text-red-300",
  improved: "bg-emerald-100 text-emerald-700 dark:bg-emerald-950 dark:text-emerald-300",
  both_wrong: "bg-amber-100 text-amber-800 dark:bg-amber-950 dark:text-amber-300",
  both_right: "text-muted-foreground",
  only_one: "text-muted-foreground",
};

interface Run {
  id: string;
  label: string;
}

/** The choices' search parameters: the run compared against, the metric, the outcome shown. */
export const QUESTION_PARAMS = { against: "against", metric: "qmetric", outcome: "outcome" } as const;

/**
 * Question by question's choices, kept in the page's URL (replaced, not pushed: Back leaves the
 * page, and coming back — Back from a record opened here, or a reload — finds them again). A value
 * the page does not offer (a run no longer compared, an unknown metric) falls back to the default.
 */
function useQuestionChoices(otherIds: string[]) {
  const params = useSearchParams();
  const pathname = usePathname();
  const against = params.get(QUESTION_PARAMS.against);
  const metric = params.get(QUESTION_PARAMS.metric);
  const outcome = params.get(QUESTION_PARAMS.outcome);
  const set = useCallback(
    (key: keyof typeof QUESTION_PARAMS, value: string | null) => {
      const next = new URLSearchParams(window.location.search);
      if (value) next.set(QUESTION_PARAMS[key], value);
      else next.delete(QUESTION_PARAMS[key]);
      window.history.replaceState(null, "", `${pathname}?${next.toString()}`);
    },
    [pathname],
  );
  return {
    otherId: against && otherIds.includes(against) ? against : (otherIds[0] ?? ""),
    metric: (OUTCOME_METRICS as readonly string[]).includes(metric ?? "") ? (metric as OutcomeMetric) : "session_hit@5",
    filter: (QUESTION_OUTCOMES as readonly string[]).includes(outcome ?? "") ? (outcome as QuestionOutcome) : ("all" as const),
    set,
  };
}

/**
 * The baseline against one run, question by question: each question in one outcome (the counts
 * add up to the questions), a filter per outcome, and a question opened with every run's hits.
 */
export function QuestionCompare({ baselineId, runs, benchmark, colors }: { baselineId: string; runs: Run[]; benchmark: string; colors: Map<string, string> }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const others = runs.filter((r) => r.id !== baselineId);
  const choices = useQuestionChoices(others.map((r) => r.id));
  const { otherId, metric, filter } = choices;
  const setOtherId = (id: string) => choices.set("against", id);
  const setMetric = (m: OutcomeMetric) => choices.set("metric", m);
  const setFilter = (f: QuestionOutcome | "all") => choices.set("outcome", f === "all" ? null : f);
  const [open, setOpen] = useState<string | null>(null);
  const cmp = useQuery({
    ...trpc.evals.compareQuestions.queryOptions({ workspaceId: workspace.id, baselineId, otherId, metric }),
    enabled: !!otherId,
    placeholderData: (prev) => prev,
  });
  const baseline = runs.find((r) => r.id === baselineId);
  const other = runs.find((r) => r.id === otherId);
  const names = CATEGORY_NAMES[benchmark] ?? {};
  if (!others.length) return <p className="text-sm text-muted-foreground">Add a second run to compare question by question.</p>;
  const rows = (cmp.data?.rows ?? []).filter((q) => filter === "all" || q.outcome === filter);
  return (
    <section className="grid gap-3" data-testid="question-compare">
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <h2 className="text-base font-semibold">Question by question</h2>
        <span className="flex items-center gap-1.5">
          {baseline && <RunDot color={colors.get(baseline.id)!} />}
          {baseline?.label} against
        </span>
        <select className={selectClass} aria-label="Compare the baseline against" value={otherId} onChange={(e) => setOtherId(e.target.value)} data-testid="question-against">
          {others.map((r) => (
            <option key={r.id} value={r.id}>
              {r.label}
            </option>
          ))}
        </select>
        <label className="flex items-center gap-2">
          right when
          <select className={selectClass} aria-label="Question metric" value={metric} data-testid="question-metric" onChange={(e) => setMetric(e.target.value as OutcomeMetric)}>
            {OUTCOME_METRICS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
          ≥ {RIGHT_AT}
        </label>
      </div>
      {cmp.isPending ? (
        <Skeleton className="h-48 w-full" />
      ) : cmp.isError ? (
        <p className="text-sm text-destructive">{errorMessage(cmp.error)}</p>
      ) : (
        <>
          <div className={cn("flex flex-wrap items-center gap-2 text-sm", cmp.isPlaceholderData && "opacity-60")} data-testid="question-counts" data-total={cmp.data.total} data-other={cmp.data.otherId} data-metric={cmp.data.metric} aria-busy={cmp.isPlaceholderData}>
            <button type="button" onClick={() => setFilter("all")} className={cn("rounded-full border px-2.5 py-1", filter === "all" && "border-primary bg-primary/10")} data-testid="outcome-filter-all" aria-pressed={filter === "all"}>
              all <span className="tabular-nums">{cmp.data.total}</span> questions
            </button>
            <span className="text-muted-foreground">=</span>
            {QUESTION_OUTCOMES.filter((k) => k !== "only_one" || cmp.data.counts.only_one > 0).map((k) => (
              <button
                key={k}
                type="button"
                onClick={() => setFilter(k)}
                data-testid={`outcome-filter-${k}`}
                data-count={cmp.data.counts[k]}
                aria-pressed={filter === k}
                className={cn("rounded-full border px-2.5 py-1", OUTCOME_STYLE[k], filter === k && "ring-2 ring-primary")}
              >
                <span className="tabular-nums">{cmp.data.counts[k]}</span> {OUTCOME_LABELS[k]}
              </button>
            ))}
          </div>
          {cmp.data.apart > 0 && (
            <p className="text-xs text-muted-foreground" data-testid="question-count-note" data-scored={cmp.data.scored} data-apart={cmp.data.apart}>
              <span className="tabular-nums">{cmp.data.scored}</span> scored · <span className="tabular-nums">{cmp.data.apart}</span> {cmp.data.apartLabel} not scored: the
              leaderboard&rsquo;s metrics and question count leave the {cmp.data.apartLabel} questions out; they are listed here too, marked.
            </p>
          )}
          <Table data-testid="question-table" className="table-fixed">
            <colgroup>
              <col className="w-32" />
              <col />
              <col className="w-40" />
              <col className="w-28" />
              <col className="w-28" />
            </colgroup>
            <TableHeader>
              <TableRow>
                <TableHead>Outcome</TableHead>
                <TableHead>Question</TableHead>
                <TableHead>Category</TableHead>
                <TableHead className="text-right whitespace-normal" title={baseline?.label}>
                  baseline
                </TableHead>
                <TableHead className="text-right whitespace-normal" title={other?.label}>
                  <span className="inline-flex items-center gap-1.5">{other && <RunDot color={colors.get(other.id)!} />}other</span>
                </TableHead>
              </TableRow>
            </TableHeader>
            <TableBody>
              {rows.slice(0, SHOWN).map((q) => (
                <TableRow key={q.questionId} data-testid="question-row" data-outcome={q.outcome} className="cursor-pointer" onClick={() => setOpen(q.questionId)}>
                  <TableCell>
                    <span className={cn("rounded px-1.5 py-0.5 text-xs", OUTCOME_STYLE[q.outcome])}>{OUTCOME_LABELS[q.outcome]}</span>
                  </TableCell>
                  <TableCell className="whitespace-normal break-words">
                    <button type="button" className="text-left hover:underline" data-testid="question-open">
                      {q.question}
                    </button>
                  </TableCell>
                  <TableCell className="whitespace-normal break-words text-xs" data-testid="question-category">
                    {names[q.category] ?? q.category}
                    {q.apart && <span className="block text-muted-foreground">not scored ({cmp.data.apartLabel})</span>}
                  </TableCell>
                  <TableCell className="text-right tabular-nums text-xs">{fmtMetric(metric, q.base)}</TableCell>
                  <TableCell className="text-right tabular-nums text-xs">{fmtMetric(metric, q.other)}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
          {rows.length > SHOWN && (
            <p className="text-xs text-muted-foreground">
              Showing {SHOWN} of {rows.length} questions.
            </p>
          )}
        </>
      )}
      <QuestionDrilldown questionId={open} runs={runs} colors={colors} onClose={() => setOpen(null)} />
    </section>
  );
}
