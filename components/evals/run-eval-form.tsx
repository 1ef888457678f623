"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Play, Upload } from "lucide-react";
import { useState } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { Label } from "@/components/ui/label";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";

const selectClass = "h-9 rounded-md border bg-background px-2 text-sm";
/** Option values of team question sets in the benchmark select. */
const QS = "qs:";

/** Pick (or upload) a benchmark, a branch, altitude and mode; optionally score the baseline templates beside it. */
export function RunEvalForm({ pipelineId, branches, defaultBranch, steps }: { pipelineId: string; branches: string[]; defaultBranch: string; steps: string[] }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const datasets = useQuery(trpc.evals.datasets.queryOptions({ workspaceId: workspace.id }));
  const questionSets = useQuery(trpc.evals.questionSets.queryOptions({ workspaceId: workspace.id }));
  const templates = useQuery(trpc.evals.templates.queryOptions({ workspaceId: workspace.id }));
  const [datasetId, setDatasetId] = useState<string>("");
  const [branch, setBranch] = useState(defaultBranch);
  const [mode, setMode] = useState<"hybrid" | "fts" | "semantic" | "bm25" | "walk">("hybrid");
  const [step, setStep] = useState("");
  const [baselines, setBaselines] = useState<string[]>([]);
  const [uploading, setUploading] = useState(false);
  const chosen = datasetId || datasets.data?.[0]?.id || (questionSets.data?.[0] ? `${QS}${questionSets.data[0].id}` : "");
  // A team's question set is asked of this pipeline's own memory: no templates beside it.
  const questionSet = chosen.startsWith(QS) ? chosen.slice(QS.length) : null;

  const importDataset = useMutation(trpc.evals.importDataset.mutationOptions());
  const start = useMutation(trpc.evals.start.mutationOptions());

  async function upload(file: File) {
    setUploading(true);
    try {
      const row = await importDataset.mutateAsync({ workspaceId: workspace.id, benchmark: "locomo", text: await file.text(), name: file.name });
      const skips = row.skips as Array<{ dropped: boolean }>;
      toast.success(`${row.name}: ${row.samples} conversations, ${row.questions} questions (${skips.filter((s) => s.dropped).length} skipped, ${skips.filter((s) => !s.dropped).length} repaired).`);
      await queryClient.invalidateQueries({ queryKey: trpc.evals.datasets.queryKey() });
      setDatasetId(row.id);
    } catch (err) {
      toast.error(errorMessage(err));
    } finally {
      setUploading(false);
    }
  }

  async function run() {
    if (!chosen) return;
    try {
      await start.mutateAsync({ workspaceId: workspace.id, pipelineId, branch, ...(questionSet ? { questionSet } : { datasetId: chosen }), mode, step: step || undefined });
      if (!questionSet) for (const template of baselines) await start.mutateAsync({ workspaceId: workspace.id, template, branch: "main", datasetId: chosen });
      toast.success("Eval started: the table below shows its progress.");
    } catch (err) {
      toast.error(errorMessage(err));
    }
    await queryClient.invalidateQueries({ queryKey: trpc.evals.list.queryKey() });
  }

  return (
    <Card>
      <CardHeader>
        <CardTitle>Run an eval</CardTitle>
        <CardDescription>
          The benchmark&apos;s conversations become the sources of an isolated copy of this pipeline (one scope per conversation); it runs incrementally, then every question is searched and traced to its evidence.
        </CardDescription>
      </CardHeader>
      <CardContent className="grid gap-4">
        <div className="flex flex-wrap items-end gap-4">
          <div className="grid gap-1.5">
            <Label htmlFor="eval-dataset">Benchmark</Label>
            <select id="eval-dataset" className={selectClass} value={chosen} onChange={(e) => setDatasetId(e.target.value)} data-testid="eval-dataset">
              {(datasets.data ?? []).length === 0 && !(questionSets.data ?? []).length && <option value="">Upload a file first</option>}
              {(datasets.data ?? []).map((d) => (
                <option key={d.id} value={d.id}>
                  {d.benchmark} · {d.name} ({d.questions} questions)
                </option>
              ))}
              {(questionSets.data ?? []).length > 0 && (
                <optgroup label="Team question sets (this pipeline's own memory)">
                  {questionSets.data!.map((q) => (
                    <option key={q.id} value={`${QS}${q.id}`}>
                      question set · {q.name} ({q.questions} questions)
                    </option>
                  ))}
                </optgroup>
              )}
            </select>
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor="eval-upload">Upload LoCoMo JSON</Label>
            <label className="inline-flex h-9 cursor-pointer items-center gap-2 rounded-md border px-3 text-sm hover:bg-muted">
              <Upload className="size-4" /> {uploading ? "Importing…" : "Choose file"}
              <input id="eval-upload" data-testid="eval-upload" type="file" accept=".json,application/json" className="sr-only" onChange={(e) => e.target.files?.[0] && void upload(e.target.files[0])} />
            </label>
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor="eval-branch">Branch</Label>
            <select id="eval-branch" className={selectClass} value={branch} onChange={(e) => setBranch(e.target.value)} data-testid="eval-branch">
              {(branches.length ? branches : [defaultBranch]).map((b) => (
                <option key={b}>{b}</option>
              ))}
            </select>
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor="eval-step">Altitude</Label>
            <select id="eval-step" className={selectClass} value={step} onChange={(e) => setStep(e.target.value)} data-testid="eval-step">
              <option value="">every indexed step</option>
              {steps.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor="eval-mode">Mode</Label>
            <select id="eval-mode" className={selectClass} value={mode} onChange={(e) => setMode(e.target.value as typeof mode)} data-testid="eval-mode">
              <option value="hybrid">hybrid</option>
              <option value="fts">full text</option>
              <option value="semantic">semantic</option>
              <option value="bm25">bm25 (one step)</option>
              <option value="walk">walk (top-down from the step)</option>
            </select>
          </div>
          <Button onClick={() => void run()} disabled={!chosen || start.isPending} data-testid="run-eval">
            <Play className="size-4" /> Run eval
          </Button>
        </div>
        <fieldset className="flex flex-wrap items-center gap-4 text-sm">
          <legend className="mb-1 text-xs text-muted-foreground">Also score these templates on the same benchmark (rows to compare against):</legend>
          {(templates.data ?? []).map(({ name: t }) => (
            <label key={t} className="flex items-center gap-1.5">
              <input type="checkbox" disabled={!!questionSet} checked={baselines.includes(t)} onChange={() => setBaselines((b) => (b.includes(t) ? b.filter((x) => x !== t) : [...b, t]))} data-testid={`baseline-${t}`} />
              {t}
            </label>
          ))}
        </fieldset>
      </CardContent>
    </Card>
  );
}
