"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ArrowUpToLine } from "lucide-react";
import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useState } from "react";
import { fmtInt } from "@/components/runs/format";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from "@/components/ui/dialog";
import { Skeleton } from "@/components/ui/skeleton";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC, type RouterOutputs } from "@/lib/trpc";
import { formatReason } from "@/server/pipeline/diff-reasons";
import { ShadowReportCard } from "@/components/traffic/shadow-traffic";

type Segment = RouterOutputs["branch"]["pairs"]["pairs"][number]["diff"]["left"][number];

function Side({ title, id, segments, testId }: { title: string; id: string; segments: Segment[]; testId: string }) {
  return (
    <div className="min-w-0 flex-1 rounded-md border" data-testid={testId}>
      <div className="border-b px-3 py-1.5 text-xs text-muted-foreground">
        {title} · <code>{id}</code>
      </div>
      <pre className="max-h-96 overflow-auto whitespace-pre-wrap px-3 py-2 text-sm">
        {segments.map((s, i) =>
          s.changed ? (
            <mark key={i} className={cn("rounded-sm", testId.endsWith("left") ? "bg-destructive/20 line-through" : "bg-success/25")}>
              {s.text}
            </mark>
          ) : (
            <span key={i}>{s.text}</span>
          ),
        )}
      </pre>
    </div>
  );
}

/** A branch against a baseline (main by default): per step why and counts, record pairs side by side, promote. */
export function BranchDiff({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const queryClient = useQueryClient();
  const branch = params.get("branch") ?? "main";
  const against = params.get("against") ?? "main";
  const step = params.get("step");
  const group = params.get("group");
  const canPromote = useCan("branches:promote");
  const canAdmin = useCan("branches:admin");
  const ref = { workspaceId: workspace.id, pipelineId, branch };
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  const setParam = (changes: Record<string, string | null>) => {
    const q = new URLSearchParams(params.toString());
    for (const [k, v] of Object.entries(changes)) {
      if (v === null) q.delete(k);
      else q.set(k, v);
    }
    router.push(`${pathname}?${q.toString()}`);
  };

  const list = useQuery(trpc.branch.list.queryOptions({ workspaceId: workspace.id, pipelineId }));
  const diff = useQuery({ ...trpc.branch.diff.queryOptions({ ...ref, against }), enabled: branch !== against, retry: false });
  const pairs = useQuery({ ...trpc.branch.pairs.queryOptions({ ...ref, against, step: step ?? "", limit: 25 }), enabled: Boolean(step) && branch !== against });
  const pair = pairs.data?.pairs.find((p) => p.groupKey === group) ?? pairs.data?.pairs[0];
  const [confirm, setConfirm] = useState(false);
  const promote = useMutation(
    trpc.branch.promote.mutationOptions({
      onSuccess: (res) => {
        setConfirm(false);
        toast.success(res.message);
        void queryClient.invalidateQueries();
        router.push(`${base}/branches?branch=main`);
      },
      onError: (err) => {
        setConfirm(false);
        toast.error(errorMessage(err));
      },
    }),
  );
  const protectedMain = list.data?.protectedMain ?? true;
  const promoteBlocker =
    against !== "main" || branch === "main"
      ? "Promotion goes into main: compare a branch against main."
      : !canPromote
        ? "Your role cannot promote branches."
        : protectedMain && !canAdmin
          ? "Main is protected: only admins and owners can promote into it."
          : null;

  return (
    <>
      <PageHeader
        title={`${branch} against ${against}`}
        description="Per step: why it differs (prompt, model, config, upstream) and which records are only on one side or shared. Pick a step to see its records side by side."
        actions={
          <div className="flex flex-col items-end gap-1">
            <Button data-testid="promote" onClick={() => setConfirm(true)} disabled={Boolean(promoteBlocker) || promote.isPending} title={promoteBlocker ?? undefined}>
              <ArrowUpToLine /> Promote {branch} into main
            </Button>
            {promoteBlocker ? (
              <span className="text-xs text-muted-foreground" data-testid="promote-blocker">
                {promoteBlocker}
              </span>
            ) : null}
          </div>
        }
      />
      <PipelineTabs pipelineId={pipelineId} />
      <div className="mb-4 flex items-center gap-2 text-sm">
        <span className="text-muted-foreground">Baseline</span>
        <select data-testid="against-select" className="h-8 rounded-md border border-input bg-transparent px-2" value={against} onChange={(e) => setParam({ against: e.target.value, step: null, group: null })}>
          {(list.data?.branches ?? [{ name: against }]).map((b) => (
            <option key={b.name} value={b.name}>
              {b.name}
            </option>
          ))}
        </select>
        <Link className="ml-auto text-primary underline-offset-4 hover:underline" href={`${base}/branches?branch=${encodeURIComponent(branch)}`}>
          All branches
        </Link>
      </div>

      {against === "main" ? (
        <div className="mb-4">
          <ShadowReportCard workspaceId={workspace.id} pipelineId={pipelineId} branch={branch} />
        </div>
      ) : null}
      <Card>
        <CardHeader>
          <CardTitle>Steps</CardTitle>
          <CardDescription>Counts are records: only on {against}, only on {branch}, and shared (the same record, computed once).</CardDescription>
        </CardHeader>
        <CardContent>
          {branch === against ? (
            <p className="text-sm text-muted-foreground">Pick a branch other than {against} in the branch picker to compare.</p>
          ) : diff.isPending ? (
            <Skeleton className="h-40 w-full" />
          ) : diff.isError ? (
            <p className="text-sm text-destructive">{errorMessage(diff.error)}</p>
          ) : (
            <Table data-testid="diff-table">
              <TableHeader>
                <TableRow>
                  <TableHead>Step</TableHead>
                  <TableHead>Status</TableHead>
                  <TableHead>Why</TableHead>
                  <TableHead className="text-right">Only {against}</TableHead>
                  <TableHead className="text-right">Only {branch}</TableHead>
                  <TableHead className="text-right">Shared</TableHead>
                  <TableHead />
                </TableRow>
              </TableHeader>
              <TableBody>
                {diff.data.steps.map((s) => (
                  <TableRow key={s.name} data-testid={`diff-step-${s.name}`} className={cn(s.name === step && "bg-muted/50")}>
                    <TableCell className="font-medium">{s.name}</TableCell>
                    <TableCell>
                      <Badge variant={s.status === "unchanged" ? "outline" : "warning"}>{s.status}</Badge>
                    </TableCell>
                    <TableCell className="text-xs" data-testid={`diff-why-${s.name}`}>
                      {s.reasons.map(formatReason).join("; ")}
                    </TableCell>
                    <TableCell className="text-right tabular-nums" data-testid={`only-a-${s.name}`}>
                      {fmtInt(s.onlyA)}
                    </TableCell>
                    <TableCell className="text-right tabular-nums" data-testid={`only-b-${s.name}`}>
                      {fmtInt(s.onlyB)}
                    </TableCell>
                    <TableCell className="text-right tabular-nums" data-testid={`shared-${s.name}`}>
                      {fmtInt(s.shared)}
                    </TableCell>
                    <TableCell className="text-right">
                      {s.differingGroups > 0 ? (
                        <Button size="sm" variant="outline" data-testid={`show-pairs-${s.name}`} onClick={() => setParam({ step: s.name, group: null })}>
                          {fmtInt(s.differingGroups)} differing
                        </Button>
                      ) : null}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          )}
        </CardContent>
      </Card>

      {step ? (
        <Card className="mt-6">
          <CardHeader>
            <CardTitle>{step}: same inputs, different output</CardTitle>
            <CardDescription>Each pair is one group (the same input records) as {against} and {branch} made it.</CardDescription>
          </CardHeader>
          <CardContent className="flex gap-4">
            <ul className="w-56 shrink-0 space-y-1 text-xs" data-testid="pair-list">
              {pairs.data?.pairs.map((p) => (
                <li key={p.groupKey}>
                  <button
                    type="button"
                    data-testid="pair-item"
                    className={cn("w-full truncate rounded px-2 py-1 text-left hover:bg-muted", p.groupKey === pair?.groupKey && "bg-muted font-medium")}
                    onClick={() => setParam({ group: p.groupKey })}
                    title={p.groupKey}
                  >
                    {p.b.content.replace(/\s+/g, " ").slice(0, 60)}
                  </button>
                </li>
              ))}
              {pairs.data && pairs.data.pairs.length === 0 ? <li className="text-muted-foreground">No record of {step} differs.</li> : null}
            </ul>
            {pair ? (
              <div className="min-w-0 flex-1 space-y-2" data-testid="record-pair">
                <div className="flex gap-3">
                  <Side title={against} id={pair.a.id} segments={pair.diff.left} testId="pair-left" />
                  <Side title={branch} id={pair.b.id} segments={pair.diff.right} testId="pair-right" />
                </div>
                <p className="text-xs text-muted-foreground" data-testid="pair-summary">
                  {pair.diff.removed || pair.diff.added
                    ? `${fmtInt(pair.diff.removed)} characters only on ${against}, ${fmtInt(pair.diff.added)} only on ${branch} (${pair.diff.unit} diff).`
                    : "Same text, made differently (another prompt or model produced identical output; the offline model is extractive and ignores a prompt's prose)."}
                </p>
              </div>
            ) : pairs.isPending ? (
              <Skeleton className="h-40 flex-1" />
            ) : null}
          </CardContent>
        </Card>
      ) : null}

      <Dialog open={confirm} onOpenChange={setConfirm}>
        <DialogContent>
          <DialogHeader>
            <DialogTitle>Promote {branch} into main?</DialogTitle>
            <DialogDescription>
              Main takes what {branch} changed and points at its records (nothing is recomputed). Steps downstream whose inputs changed without {branch} having computed them become stale on main until its next run.
            </DialogDescription>
          </DialogHeader>
          <DialogFooter>
            <Button variant="outline" onClick={() => setConfirm(false)}>
              Cancel
            </Button>
            <Button data-testid="confirm-promote" disabled={promote.isPending} onClick={() => promote.mutate({ ...ref, message: "" })}>
              {promote.isPending ? "Promoting…" : "Promote"}
            </Button>
          </DialogFooter>
        </DialogContent>
      </Dialog>
    </>
  );
}
