"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Activity } from "lucide-react";
import Link from "next/link";
import { useState } from "react";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC, type RouterOutputs } from "@/lib/trpc";
import { ShadowTrafficCard } from "./shadow-traffic";
import { plural } from "@/components/ui/plural";

type Replay = RouterOutputs["log"]["replay"];
const pct = (x: number | null) => (x === null ? "—" : `${(x * 100).toFixed(1)}%`);
const interval = (i: Replay["summary"]["latencyDiff"]) => (i.low === null ? `${i.mean.toFixed(3)} (n=${i.n})` : `${i.mean.toFixed(3)} [${i.low.toFixed(3)}, ${i.high!.toFixed(3)}]`);

/** Traffic (issue 37): the pipeline's query log, its traffic, replay on a branch, labels. */
export function TrafficPage({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const canRead = useCan("log:read");
  const canConfigure = useCan("workspace:update");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const ref = { workspaceId: workspace.id, pipelineId };
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  const [branch, setBranch] = useState("");
  const [judgeModel, setJudgeModel] = useState("");
  const [report, setReport] = useState<Replay | null>(null);
  const config = useQuery({ ...trpc.log.config.queryOptions(ref), enabled: canRead });
  const traffic = useQuery({ ...trpc.log.traffic.queryOptions(ref), enabled: canRead, refetchInterval: 5000 });
  const entries = useQuery({ ...trpc.log.list.queryOptions({ ...ref, limit: 50 }), enabled: canRead, refetchInterval: 5000 });
  const branches = useQuery({ ...trpc.branch.list.queryOptions({ ...ref, branch: "main" }), enabled: canRead });
  const onError = (err: unknown) => toast.error(errorMessage(err));
  const setConfig = useMutation(
    trpc.log.setConfig.mutationOptions({
      onSuccess: (s) => {
        toast.success(s.enabled ? "Query log on." : "Query log off.");
        void queryClient.invalidateQueries({ queryKey: trpc.log.config.queryKey() });
      },
      onError,
    }),
  );
  const replay = useMutation(trpc.log.replay.mutationOptions({ onSuccess: setReport, onError }));
  const label = useMutation(
    trpc.log.label.mutationOptions({
      onSuccess: (r) => {
        toast.success(`Added to question set "${r.set}" (${plural(r.questions, "question")}): score it in Evals.`);
        void queryClient.invalidateQueries({ queryKey: trpc.log.list.queryKey() });
      },
      onError,
    }),
  );

  if (!canRead) {
    return (
      <>
        <PageHeader title="Traffic" />
        <PipelineTabs pipelineId={pipelineId} />
        <EmptyState icon={Activity} title="Reading the query log needs log:read (editors, admins and owners)" />
      </>
    );
  }
  const t = traffic.data;
  const otherBranches = (branches.data?.branches ?? []).map((b) => b.name).filter((n) => n !== "main");
  return (
    <>
      <PageHeader title="Traffic" description="What agents asked this pipeline and what it served; replay it on a branch before promoting." />
      <PipelineTabs pipelineId={pipelineId} />
      <div className="space-y-6">
        <Card>
          <CardHeader>
            <CardTitle className="flex items-center gap-2">
              Query log <Badge variant={config.data?.enabled ? "default" : "outline"} data-testid="log-status">{config.data?.enabled ? "on" : "off"}</Badge>
            </CardTitle>
            <CardDescription>
              Searches, asks, briefs and walks over REST, MCP, the app and the compatibility APIs: caller, scope, parameters, served ids with ranks and scores — never record content.
              Kept {config.data?.retentionDays ?? 30} days, at most {(config.data?.maxEntries ?? 100000).toLocaleString()} entries; a purge removes the entries that name what it purges.
            </CardDescription>
          </CardHeader>
          {canConfigure ? (
            <CardContent>
              <Button size="sm" data-testid="log-toggle" disabled={setConfig.isPending || !config.data} onClick={() => setConfig.mutate({ ...ref, enabled: !config.data?.enabled })}>
                {config.data?.enabled ? "Turn the log off" : "Turn the log on"}
              </Button>
            </CardContent>
          ) : null}
        </Card>

        {t ? (
          <div className="grid gap-6 lg:grid-cols-2">
            <Card>
              <CardHeader>
                <CardTitle data-testid="traffic-total">{plural(t.total, "query")}</CardTitle>
                <CardDescription>{pct(t.noMatchRate)} with no good match (nothing served, or a top score under 0.05).</CardDescription>
              </CardHeader>
              <CardContent>
                <Counts title="Per day" rows={t.perDay} />
                <Counts title="Most frequent" rows={t.frequent.slice(0, 8)} />
              </CardContent>
            </Card>
            <Card>
              <CardHeader>
                <CardTitle>Callers and scopes</CardTitle>
              </CardHeader>
              <CardContent>
                <Counts title="Per caller" rows={t.perCaller.slice(0, 8)} labels={t.callerLabels} />
                <Counts title="Per scope" rows={t.perScope.slice(0, 8)} />
              </CardContent>
            </Card>
          </div>
        ) : null}

        <Card>
          <CardHeader>
            <CardTitle>Replay on a branch</CardTitle>
            <CardDescription>
              The latest logged searches and asks, run again on the branch and on main: overlap@k, rank-biased overlap, hits gained and lost, citation recall with a paired 95% interval. With a judge model, which side&apos;s context answers each
              query better.
            </CardDescription>
          </CardHeader>
          <CardContent className="space-y-4">
            <form
              className="flex flex-wrap gap-2"
              onSubmit={(e) => {
                e.preventDefault();
                if (branch.trim()) replay.mutate({ ...ref, branch: branch.trim(), judgeModel: judgeModel.trim() || undefined });
              }}
            >
              <Input aria-label="Branch to replay on" list="replay-branches" placeholder={otherBranches[0] ?? "branch name"} value={branch} onChange={(e) => setBranch(e.target.value)} className="max-w-xs" />
              <datalist id="replay-branches">
                {otherBranches.map((b) => (
                  <option key={b} value={b} />
                ))}
              </datalist>
              <Input
                aria-label="Judge model (optional)"
                placeholder="judge model, optional (provider/model)"
                title="Asked per query which context answers better, in both orders. Empty: preference not measured."
                value={judgeModel}
                onChange={(e) => setJudgeModel(e.target.value)}
                className="max-w-xs"
              />
              <Button type="submit" size="sm" disabled={replay.isPending || !branch.trim()} data-testid="replay-submit">
                {replay.isPending ? "Replaying…" : "Replay"}
              </Button>
            </form>
            {report ? <ReplayReport report={report} base={base} /> : null}
          </CardContent>
        </Card>

        <ShadowTrafficCard workspaceId={workspace.id} pipelineId={pipelineId} branches={otherBranches} />

        <Card>
          <CardHeader>
            <CardTitle>Recent queries</CardTitle>
            <CardDescription>Served hits link to their records. “First should be” marks the record that should have come first: the query joins the question set “from-traffic”.</CardDescription>
          </CardHeader>
          <CardContent>
            {entries.data?.length ? (
              <Table>
                <TableHeader>
                  <TableRow>
                    <TableHead>When</TableHead>
                    <TableHead>Via</TableHead>
                    <TableHead>Query</TableHead>
                    <TableHead>Served</TableHead>
                    <TableHead className="text-right">ms</TableHead>
                  </TableRow>
                </TableHeader>
                <TableBody>
                  {entries.data.map((e) => (
                    <TableRow key={e.id} data-testid="logged-query">
                      <TableCell className="text-xs text-muted-foreground">
                        <div className="whitespace-nowrap">{new Date(e.createdAt).toLocaleDateString()}</div>
                        <div className="whitespace-nowrap">{new Date(e.createdAt).toLocaleTimeString()}</div>
                      </TableCell>
                      <TableCell className="text-xs">
                        {e.surface} · {e.kind}
                        <div className="text-muted-foreground" title={e.caller} data-testid="logged-caller">
                          {t?.callerLabels[e.caller] ?? e.caller}
                        </div>
                        {e.scope ? <div className="text-muted-foreground">{e.scope}</div> : null}
                      </TableCell>
                      <TableCell className="max-w-xs break-words">{e.query || <span className="text-muted-foreground">(brief)</span>}</TableCell>
                      <TableCell>
                        <ol className="space-y-0.5 text-xs">
                          {e.hits.slice(0, 5).map((h) => (
                            <li key={h.id} className="flex flex-wrap items-center gap-1">
                              <span className="text-muted-foreground">{h.rank}.</span>
                              <Link className="font-mono underline-offset-2 hover:underline" href={`${base}/records/${h.id}`}>
                                {h.step}/{h.id.slice(-8)}
                              </Link>
                              <span className="text-muted-foreground">{h.score.toFixed(3)}</span>
                              {e.labelRecordId === h.id ? (
                                <Badge variant="secondary">labelled first</Badge>
                              ) : e.query ? (
                                <button type="button" className="text-primary underline-offset-2 hover:underline" data-testid="label-first" disabled={label.isPending} onClick={() => label.mutate({ ...ref, entryId: e.id, recordId: h.id, set: "from-traffic" })}>
                                  first should be
                                </button>
                              ) : null}
                            </li>
                          ))}
                        </ol>
                      </TableCell>
                      <TableCell className="text-right tabular-nums">{e.latencyMs}</TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            ) : (
              <EmptyState icon={Activity} title={config.data?.enabled ? "No queries logged yet" : "The query log is off"} />
            )}
          </CardContent>
        </Card>
      </div>
    </>
  );
}

function Counts({ title, rows, labels }: { title: string; rows: Array<{ key: string; count: number; noMatchRate: number; meanLatencyMs: number }>; labels?: Record<string, string> }) {
  if (!rows.length) return null;
  return (
    <div className="mb-4">
      <div className="mb-1 text-xs font-medium uppercase tracking-wide text-muted-foreground">{title}</div>
      <ul className="space-y-0.5 text-sm">
        {rows.map((r) => (
          <li key={r.key} className="flex flex-wrap justify-between gap-x-4">
            <span className="min-w-0 break-words" title={r.key}>
              {labels?.[r.key] ?? r.key}
            </span>
            <span className="ml-auto shrink-0 tabular-nums text-muted-foreground">
              {r.count} · {pct(r.noMatchRate)} no match · {Math.round(r.meanLatencyMs)} ms
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function ReplayReport({ report, base }: { report: Replay; base: string }) {
  const s = report.summary;
  const p = s.preference;
  // Each served record as its text (two lines; the whole text on hover, the record a click away).
  const id = (x: string) => {
    const text = report.texts[x];
    return (
      <Link key={x} data-testid="replay-hit" className="mb-1 block max-w-xs text-xs underline-offset-2 hover:underline" href={`${base}/records/${x}`} title={text ?? x}>
        {text ? <span className="line-clamp-2 break-words">{text}</span> : <span className="font-mono">{x.slice(-10)}</span>}
      </Link>
    );
  };
  return (
    <div className="space-y-3" data-testid="replay-report">
      <p className="text-sm">
        {plural(s.replayed, "query")} on <b>{report.branch}</b> vs {report.baseline}: overlap@k <b data-testid="replay-overlap">{s.meanOverlap.toFixed(3)}</b>, RBO {s.meanRbo.toFixed(3)}, {s.gained} gained, {s.lost} lost.{" "}
        {s.citationRecall.diff.n ? (
          <>
            Citation recall {report.baseline} {pct(s.citationRecall.main)} → {report.branch} {pct(s.citationRecall.branch)} (branch − main {interval(s.citationRecall.diff)}).
          </>
        ) : (
          <span className="text-muted-foreground">Citation recall not measured: no replayed ask had cited records.</span>
        )}{" "}
        Mean latency {report.baseline} {s.meanLatencyMs.main.toFixed(1)} ms → {report.branch} {s.meanLatencyMs.branch.toFixed(1)} ms
        <span data-testid="replay-latency-diff">
          {" "}
          (branch − main {interval(s.latencyDiff)} ms
          {s.latencyDiff.low !== null ? (s.latencyDiff.low <= 0 && s.latencyDiff.high! >= 0 ? ", within noise" : s.latencyDiff.low > 0 ? ", slower" : ", faster") : ""})
        </span>
        .
      </p>
      <p className="text-sm" data-testid="replay-preference">
        {p.measured ? (
          <>
            Preference ({p.judgeModel}, asked in both orders): {report.branch} better <b>{p.branchWins}</b>, {report.baseline} better <b>{p.mainWins}</b>, tie {p.ties}
            {p.unjudged + p.overBudget ? `, unjudged ${p.unjudged + p.overBudget}` : ""}. Win rate of {report.branch} <b>{pct(p.winRate)}</b> (branch − main {interval(p.interval)}); ${p.spentUsd.toFixed(4)} in {plural(p.calls, "call")}.
          </>
        ) : (
          <span className="text-muted-foreground">Preference {p.reason}.</span>
        )}
      </p>
      <Table>
        <TableHeader>
          <TableRow>
            <TableHead>Query</TableHead>
            <TableHead>{report.baseline}</TableHead>
            <TableHead>{report.branch}</TableHead>
            <TableHead>overlap · RBO</TableHead>
            {p.measured ? <TableHead>Better</TableHead> : null}
          </TableRow>
        </TableHeader>
        <TableBody>
          {report.queries.map((q) => (
            <TableRow key={q.entryId} data-testid="replay-row">
              <TableCell className="max-w-xs break-words">{q.error ? `${q.query} — ${q.error}` : q.query}</TableCell>
              <TableCell className="w-2/5 min-w-48 align-top whitespace-normal">{q.main.ids.map(id)}</TableCell>
              <TableCell className="w-2/5 min-w-48 align-top whitespace-normal">{q.branch.ids.map(id)}</TableCell>
              <TableCell className="tabular-nums">
                {q.overlap.toFixed(2)} · {q.rbo.toFixed(2)}
              </TableCell>
              {p.measured ? <TableCell className="text-xs">{q.preference ? (q.preference.winner === null ? "unjudged" : q.preference.winner === "tie" ? (q.preference.identical ? "tie (same hits)" : "tie") : q.preference.winner === "main" ? report.baseline : report.branch) : "—"}</TableCell> : null}
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </div>
  );
}
