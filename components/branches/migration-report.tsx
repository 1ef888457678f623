"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ArrowUpCircle, History, RefreshCw, Trash2 } from "lucide-react";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { fmtDate, fmtInt, fmtUsd } from "@/components/runs/format";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC, type RouterOutputs } from "@/lib/trpc";

type Report = RouterOutputs["migration"]["report"];
type Metric = Report["metrics"][number];

const num = (x: number | null | undefined, digits = 3) => (x == null ? "—" : x.toFixed(digits));
const ms = (x: number | null | undefined) => (x == null ? "—" : `${Math.round(x)} ms`);

/** Better, worse or unclear: the 95% interval of candidate − main against zero, in the metric's direction. */
function verdict(m: Metric): { label: string; variant: "success" | "destructive" | "outline" } {
  if (!m.ci95) return { label: "no interval", variant: "outline" };
  const [lo, hi] = m.lowerIsBetter ? [-m.ci95[1], -m.ci95[0]] : m.ci95;
  if (lo > 0) return { label: "better", variant: "success" };
  if (hi < 0) return { label: "worse", variant: "destructive" };
  return { label: "within noise", variant: "outline" };
}

/**
 * The migration report (issue 50): a candidate branch against main on the team's question sets,
 * replayed traffic and shadow traffic — per metric with its 95% interval, cost to build and per
 * query, latency, and what got worse (each one click from its records) — then promote (main kept
 * as previous/<candidate>), restore a kept main, or walk away. The report replays searches: it is
 * computed when asked, not on every render.
 */
export function MigrationReport({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const params = useSearchParams();
  const branch = params.get("branch") ?? "";
  const canRead = useCan("log:read");
  const canPromote = useCan("branches:promote");
  const canWrite = useCan("branches:write");
  const ref = { workspaceId: workspace.id, pipelineId };
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  const [replay, setReplay] = useState(true);
  const [questionSet, setQuestionSet] = useState("");
  const [judgeModel, setJudgeModel] = useState("");

  const kept = useQuery(trpc.migration.kept.queryOptions(ref));
  const report = useMutation(trpc.migration.report.mutationOptions({ onError: (err) => toast.error(errorMessage(err)) }));
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.branch.list.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.migration.kept.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.pipeline.get.queryKey() });
  };
  /** Promote and restore: say what the server did, then reload the branches and kept mains. */
  const announce = {
    onSuccess: (res: { message: string }) => {
      toast.success(res.message);
      refresh();
    },
    onError: (err: unknown) => toast.error(errorMessage(err)),
  };
  const promote = useMutation(trpc.migration.promote.mutationOptions(announce));
  const restore = useMutation(trpc.migration.restore.mutationOptions(announce));
  const walkAway = useMutation(
    trpc.migration.walkAway.mutationOptions({
      onSuccess: (res) => {
        toast.success(res.message);
        refresh();
        router.push(`${base}/branches?branch=main`);
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );

  const runReport = () =>
    report.mutate({ ...ref, branch, replay, ...(questionSet.trim() ? { questionSet: questionSet.trim() } : {}), ...(judgeModel.trim() ? { judgeModel: judgeModel.trim() } : {}) });
  const r = report.data;

  return (
    <>
      <PageHeader
        title={`Migration report: ${branch || "no branch"}`}
        description="The candidate against main on your own questions and traffic: every metric with its 95% interval, cost, latency, and what got worse."
        actions={
          branch ? (
            <>
              {canPromote ? (
                <Button
                  data-testid="migration-promote"
                  disabled={promote.isPending}
                  onClick={() => {
                    if (window.confirm(`Promote "${branch}" into main? Agents are served by its memory from now on; the current main is kept as previous/${branch}, restorable in one action.`))
                      promote.mutate({ ...ref, branch });
                  }}
                >
                  <ArrowUpCircle /> Promote
                </Button>
              ) : null}
              {canWrite ? (
                <Button
                  variant="ghost"
                  data-testid="migration-walk-away"
                  disabled={walkAway.isPending}
                  onClick={() => {
                    if (window.confirm(`Walk away from "${branch}"? The branch is deleted; its records stay until gc.`)) walkAway.mutate({ ...ref, branch });
                  }}
                >
                  <Trash2 /> Walk away
                </Button>
              ) : null}
            </>
          ) : null
        }
      />
      <PipelineTabs pipelineId={pipelineId} />

      {promote.data ? (
        <p className="mb-4 rounded-md border border-emerald-500/40 bg-emerald-500/10 p-3 text-sm" data-testid="migration-promoted">
          {promote.data.message}
        </p>
      ) : null}
      {restore.data ? (
        <p className="mb-4 rounded-md border p-3 text-sm" data-testid="migration-restored">
          {restore.data.message}
        </p>
      ) : null}

      <Card>
        <CardHeader>
          <CardTitle>Measure</CardTitle>
          <CardDescription>
            Replays the logged searches and asks on both branches and reads the newest question-set evals scored on both (score one in Evals on each branch). Takes a moment on a long log.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <div className="flex flex-wrap items-end gap-4">
            <label className="flex items-center gap-2 text-sm">
              <input type="checkbox" checked={replay} onChange={(e) => setReplay(e.target.checked)} data-testid="report-replay" /> Replay the query log
            </label>
            <div className="grid gap-1.5">
              <Label htmlFor="report-question-set">Question set (optional)</Label>
              <Input id="report-question-set" className="w-56" placeholder="newest on both" value={questionSet} onChange={(e) => setQuestionSet(e.target.value)} />
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor="report-judge">Judge model (optional)</Label>
              <Input id="report-judge" className="w-56" placeholder="provider/model" value={judgeModel} onChange={(e) => setJudgeModel(e.target.value)} />
            </div>
            <Button data-testid="run-report" disabled={!branch || !canRead || report.isPending} onClick={runReport}>
              <RefreshCw className={report.isPending ? "animate-spin" : undefined} /> {report.isPending ? "Measuring…" : r ? "Refresh report" : "Run report"}
            </Button>
          </div>
          {report.isError ? <p className="mt-3 text-sm text-destructive">{errorMessage(report.error)}</p> : null}
        </CardContent>
      </Card>

      {r ? <ReportBody report={r} base={base} /> : null}

      <Card className="mt-6">
        <CardHeader>
          <CardTitle>Kept mains</CardTitle>
          <CardDescription>Each promotion keeps the main it replaced: restore one to put its spec and records back, nothing recomputed.</CardDescription>
        </CardHeader>
        <CardContent>
          {kept.data?.length ? (
            <Table data-testid="kept-table">
              <TableBody>
                {kept.data.map((k) => (
                  <TableRow key={k.name} data-testid={`kept-${k.name}`}>
                    <TableCell className="font-medium">{k.name}</TableCell>
                    <TableCell className="text-xs text-muted-foreground">{k.description}</TableCell>
                    <TableCell className="text-xs text-muted-foreground">{fmtDate(k.createdAt)}</TableCell>
                    <TableCell className="text-right">
                      {canPromote ? (
                        <Button
                          size="sm"
                          variant="outline"
                          data-testid={`restore-${k.name}`}
                          disabled={restore.isPending}
                          onClick={() => {
                            if (window.confirm(`Restore main from "${k.name}"? Main takes its spec and records back; the branch you promoted stays.`)) restore.mutate({ ...ref, kept: k.name });
                          }}
                        >
                          <History /> Restore
                        </Button>
                      ) : null}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          ) : (
            <p className="text-sm text-muted-foreground">No kept main yet: promoting a candidate keeps the current main as previous/&lt;candidate&gt;.</p>
          )}
        </CardContent>
      </Card>
    </>
  );
}

function RecordLinks({ ids, base }: { ids: string[]; base: string }) {
  if (!ids.length) return <span className="text-xs text-muted-foreground">none</span>;
  return (
    <span className="flex flex-wrap gap-x-2">
      {ids.map((id) => (
        <Link key={id} className="font-mono text-xs underline-offset-2 hover:underline" href={`${base}/records/${id}`}>
          {id.slice(0, 12)}
        </Link>
      ))}
    </span>
  );
}

function ReportBody({ report: r, base }: { report: Report; base: string }) {
  const qs = r.questionSet;
  const rp = r.replay;
  const c = r.cost.build;
  return (
    <div data-testid="migration-report">
      {r.notes.length ? (
        <ul className="mt-6 list-disc pl-5 text-sm text-muted-foreground" data-testid="report-notes">
          {r.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      ) : null}

      <Card className="mt-6">
        <CardHeader>
          <CardTitle>
            {r.branch} vs {r.baseline}
          </CardTitle>
          <CardDescription>Difference = candidate − main, with its paired 95% interval; the verdict reads the interval in the metric’s direction.</CardDescription>
        </CardHeader>
        <CardContent>
          <Table data-testid="report-metrics">
            <TableHeader>
              <TableRow>
                <TableHead>Metric</TableHead>
                <TableHead className="text-right">{r.baseline}</TableHead>
                <TableHead className="text-right">{r.branch}</TableHead>
                <TableHead className="text-right">Difference</TableHead>
                <TableHead>95% interval</TableHead>
                <TableHead className="text-right">n</TableHead>
                <TableHead />
              </TableRow>
            </TableHeader>
            <TableBody>
              {r.metrics.map((m) => {
                const v = verdict(m);
                return (
                  <TableRow key={`${m.from}-${m.metric}`} data-testid={`report-metric-${m.from}-${m.metric}`}>
                    <TableCell>
                      <div className="font-medium">{m.metric}</div>
                      <div className="text-xs text-muted-foreground">{m.from}</div>
                    </TableCell>
                    <TableCell className="text-right tabular-nums">{num(m.main)}</TableCell>
                    <TableCell className="text-right tabular-nums">{num(m.candidate)}</TableCell>
                    <TableCell className="text-right tabular-nums">{num(m.delta)}</TableCell>
                    <TableCell className="whitespace-nowrap text-xs tabular-nums">{m.ci95 ? `[${num(m.ci95[0])}, ${num(m.ci95[1])}]` : "—"}</TableCell>
                    <TableCell className="text-right tabular-nums">{m.n ?? "—"}</TableCell>
                    <TableCell>
                      <Badge variant={v.variant}>{v.label}</Badge>
                    </TableCell>
                  </TableRow>
                );
              })}
            </TableBody>
          </Table>
        </CardContent>
      </Card>

      <div className="mt-6 grid gap-6 xl:grid-cols-2">
        <Card>
          <CardHeader>
            <CardTitle>Cost</CardTitle>
            <CardDescription>A full build of each (estimate), what runs spent so far, and per query on the question set.</CardDescription>
          </CardHeader>
          <CardContent>
            <Table data-testid="report-cost">
              <TableHeader>
                <TableRow>
                  <TableHead />
                  <TableHead className="text-right">{r.baseline}</TableHead>
                  <TableHead className="text-right">{r.branch}</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                <TableRow>
                  <TableCell>Full build (estimate)</TableCell>
                  <TableCell className="text-right tabular-nums">{fmtUsd(c.main.fullCostUsd)}</TableCell>
                  <TableCell className="text-right tabular-nums">{fmtUsd(c.candidate.fullCostUsd)}</TableCell>
                </TableRow>
                <TableRow>
                  <TableCell>Spent by runs</TableCell>
                  <TableCell className="text-right tabular-nums">
                    {fmtUsd(c.main.spent.costUsd)} · {fmtInt(c.main.spent.tokens)} tok
                  </TableCell>
                  <TableCell className="text-right tabular-nums">
                    {fmtUsd(c.candidate.spent.costUsd)} · {fmtInt(c.candidate.spent.tokens)} tok
                  </TableCell>
                </TableRow>
                <TableRow>
                  <TableCell>Per query (question set)</TableCell>
                  <TableCell className="text-right tabular-nums">{qs ? fmtUsd(qs.perQuery.main.costUsd) : "—"}</TableCell>
                  <TableCell className="text-right tabular-nums">{qs ? fmtUsd(qs.perQuery.candidate.costUsd) : "—"}</TableCell>
                </TableRow>
                <TableRow>
                  <TableCell>Still to compute</TableCell>
                  <TableCell />
                  <TableCell className="text-right tabular-nums">
                    {fmtInt(c.candidate.pending)} · {fmtUsd(c.candidate.pendingCostUsd)}
                  </TableCell>
                </TableRow>
              </TableBody>
            </Table>
          </CardContent>
        </Card>
        <Card>
          <CardHeader>
            <CardTitle>Latency</CardTitle>
            <CardDescription>p50 / p95 per query, on the question set and on the replayed traffic.</CardDescription>
          </CardHeader>
          <CardContent>
            <Table data-testid="report-latency">
              <TableHeader>
                <TableRow>
                  <TableHead />
                  <TableHead className="text-right">{r.baseline} p50 / p95</TableHead>
                  <TableHead className="text-right">{r.branch} p50 / p95</TableHead>
                </TableRow>
              </TableHeader>
              <TableBody>
                <TableRow>
                  <TableCell>Question set</TableCell>
                  <TableCell className="text-right tabular-nums">{qs ? `${ms(qs.latencyMs.main.p50)} / ${ms(qs.latencyMs.main.p95)}` : "—"}</TableCell>
                  <TableCell className="text-right tabular-nums">{qs ? `${ms(qs.latencyMs.candidate.p50)} / ${ms(qs.latencyMs.candidate.p95)}` : "—"}</TableCell>
                </TableRow>
                <TableRow>
                  <TableCell>Replay</TableCell>
                  <TableCell className="text-right tabular-nums">{rp ? `${ms(rp.latencyMs.main.p50)} / ${ms(rp.latencyMs.main.p95)}` : "—"}</TableCell>
                  <TableCell className="text-right tabular-nums">{rp ? `${ms(rp.latencyMs.candidate.p50)} / ${ms(rp.latencyMs.candidate.p95)}` : "—"}</TableCell>
                </TableRow>
              </TableBody>
            </Table>
          </CardContent>
        </Card>
      </div>

      {qs ? (
        <Card className="mt-6">
          <CardHeader>
            <CardTitle>Question set “{qs.set.name}”</CardTitle>
            <CardDescription>
              {qs.set.questions} question(s) on {qs.outcomeMetric}: {Object.entries(qs.counts).map(([k, n]) => `${k} ${n}`).join(", ")}. The questions main answered and the candidate
              does not, with the records that answer them.
            </CardDescription>
          </CardHeader>
          <CardContent>
            {qs.worse.length ? (
              <Table data-testid="worse-questions">
                <TableBody>
                  {qs.worse.map((w) => (
                    <TableRow key={w.questionId} data-testid="worse-question">
                      <TableCell className="max-w-md">{w.question}</TableCell>
                      <TableCell className="text-right text-xs tabular-nums">
                        {num(w.main, 2)} → {num(w.candidate, 2)}
                      </TableCell>
                      <TableCell>
                        <RecordLinks ids={w.recordIds} base={base} />
                      </TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            ) : (
              <p className="text-sm text-muted-foreground" data-testid="no-worse-questions">
                No question got worse.
              </p>
            )}
          </CardContent>
        </Card>
      ) : null}

      {rp ? (
        <Card className="mt-6">
          <CardHeader>
            <CardTitle>Replayed traffic</CardTitle>
            <CardDescription data-testid="replay-summary">
              {rp.replayed} logged quer{rp.replayed === 1 ? "y" : "ies"} replayed ({rp.skipped} skipped, {rp.failed} failed): mean overlap {num(rp.meanOverlap)}, RBO {num(rp.meanRbo)}.{" "}
              {rp.preference.measured
                ? `Judge (${rp.preference.judgeModel}, both orders): candidate better ${rp.preference.branchWins}, main better ${rp.preference.mainWins}, tie ${rp.preference.ties}; win rate ${num(rp.preference.winRate)}.`
                : `Preference ${rp.preference.reason}.`}
            </CardDescription>
          </CardHeader>
          <CardContent>
            {rp.worse.length ? (
              <Table data-testid="worse-queries">
                <TableHeader>
                  <TableRow>
                    <TableHead>Query</TableHead>
                    <TableHead>Why</TableHead>
                    <TableHead>Records lost</TableHead>
                    <TableHead>Main served</TableHead>
                  </TableRow>
                </TableHeader>
                <TableBody>
                  {rp.worse.map((w) => (
                    <TableRow key={w.entryId} data-testid="worse-query">
                      <TableCell className="max-w-xs">
                        {w.query} <span className="text-xs text-muted-foreground">({w.kind})</span>
                      </TableCell>
                      <TableCell className="text-xs">{w.why.join("; ")}</TableCell>
                      <TableCell>
                        <RecordLinks ids={w.lost} base={base} />
                      </TableCell>
                      <TableCell>
                        <RecordLinks ids={w.mainIds} base={base} />
                      </TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            ) : (
              <p className="text-sm text-muted-foreground" data-testid="no-worse-queries">
                No replayed query got worse (no cited record lost, the judge never preferred main).
              </p>
            )}
          </CardContent>
        </Card>
      ) : null}
    </div>
  );
}
