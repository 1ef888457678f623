"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { FileBarChart, Play, Shuffle } from "lucide-react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { fmtInt, fmtUsd } from "@/components/runs/format";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from "@/components/ui/dialog";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC, type RouterOutputs } from "@/lib/trpc";

type Created = RouterOutputs["migration"]["create"];

const selectClass = "rounded-md border bg-background px-2 py-1 text-sm";
const DEFAULT_TEMPLATE = "synapsis";

/**
 * "Try another architecture" (issue 50): pick a template, see how its sources bind to the
 * pipeline's (change any binding), create the candidate branch (every raw record shared), read its
 * plan (what a run computes and reuses, tokens and cost with the team's model), then run it.
 */
export function TryArchitecture({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const canWrite = useCan("branches:write");
  const canRun = useCan("runs:write");
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const ref = { workspaceId: workspace.id, pipelineId };
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  const [open, setOpen] = useState(false);
  const [template, setTemplate] = useState(DEFAULT_TEMPLATE);
  const [name, setName] = useState(`try-${DEFAULT_TEMPLATE}`);
  const [nameTouched, setNameTouched] = useState(false);
  const [bind, setBind] = useState<Record<string, string>>({});
  const [created, setCreated] = useState<Created | null>(null);

  const templates = useQuery({ ...trpc.pipeline.templates.queryOptions({ workspaceId: workspace.id }), enabled: open });
  const preview = useQuery({
    ...trpc.migration.preview.queryOptions({ ...ref, template, ...(Object.keys(bind).length ? { bind } : {}) }),
    enabled: open && !created,
    retry: false,
  });
  const create = useMutation(
    trpc.migration.create.mutationOptions({
      onSuccess: (res) => {
        setCreated(res);
        toast.success(res.message);
        void queryClient.invalidateQueries({ queryKey: trpc.branch.list.queryKey() });
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  const start = useMutation(
    trpc.run.start.mutationOptions({
      onSuccess: (run) => {
        toast.success("Run started");
        setOpen(false);
        void queryClient.invalidateQueries({ queryKey: trpc.run.list.queryKey() });
        router.push(`${base}/runs/${run.id}?branch=${encodeURIComponent(created?.branch.name ?? "main")}`);
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );

  const pickTemplate = (id: string) => {
    setTemplate(id);
    setBind({});
    if (!nameTouched) setName(`try-${id}`);
  };
  const reset = (next: boolean) => {
    setOpen(next);
    if (!next) {
      setCreated(null);
      create.reset();
    }
  };
  if (!canWrite) return null;

  return (
    <>
      <Button variant="outline" data-testid="try-architecture" onClick={() => reset(true)}>
        <Shuffle /> Try another architecture
      </Button>
      <Dialog open={open} onOpenChange={reset}>
        <DialogContent className="max-h-[90vh] overflow-y-auto sm:max-w-3xl" data-testid="migration-dialog">
          <DialogHeader>
            <DialogTitle>Try another architecture</DialogTitle>
            <DialogDescription>
              A branch of main on another template, reading the sources you already have: every raw record is shared, nothing is imported again. Main is untouched until you
              promote.
            </DialogDescription>
          </DialogHeader>

          {created ? (
            <CreatedPlan created={created} base={base} />
          ) : (
            <div className="grid gap-4">
              <div className="flex flex-wrap items-end gap-4">
                <div className="grid gap-1.5">
                  <Label htmlFor="migration-template">Template</Label>
                  <select id="migration-template" className={selectClass} value={template} onChange={(e) => pickTemplate(e.target.value)} data-testid="migration-template">
                    {(templates.data ?? [{ id: DEFAULT_TEMPLATE, title: DEFAULT_TEMPLATE }])
                      .filter((t) => t.id !== "blank")
                      .map((t) => (
                        <option key={t.id} value={t.id}>
                          {t.title} ({t.id})
                        </option>
                      ))}
                  </select>
                </div>
                <div className="grid gap-1.5">
                  <Label htmlFor="migration-name">Candidate branch</Label>
                  <Input
                    id="migration-name"
                    className="w-56"
                    value={name}
                    data-testid="migration-name"
                    onChange={(e) => {
                      setName(e.target.value);
                      setNameTouched(true);
                    }}
                  />
                </div>
              </div>

              {preview.isPending ? (
                <p className="text-sm text-muted-foreground">Binding the template’s sources…</p>
              ) : preview.isError ? (
                <p className="text-sm text-destructive" data-testid="migration-refusal">
                  {errorMessage(preview.error)}
                </p>
              ) : (
                <div className="grid gap-2" data-testid="migration-binding">
                  <p className="text-sm">
                    <span className="font-medium">{preview.data.template.title}</span> reads {preview.data.template.reads} ({preview.data.template.formats.join(", ")}). Prompt
                    steps use <code>{preview.data.model}</code>.
                  </p>
                  <Table>
                    <TableHeader>
                      <TableRow>
                        <TableHead>Template source</TableHead>
                        <TableHead>Reads the pipeline’s source</TableHead>
                        <TableHead>Format</TableHead>
                      </TableRow>
                    </TableHeader>
                    <TableBody>
                      {preview.data.bindings.map((b) => (
                        <TableRow key={b.templateSource} data-testid={`binding-${b.templateSource}`}>
                          <TableCell className="font-medium">{b.templateSource}</TableCell>
                          <TableCell>
                            <select
                              aria-label={`Source for ${b.templateSource}`}
                              className={selectClass}
                              value={b.pipelineSource}
                              data-testid={`bind-${b.templateSource}`}
                              onChange={(e) => setBind((prev) => ({ ...prev, [b.templateSource]: e.target.value }))}
                            >
                              {b.candidates.map((c) => (
                                <option key={c} value={c}>
                                  {c}
                                </option>
                              ))}
                            </select>{" "}
                            <Badge variant="outline">{b.chosen ? "chosen" : "by format"}</Badge>
                          </TableCell>
                          <TableCell className="text-xs text-muted-foreground">{b.format}</TableCell>
                        </TableRow>
                      ))}
                    </TableBody>
                  </Table>
                  {preview.data.unbound.length ? (
                    <p className="text-xs text-muted-foreground">Kept but unread by this template: {preview.data.unbound.join(", ")} (their records stay).</p>
                  ) : null}
                  <p className="text-xs text-muted-foreground">
                    Steps: {preview.data.spec.steps.map((s) => s.name).join(", ")}. Create shows the plan: what a run computes, what it reuses, and its cost.
                  </p>
                </div>
              )}
            </div>
          )}

          <DialogFooter>
            {created ? (
              <>
                <Button asChild variant="outline" data-testid="migration-open-report">
                  <Link href={`${base}/branches/report?branch=${encodeURIComponent(created.branch.name)}`} onClick={() => setOpen(false)}>
                    <FileBarChart /> Report
                  </Link>
                </Button>
                {canRun ? (
                  <Button data-testid="migration-run" disabled={start.isPending} onClick={() => start.mutate({ ...ref, branch: created.branch.name })}>
                    <Play /> {start.isPending ? "Starting…" : `Run ${created.branch.name}`}
                  </Button>
                ) : null}
              </>
            ) : (
              <Button
                data-testid="migration-create"
                disabled={!preview.isSuccess || !name.trim() || create.isPending}
                onClick={() => create.mutate({ ...ref, name: name.trim(), template, ...(Object.keys(bind).length ? { bind } : {}) })}
              >
                {create.isPending ? "Creating…" : "Create candidate branch"}
              </Button>
            )}
          </DialogFooter>
        </DialogContent>
      </Dialog>
    </>
  );
}

/** The candidate's plan: what a run computes (records, model, cost), what it reuses, the totals. */
function CreatedPlan({ created, base }: { created: Created; base: string }) {
  const t = created.plan.totals;
  return (
    <div className="grid gap-3" data-testid="migration-plan">
      <p className="text-sm">
        Branch{" "}
        <Link className="font-medium underline" href={`${base}?branch=${encodeURIComponent(created.branch.name)}`}>
          {created.branch.name}
        </Link>{" "}
        on {created.template.title}: {created.bindings.map((b) => `${b.templateSource} ← ${b.pipelineSource}`).join(", ")}; {fmtInt(created.recordsShared)} record(s) shared.
      </p>
      <p className="text-sm text-muted-foreground" data-testid="migration-plan-summary">
        {created.summary}
      </p>
      <Table>
        <TableHeader>
          <TableRow>
            <TableHead>Step</TableHead>
            <TableHead>Model</TableHead>
            <TableHead className="text-right">To compute</TableHead>
            <TableHead className="text-right">Tokens</TableHead>
            <TableHead className="text-right">Cost</TableHead>
          </TableRow>
        </TableHeader>
        <TableBody>
          {created.plan.steps.map((s) => (
            <TableRow key={s.step} data-testid={`plan-step-${s.step}`}>
              <TableCell className="font-medium">{s.step}</TableCell>
              <TableCell className="text-xs">{s.model ?? "—"}</TableCell>
              <TableCell className="text-right tabular-nums">{s.pending > 0 ? fmtInt(s.pending) : created.reuses.steps.includes(s.step) ? "reused" : "0"}</TableCell>
              <TableCell className="text-right tabular-nums">{fmtInt(s.estimatedTokensIn + s.estimatedTokensOut)}</TableCell>
              <TableCell className="text-right tabular-nums">{fmtUsd(s.estimatedCostUsd)}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
      <p className="text-sm" data-testid="migration-plan-totals">
        Reuses {fmtInt(created.reuses.rawRecords)} raw record(s) of {created.reuses.sources.join(", ")}. Estimated {fmtInt(t.estimatedTokensIn + t.estimatedTokensOut)} tokens,{" "}
        {fmtUsd(t.estimatedCostUsd)} with <code>{created.model}</code>
        {created.plan.costRatioVsMain != null ? ` (a full build costs ${created.plan.costRatioVsMain.toFixed(2)}× main's)` : ""}.
      </p>
      {created.plan.providerProblems.length ? (
        <p className="text-sm text-destructive">{created.plan.providerProblems.map((p) => `${p.step}: ${p.message}`).join(" ")}</p>
      ) : null}
    </div>
  );
}
