"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useCan } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { Input } from "@/components/ui/input";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC, type RouterOutputs } from "@/lib/trpc";

type Report = RouterOutputs["shadow"]["report"];
type Shadow = RouterOutputs["shadow"]["list"][number];
const pct = (x: number | null) => (x === null ? "—" : `${(x * 100).toFixed(1)}%`);
const interval = (i: Report["summary"]["latencyDiff"], digits = 3) =>
  i.low === null ? `${i.mean.toFixed(digits)} (n=${i.n})` : `${i.mean.toFixed(digits)} [${i.low.toFixed(digits)}, ${i.high!.toFixed(digits)}]`;
const when = (d: Date | string) => new Date(d).toLocaleString();
const STATE_VARIANT: Record<Shadow["state"], "default" | "secondary" | "outline"> = { running: "default", scheduled: "secondary", ended: "outline", stopped: "outline" };

/** The shadow report's numbers: replay's summary, with the shadow's counters. */
export function ShadowSummary({ report }: { report: Report }) {
  const s = report.summary;
  const sh = report.shadow;
  if (!sh) return null;
  return (
    <dl className="grid grid-cols-2 gap-x-6 gap-y-2 text-sm sm:grid-cols-3 lg:grid-cols-4" data-testid="shadow-summary">
      <div>
        <dt className="text-muted-foreground">Answered</dt>
        <dd className="tabular-nums" data-testid="shadow-answered">
          {sh.answered.toLocaleString()}
          {sh.dropped ? <span className="text-muted-foreground"> · {sh.dropped.toLocaleString()} dropped</span> : null}
          {sh.failed ? <span className="text-destructive"> · {sh.failed.toLocaleString()} failed</span> : null}
        </dd>
      </div>
      <div>
        <dt className="text-muted-foreground">Overlap@k · RBO</dt>
        <dd className="tabular-nums" data-testid="shadow-overlap">
          {s.meanOverlap.toFixed(3)} · {s.meanRbo.toFixed(3)}
        </dd>
      </div>
      <div>
        <dt className="text-muted-foreground">Gained · lost</dt>
        <dd className="tabular-nums">
          {s.gained.toLocaleString()} · {s.lost.toLocaleString()}
        </dd>
      </div>
      <div>
        <dt className="text-muted-foreground">Citation recall (main → branch)</dt>
        <dd className="tabular-nums">
          {s.citationRecall.diff.n ? (
            <>
              {pct(s.citationRecall.main)} → {pct(s.citationRecall.branch)}
              <div className="text-xs text-muted-foreground">branch − main {interval(s.citationRecall.diff)}</div>
            </>
          ) : (
            <span className="text-muted-foreground">no ask with citations yet</span>
          )}
        </dd>
      </div>
      <div>
        <dt className="text-muted-foreground">Latency (main → branch)</dt>
        <dd className="tabular-nums">
          {s.meanLatencyMs.main.toFixed(1)} → {s.meanLatencyMs.branch.toFixed(1)} ms
          <div className="text-xs text-muted-foreground">branch − main {interval(s.latencyDiff, 1)} ms</div>
        </dd>
      </div>
    </dl>
  );
}

/** The shadow report of one branch (the Promote screen shows it beside the diff). */
export function ShadowReportCard({ workspaceId, pipelineId, branch }: { workspaceId: string; pipelineId: string; branch: string }) {
  const trpc = useTRPC();
  const canRead = useCan("log:read");
  const report = useQuery({ ...trpc.shadow.report.queryOptions({ workspaceId, pipelineId, branch, limit: 0 }), enabled: canRead && branch !== "main", refetchInterval: 10_000 });
  if (!canRead || branch === "main") return null;
  const sh = report.data?.shadow;
  return (
    <Card data-testid="shadow-report">
      <CardHeader>
        <CardTitle className="flex flex-wrap items-center gap-2">
          Shadow traffic on {branch} {sh ? <Badge variant={STATE_VARIANT[sh.state]}>{sh.state}</Badge> : null}
        </CardTitle>
        <CardDescription>
          {sh
            ? `Copies of main's live queries, answered by ${branch} after the real response (${when(sh.startsAt)} → ${when(sh.stoppedAt ?? sh.endsAt)}), compared with what main served.`
            : `${branch} has not shadowed main: set it on the Traffic tab to see how it would answer your agents' real queries before promoting.`}
        </CardDescription>
      </CardHeader>
      {report.data && sh ? (
        <CardContent>
          <ShadowSummary report={report.data} />
        </CardContent>
      ) : null}
    </Card>
  );
}

/** Traffic tab: set a branch to shadow main for a while, stop it, and read its report. */
export function ShadowTrafficCard({ workspaceId, pipelineId, branches }: { workspaceId: string; pipelineId: string; branches: string[] }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canSet = useCan("workspace:update");
  const ref = { workspaceId, pipelineId };
  const [branch, setBranch] = useState("");
  const [hours, setHours] = useState("24");
  const [shown, setShown] = useState<string | null>(null);
  const list = useQuery({ ...trpc.shadow.list.queryOptions(ref), refetchInterval: 5000 });
  const current = shown ?? list.data?.find((s) => s.state === "running")?.branch ?? list.data?.[0]?.branch ?? null;
  const report = useQuery({ ...trpc.shadow.report.queryOptions({ ...ref, branch: current ?? "main", limit: 10 }), enabled: Boolean(current), refetchInterval: 5000 });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: trpc.shadow.list.queryKey() });
  const onError = (err: unknown) => toast.error(errorMessage(err));
  const start = useMutation(
    trpc.shadow.start.mutationOptions({
      onSuccess: (s) => {
        toast.success(`${s.branch} shadows main until ${when(s.endsAt)}.`);
        setShown(s.branch);
        refresh();
      },
      onError,
    }),
  );
  const stop = useMutation(trpc.shadow.stop.mutationOptions({ onSuccess: (s) => (toast.success(`Shadow traffic on ${s.branch} stopped.`), refresh()), onError }));
  const picked = branch || branches[0] || "";
  const minutes = Math.round(Number(hours) * 60);

  return (
    <Card data-testid="shadow-card">
      <CardHeader>
        <CardTitle>Shadow traffic</CardTitle>
        <CardDescription>
          A branch receives a copy of every search, ask, brief and walk served on main and answers it in the background, after the real response — which it never slows or changes (copies past a small queue are dropped and counted). Its report is replay&apos;s, and the Promote screen shows it.
        </CardDescription>
      </CardHeader>
      <CardContent className="space-y-4">
        {canSet ? (
          <form
            className="flex flex-wrap items-center gap-2"
            onSubmit={(e) => {
              e.preventDefault();
              if (picked) start.mutate({ ...ref, branch: picked, minutes });
            }}
          >
            <select aria-label="Branch to shadow main" data-testid="shadow-branch" className="h-8 rounded-md border border-input bg-transparent px-2 text-sm" value={picked} onChange={(e) => setBranch(e.target.value)}>
              {branches.length ? branches.map((b) => <option key={b} value={b}>{b}</option>) : <option value="">no branch yet</option>}
            </select>
            <label className="flex items-center gap-1 text-sm text-muted-foreground">
              for
              <Input aria-label="Hours" type="number" min={0.1} step="any" value={hours} onChange={(e) => setHours(e.target.value)} className="h-8 w-20" />
              hours
            </label>
            <Button type="submit" size="sm" disabled={!picked || start.isPending || !(minutes >= 1)} data-testid="shadow-start">
              {start.isPending ? "Starting…" : "Shadow main"}
            </Button>
          </form>
        ) : (
          <p className="text-sm text-muted-foreground">Setting shadow traffic needs workspace:update (admins and owners).</p>
        )}
        {list.data?.length ? (
          <Table data-testid="shadow-list">
            <TableHeader>
              <TableRow>
                <TableHead>Branch</TableHead>
                <TableHead>State</TableHead>
                <TableHead>Period</TableHead>
                <TableHead className="text-right">Answered</TableHead>
                <TableHead className="text-right">Dropped</TableHead>
                <TableHead />
              </TableRow>
            </TableHeader>
            <TableBody>
              {list.data.slice(0, 10).map((s) => (
                <TableRow key={s.id} data-testid={`shadow-row-${s.branch}`} className={s.branch === current ? "bg-muted/50" : undefined}>
                  <TableCell>
                    <button type="button" className="font-medium underline-offset-2 hover:underline" onClick={() => setShown(s.branch)}>
                      {s.branch}
                    </button>
                  </TableCell>
                  <TableCell>
                    <Badge variant={STATE_VARIANT[s.state]}>{s.state}</Badge>
                    {s.stopReason && s.stopReason !== "stopped" ? <div className="text-xs text-muted-foreground">{s.stopReason}</div> : null}
                  </TableCell>
                  <TableCell className="text-xs text-muted-foreground">
                    {when(s.startsAt)} → {when(s.stoppedAt ?? s.endsAt)}
                  </TableCell>
                  <TableCell className="text-right tabular-nums">{s.answered.toLocaleString()}</TableCell>
                  <TableCell className="text-right tabular-nums">{s.dropped.toLocaleString()}</TableCell>
                  <TableCell className="text-right">
                    {canSet && (s.state === "running" || s.state === "scheduled") ? (
                      <Button size="sm" variant="outline" data-testid={`shadow-stop-${s.branch}`} disabled={stop.isPending} onClick={() => stop.mutate({ ...ref, branch: s.branch })}>
                        Stop
                      </Button>
                    ) : null}
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        ) : null}
        {report.data?.shadow ? (
          <div className="space-y-3">
            <h3 className="text-sm font-medium">Report: {report.data.shadow.branch} against main</h3>
            <ShadowSummary report={report.data} />
            {report.data.queries.length ? (
              <Table>
                <TableHeader>
                  <TableRow>
                    <TableHead>Query</TableHead>
                    <TableHead className="text-right">Overlap@k</TableHead>
                    <TableHead className="text-right">RBO</TableHead>
                    <TableHead className="text-right">Gained · lost</TableHead>
                    <TableHead className="text-right">ms (main → branch)</TableHead>
                  </TableRow>
                </TableHeader>
                <TableBody>
                  {report.data.queries.map((q) => (
                    <TableRow key={q.id} data-testid="shadow-query">
                      <TableCell className="max-w-xs break-words">
                        {q.query || <span className="text-muted-foreground">({q.kind})</span>}
                        {q.error ? <div className="text-xs text-destructive">{q.error}</div> : null}
                      </TableCell>
                      <TableCell className="text-right tabular-nums">{q.overlap.toFixed(2)}</TableCell>
                      <TableCell className="text-right tabular-nums">{q.rbo.toFixed(2)}</TableCell>
                      <TableCell className="text-right tabular-nums">
                        {q.gained.length} · {q.lost.length}
                      </TableCell>
                      <TableCell className="text-right tabular-nums">
                        {q.main.latencyMs.toFixed(0)} → {q.branch.latencyMs.toFixed(0)}
                      </TableCell>
                    </TableRow>
                  ))}
                </TableBody>
              </Table>
            ) : (
              <p className="text-sm text-muted-foreground">No copies answered yet: queries served on main appear here.</p>
            )}
          </div>
        ) : null}
      </CardContent>
    </Card>
  );
}
