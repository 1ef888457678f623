"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from "@/components/ui/dialog";
import { Skeleton } from "@/components/ui/skeleton";
import { cn } from "@/components/ui/cn";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { fmtMetric, type QuestionDrilldownData } from "./format";

type RunHits = QuestionDrilldownData["runs"][number];

/**
 * One question across every run on the page: the gold answer and evidence, then each run's top
 * hits side by side (wrapping, never scrolled off to the side), the evidence hits highlighted, each
 * hit a link to its record page (in the run's eval copy, on the run's branch).
 */
export function QuestionDrilldown({ questionId, runs, colors, onClose }: { questionId: string | null; runs: Array<{ id: string; label: string }>; colors: Map<string, string>; onClose: () => void }) {
  return (
    <Dialog open={!!questionId} onOpenChange={(o) => (!o ? onClose() : undefined)}>
      <DialogContent className="max-h-[92vh] w-[96vw] max-w-[96vw] overflow-y-auto sm:max-w-[min(96vw,1400px)]" data-testid="question-drilldown">
        {questionId && <Drilldown questionId={questionId} runs={runs} colors={colors} />}
      </DialogContent>
    </Dialog>
  );
}

function Drilldown({ questionId, runs, colors }: { questionId: string; runs: Array<{ id: string; label: string }>; colors: Map<string, string> }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const q = useQuery(trpc.evals.question.queryOptions({ workspaceId: workspace.id, runIds: runs.map((r) => r.id), questionId }));
  if (q.isPending) {
    return (
      <>
        <DialogTitle className="sr-only">Loading the question</DialogTitle>
        <Skeleton className="h-64 w-full" />
      </>
    );
  }
  if (q.isError) {
    return (
      <>
        <DialogTitle>This question could not be loaded</DialogTitle>
        <p className="text-sm text-destructive">{errorMessage(q.error)}</p>
      </>
    );
  }
  const d = q.data;
  const labels = new Map(runs.map((r) => [r.id, r.label]));
  const evidence = d.evidence.turns.length ? d.evidence.turns : d.evidence.sessions;
  return (
    <>
      <DialogHeader>
        <DialogTitle className="break-words pr-6">{d.question}</DialogTitle>
        <DialogDescription asChild>
          <div className="grid gap-1.5 text-sm">
            <span>
              Gold answer: <span className="font-medium text-foreground">{d.gold || "—"}</span> · sample {d.sample} · category {d.category}
            </span>
            <span className="flex flex-wrap items-center gap-1.5" data-testid="gold-evidence">
              Gold evidence ({d.evidence.turns.length ? "turns" : "sessions"}):
              {evidence.length ? (
                evidence.map((e) => (
                  <span key={e} className="rounded bg-emerald-100 px-1.5 py-0.5 font-mono text-xs text-emerald-800 dark:bg-emerald-950 dark:text-emerald-300" data-testid="gold-evidence-id">
                    {e}
                  </span>
                ))
              ) : (
                <span>none named</span>
              )}
            </span>
          </div>
        </DialogDescription>
      </DialogHeader>
      <div className="grid gap-3 [grid-template-columns:repeat(auto-fill,minmax(15rem,1fr))]" data-testid="drilldown-runs">
        {d.runs.map((r) => (
          <RunColumn key={r.runId} run={r} label={labels.get(r.runId) ?? r.runId} color={colors.get(r.runId) ?? "#64748b"} slug={workspace.slug} />
        ))}
      </div>
    </>
  );
}

function RunColumn({ run, label, color, slug }: { run: RunHits; label: string; color: string; slug: string }) {
  const found = run.hits.filter((h) => h.evidence).length;
  return (
    <div className="grid min-w-0 content-start gap-2 rounded-md border border-t-4 p-2" style={{ borderTopColor: color }} data-testid="drilldown-run" data-run-id={run.runId}>
      <div className="min-w-0">
        <div className="break-words text-sm font-semibold">{label}</div>
        {run.scores ? (
          <div className="text-xs tabular-nums text-muted-foreground">
            hit@5 {fmtMetric("session_hit@5", run.scores["session_hit@5"])} · recall@2k {fmtMetric("evidence_recall@2k", run.scores["evidence_recall@2k"])} · {found} of {run.hits.length} hits on evidence
          </div>
        ) : null}
      </div>
      {run.caseId === null ? (
        <p className="text-xs text-muted-foreground">Not in this run.</p>
      ) : (
        <>
          {run.answer ? <p className="break-words text-xs text-muted-foreground">Answer: {run.answer}</p> : null}
          <ol className="grid gap-1.5">
            {run.hits.map((h) => (
              <li key={h.id}>
                <Link
                  href={`/w/${slug}/pipelines/${run.recordPipelineId}/records/${h.id}?branch=${encodeURIComponent(run.recordBranch)}`}
                  data-testid="drilldown-hit"
                  data-evidence={h.evidence}
                  className={cn("block rounded-md border p-2 text-xs hover:bg-muted", h.evidence && "border-2 border-emerald-500 bg-emerald-50 dark:bg-emerald-950/40")}
                >
                  <span className="mb-1 flex flex-wrap justify-between gap-x-2 font-mono text-[11px] text-muted-foreground">
                    <span>
                      #{h.rank} {h.step}
                    </span>
                    {h.evidence ? (
                      <span className="font-semibold text-emerald-700 dark:text-emerald-300" data-testid="hit-evidence">
                        evidence {(h.goldTurns.length ? h.goldTurns : h.evidenceSessions).join(", ")}
                      </span>
                    ) : (
                      <span>{h.inContext ? "in context" : "beyond 2k"}</span>
                    )}
                  </span>
                  <span className="line-clamp-4 whitespace-pre-wrap break-words" data-testid="hit-preview">{h.preview}</span>
                </Link>
              </li>
            ))}
            {run.hits.length === 0 && <li className="text-xs text-muted-foreground">Nothing retrieved.</li>}
          </ol>
        </>
      )}
    </div>
  );
}
