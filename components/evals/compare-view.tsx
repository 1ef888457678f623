"use client";
import { useQuery } from "@tanstack/react-query";
import { AlertTriangle } from "lucide-react";
import dynamic from "next/dynamic";
import { useMemo } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Card, CardContent, CardHeader, CardTitle } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { cn } from "@/components/ui/cn";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { JudgeCell } from "./judge-cell";
import { fmtDelta, fmtMetric, HEADLINE_METRICS, type EvalComparison } from "./format";
import { QuestionCompare } from "./question-compare";
import { runColors } from "./run-colors";

/** The charts (the chart library is most of the page's JavaScript): loaded after the page shows, below the fold. */
const CompareCharts = dynamic(() => import("./compare-charts").then((m) => m.CompareCharts), { ssr: false, loading: () => <Skeleton className="h-72 w-full" /> });

/** Baseline and others: metric cards with deltas, charts that answer one question each, and question by question. */
export function CompareView({ baselineId, otherIds }: { baselineId: string; otherIds: string[] }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const cmp = useQuery(trpc.evals.compare.queryOptions({ workspaceId: workspace.id, baselineId, otherIds, questions: false }));
  if (cmp.isPending) return <Skeleton className="h-96 w-full" />;
  if (cmp.isError) return <EmptyState icon={AlertTriangle} title="This comparison could not be loaded" description={errorMessage(cmp.error)} />;
  return <Comparison data={cmp.data} />;
}

function Comparison({ data }: { data: EvalComparison }) {
  const baseline = data.runs[0]!;
  const benchmark = data.benchmark;
  // One colour per run, the same in every chart and table of the page.
  const colors = useMemo(() => runColors(data.runs.map((r) => r.id)), [data.runs]);
  return (
    <div className="grid gap-6" data-testid="compare-view">
      <section className="grid gap-3">
        <div className="flex flex-wrap gap-2 text-sm">
          {data.runs.map((r, i) => (
            <span key={r.id} className="inline-flex items-center gap-1.5 rounded-full border px-2.5 py-1">
              <span className="size-2.5 rounded-full" style={{ background: colors.get(r.id) }} />
              {r.label}
              <span className="text-muted-foreground">
                {r.version ? ` ${r.version}` : ""} · {r.mode}
                {r.step ? ` @ ${r.step}` : ""}
              </span>
              {i === 0 && <span className="text-xs text-muted-foreground">(baseline)</span>}
            </span>
          ))}
        </div>
        {/* Cards at least 15rem wide (as many per row as fit), each run's value and delta never
            shrunk: when a label and its numbers do not fit one line, the numbers wrap below it. */}
        <div className="grid grid-cols-[repeat(auto-fill,minmax(15rem,1fr))] gap-3" data-testid="metric-cards">
          {HEADLINE_METRICS.map((m) => (
            <Card key={m} data-testid={`metric-card-${m}`} data-metric={m} className="min-w-0 gap-2 py-4">
              <CardHeader className="px-4">
                <CardTitle className="font-mono text-xs break-all text-muted-foreground">{m}</CardTitle>
              </CardHeader>
              <CardContent className="grid gap-1.5 px-4">
                {data.runs.map((r, i) => {
                  const v = r.metrics[m as keyof typeof r.metrics];
                  const d = i > 0 ? fmtDelta(m, r.deltas[m] ?? 0) : null;
                  return (
                    <div key={r.id} className="flex flex-wrap items-baseline justify-between gap-x-2 text-sm" data-testid="metric-card-row" data-run={r.id}>
                      <span className="min-w-0 text-xs break-words text-muted-foreground" title={r.label}>
                        {r.label}
                      </span>
                      <span className="ml-auto shrink-0 whitespace-nowrap tabular-nums">
                        <span className={cn("inline-block", i === 0 && "font-semibold")} data-testid="metric-card-value" data-metric={m} data-run={r.id}>
                          {fmtMetric(m, v)}
                        </span>
                        {d && (
                          <span
                            className={cn("ml-1.5 inline-block text-xs", d.good === true && "text-emerald-600", d.good === false && "text-red-600", d.good === null && "text-muted-foreground")}
                            data-testid="metric-card-delta"
                            data-metric={m}
                            data-run={r.id}
                          >
                            {d.text}
                          </span>
                        )}
                      </span>
                    </div>
                  );
                })}
              </CardContent>
            </Card>
          ))}
        </div>
      </section>

      <section className="grid gap-2">
        <h2 className="text-base font-semibold">Answers</h2>
        <Table data-testid="answer-scores">
          <TableHeader>
            <TableRow>
              <TableHead>Run</TableHead>
              <TableHead>Answered by</TableHead>
              <TableHead>Judged by</TableHead>
              <TableHead className="text-right">F1</TableHead>
              <TableHead className="text-right">j</TableHead>
            </TableRow>
          </TableHeader>
          <TableBody>
            {data.runs.map((r) => (
              <TableRow key={r.id} data-testid="answer-scores-row" data-label={r.label}>
                <TableCell>{r.label}</TableCell>
                <TableCell className="font-mono text-xs">{r.judge.measured ? r.judge.answerModel : "extractive (offline)"}</TableCell>
                <TableCell className="font-mono text-xs">{r.judge.measured ? r.judge.judgeModel : "—"}</TableCell>
                <TableCell className="text-right tabular-nums">{fmtMetric("f1", r.metrics.f1)}</TableCell>
                <TableCell className="text-right tabular-nums" data-testid="compare-j">
                  <JudgeCell run={r} />
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </section>

      <CompareCharts baselineId={baseline.id} otherIds={data.runs.slice(1).map((r) => r.id)} benchmark={benchmark} colors={colors} />
      <QuestionCompare baselineId={baseline.id} runs={data.runs} benchmark={benchmark} colors={colors} />
    </div>
  );
}
