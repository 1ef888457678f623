"use client";
import { useQuery } from "@tanstack/react-query";
import { AlertTriangle } from "lucide-react";
import { useState } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { fmtUsd } from "@/components/runs/format";
import { Card, CardContent, CardHeader, CardTitle } from "@/components/ui/card";
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from "@/components/ui/dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { Skeleton } from "@/components/ui/skeleton";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { cn } from "@/components/ui/cn";
import { errorMessage, useTRPC } from "@/lib/trpc";
import type { LineageTree } from "@/server/search/provenance";
import { CategoryBars, CostPlanBars, CostScatter, MetricBars } from "./charts";
import { JudgeCell } from "./judge-cell";
import { CATEGORY_NAMES, fmtDelta, fmtMetric, HEADLINE_METRICS, RUN_COLORS, type ComparedQuestion, type ComparedRun, type EvalComparison } from "./format";

const selectClass = "rounded-md border bg-background px-2 py-1 text-sm";

/** Baseline and others: metric cards with deltas, charts, and the questions regressions first. */
export function CompareView({ baselineId, otherIds }: { baselineId: string; otherIds: string[] }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const cmp = useQuery(trpc.evals.compare.queryOptions({ workspaceId: workspace.id, baselineId, otherIds }));
  if (cmp.isPending) return <Skeleton className="h-96 w-full" />;
  if (cmp.isError) return <EmptyState icon={AlertTriangle} title="This comparison could not be loaded" description={errorMessage(cmp.error)} />;
  return <Comparison data={cmp.data} />;
}

function Comparison({ data }: { data: EvalComparison }) {
  const [categoryMetric, setCategoryMetric] = useState("session_hit@5");
  const [scatterMetric, setScatterMetric] = useState("evidence_recall@2k");
  const [scatterX, setScatterX] = useState<"buildCostUsd" | "contextTokens" | "buildTokens">("contextTokens");
  const [filter, setFilter] = useState<"all" | "regressed" | "improved">("all");
  const [open, setOpen] = useState<ComparedQuestion | null>(null);
  const baseline = data.runs[0]!;
  const benchmark = data.benchmark;
  const questions = data.questions.filter((q) => filter === "all" || q.status === filter);
  return (
    <div className="grid gap-6" data-testid="compare-view">
      <section className="grid gap-3">
        <div className="flex flex-wrap gap-2 text-sm">
          {data.runs.map((r, i) => (
            <span key={r.id} className="inline-flex items-center gap-1.5 rounded-full border px-2.5 py-1">
              <span className="size-2.5 rounded-full" style={{ background: RUN_COLORS[i % RUN_COLORS.length] }} />
              {r.label}
              <span className="text-muted-foreground">
                · {r.mode}
                {r.step ? ` @ ${r.step}` : ""}
              </span>
              {i === 0 && <span className="text-xs text-muted-foreground">(baseline)</span>}
            </span>
          ))}
        </div>
        <div className="grid grid-cols-2 gap-3 md:grid-cols-4">
          {HEADLINE_METRICS.map((m) => (
            <Card key={m} data-testid={`metric-card-${m}`} className="gap-2 py-4">
              <CardHeader className="px-4">
                <CardTitle className="font-mono text-xs text-muted-foreground">{m}</CardTitle>
              </CardHeader>
              <CardContent className="grid gap-1 px-4">
                {data.runs.map((r, i) => {
                  const v = r.metrics[m as keyof typeof r.metrics];
                  const d = i > 0 ? fmtDelta(m, r.deltas[m] ?? 0) : null;
                  return (
                    <div key={r.id} className="flex items-baseline justify-between gap-2 text-sm">
                      <span className="truncate text-muted-foreground" title={r.label}>
                        {r.label}
                      </span>
                      <span className="tabular-nums">
                        <span className={cn(i === 0 && "font-semibold")}>{fmtMetric(m, v)}</span>
                        {d && <span className={cn("ml-1.5 text-xs", d.good === true && "text-emerald-600", d.good === false && "text-red-600", d.good === null && "text-muted-foreground")}>{d.text}</span>}
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

      <section className="grid gap-2">
        <h2 className="text-base font-semibold">Metrics side by side</h2>
        <MetricBars runs={data.runs} metrics={HEADLINE_METRICS.filter((m) => m !== "context_tokens")} />
      </section>

      <section className="grid gap-2">
        <div className="flex items-center justify-between">
          <h2 className="text-base font-semibold">Per category</h2>
          <select className={selectClass} aria-label="Category metric" value={categoryMetric} onChange={(e) => setCategoryMetric(e.target.value)}>
            {HEADLINE_METRICS.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </div>
        <CategoryBars runs={data.runs} metric={categoryMetric} names={CATEGORY_NAMES[benchmark] ?? {}} />
      </section>

      <div className="grid gap-6 lg:grid-cols-2">
        <section className="grid gap-2">
          <div className="flex flex-wrap items-center justify-between gap-2">
            <h2 className="text-base font-semibold">Accuracy vs cost</h2>
            <div className="flex gap-2">
              <select className={selectClass} aria-label="Scatter x axis" value={scatterX} onChange={(e) => setScatterX(e.target.value as typeof scatterX)}>
                <option value="contextTokens">context tokens / query</option>
                <option value="buildCostUsd">build cost</option>
                <option value="buildTokens">build tokens</option>
              </select>
              <select className={selectClass} aria-label="Scatter metric" value={scatterMetric} onChange={(e) => setScatterMetric(e.target.value)}>
                {HEADLINE_METRICS.filter((m) => m !== "context_tokens").map((m) => (
                  <option key={m}>{m}</option>
                ))}
              </select>
            </div>
          </div>
          <CostScatter runs={data.runs} metric={scatterMetric} x={scatterX} />
        </section>
        <section className="grid gap-2">
          <h2 className="text-base font-semibold">Cost plan per step (tokens to build)</h2>
          <CostPlanBars runs={data.runs} />
          <p className="text-xs text-muted-foreground">
            Build cost: {data.runs.map((r) => `${r.label} ${fmtUsd(r.cost.buildCostUsd)}`).join(" · ")}. Search p50:{" "}
            {data.runs.map((r) => `${r.label} ${(r.latency.p50 ?? 0).toFixed(1)} ms`).join(" · ")}.
          </p>
        </section>
      </div>

      <section className="grid gap-2">
        <div className="flex flex-wrap items-center justify-between gap-2">
          <h2 className="text-base font-semibold">
            Questions · {data.counts.regressed} regressed, {data.counts.improved} improved against {baseline.label}
          </h2>
          <select className={selectClass} aria-label="Question filter" value={filter} onChange={(e) => setFilter(e.target.value as typeof filter)}>
            <option value="all">all (regressions first)</option>
            <option value="regressed">regressed only</option>
            <option value="improved">improved only</option>
          </select>
        </div>
        <Table data-testid="question-table">
          <TableHeader>
            <TableRow>
              <TableHead>Status</TableHead>
              <TableHead>Question</TableHead>
              <TableHead>Category</TableHead>
              {data.runs.map((r) => (
                <TableHead key={r.id} className="text-right">
                  {r.label} hit@5 · recall@2k
                </TableHead>
              ))}
            </TableRow>
          </TableHeader>
          <TableBody>
            {questions.slice(0, 300).map((q) => (
              <TableRow key={q.questionId} data-testid="question-row" data-status={q.status} className="cursor-pointer" onClick={() => setOpen(q)}>
                <TableCell>
                  <span className={cn("rounded px-1.5 py-0.5 text-xs", q.status === "regressed" && "bg-red-100 text-red-700 dark:bg-red-950 dark:text-red-300", q.status === "improved" && "bg-emerald-100 text-emerald-700 dark:bg-emerald-950 dark:text-emerald-300", q.status === "same" && "text-muted-foreground")}>
                    {q.status}
                  </span>
                </TableCell>
                <TableCell className="max-w-md">
                  <button type="button" className="text-left hover:underline">
                    {q.question}
                  </button>
                </TableCell>
                <TableCell className="text-xs">{(CATEGORY_NAMES[benchmark] ?? {})[q.category] ?? q.category}</TableCell>
                {data.runs.map((r) => {
                  const s = q.runs[r.id]?.scores;
                  return (
                    <TableCell key={r.id} className="text-right tabular-nums text-xs">
                      {s ? `${fmtMetric("session_hit@5", s["session_hit@5"])} · ${fmtMetric("evidence_recall@2k", s["evidence_recall@2k"])}` : "—"}
                    </TableCell>
                  );
                })}
              </TableRow>
            ))}
          </TableBody>
        </Table>
        {questions.length > 300 && <p className="text-xs text-muted-foreground">Showing 300 of {questions.length} questions.</p>}
      </section>
      <QuestionDialog question={open} runs={data.runs} onClose={() => setOpen(null)} />
    </div>
  );
}

function QuestionDialog({ question, runs, onClose }: { question: ComparedQuestion | null; runs: ComparedRun[]; onClose: () => void }) {
  const [record, setRecord] = useState<string | null>(null);
  return (
    <Dialog open={!!question} onOpenChange={(o) => (!o ? (onClose(), setRecord(null)) : undefined)}>
      <DialogContent className="max-h-[90vh] overflow-y-auto sm:max-w-5xl" data-testid="question-dialog">
        {question && (
          <>
            <DialogHeader>
              <DialogTitle>{question.question}</DialogTitle>
              <DialogDescription>
                Gold: {question.gold} · sample {question.sample} · {question.status}
              </DialogDescription>
            </DialogHeader>
            <div className="grid gap-4 md:grid-cols-2">
              {runs.map((r) => {
                const c = question.runs[r.id];
                return (
                  <div key={r.id} className="grid content-start gap-2" data-testid="question-run">
                    <div className="text-sm font-semibold">{r.label}</div>
                    {c ? (
                      <>
                        <div className="text-xs text-muted-foreground">Extractive answer: {c.answer || "—"}</div>
                        <ol className="grid gap-1.5">
                          {c.retrieved.slice(0, 8).map((h) => (
                            <li key={h.id}>
                              <button
                                type="button"
                                data-testid="retrieved-record"
                                onClick={() => setRecord(h.id)}
                                className={cn("w-full rounded-md border p-2 text-left text-xs hover:bg-muted", h.goldTurns.length > 0 && "border-emerald-500", record === h.id && "ring-2 ring-primary")}
                              >
                                <div className="mb-1 flex justify-between gap-2 font-mono text-[11px] text-muted-foreground">
                                  <span>
                                    #{h.rank} {h.step} · sessions {h.sessions.join(", ") || "?"}
                                  </span>
                                  <span>{h.goldTurns.length ? `gold ${h.goldTurns.join(", ")}` : h.inContext ? "in context" : "beyond 2k"}</span>
                                </div>
                                <div className="line-clamp-3 whitespace-pre-wrap">{h.preview}</div>
                              </button>
                            </li>
                          ))}
                        </ol>
                      </>
                    ) : (
                      <div className="text-xs text-muted-foreground">Not in this run.</div>
                    )}
                  </div>
                );
              })}
            </div>
            {record && <RecordLineage id={record} />}
          </>
        )}
      </DialogContent>
    </Dialog>
  );
}

/** Where a retrieved record came from: its provenance tree down to the benchmark session. */
function RecordLineage({ id }: { id: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const lineage = useQuery(trpc.record.lineage.queryOptions({ workspaceId: workspace.id, id, maxDepth: 10, maxNodes: 200 }));
  if (lineage.isPending) return <Skeleton className="h-24 w-full" />;
  if (lineage.isError) return <p className="text-sm text-destructive">{errorMessage(lineage.error)}</p>;
  const render = (node: LineageTree, depth: number): React.ReactNode => (
    <li key={`${node.id}-${depth}`} style={{ marginLeft: depth * 16 }} className="text-xs" data-testid={`lineage-step-${node.step}`}>
      <span className="font-mono text-muted-foreground">{depth ? "└ " : ""}{node.step}</span> <span className="line-clamp-1 inline">{node.preview.replace(/\s+/g, " ").slice(0, 140)}</span>
      {node.children.length > 0 && <ul>{node.children.map((c) => render(c, depth + 1))}</ul>}
    </li>
  );
  return (
    <section className="grid gap-2 rounded-md border p-3" data-testid="case-lineage">
      <div className="text-sm font-semibold">Lineage of the retrieved record</div>
      <ul>{render(lineage.data.tree, 0)}</ul>
    </section>
  );
}
