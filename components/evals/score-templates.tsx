"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Play, Upload } from "lucide-react";
import { useState } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { plural } from "@/components/ui/plural";

const selectClass = "h-9 rounded-md border bg-background px-2 text-sm";

/**
 * Score several architectures on the same benchmark: every checked template is built from the
 * benchmark's raw conversations in its own isolated copy and scored; the comparison below fills
 * in as each finishes.
 */
export function ScoreTemplates({ datasetId, onDataset }: { datasetId: string; onDataset: (id: string) => void }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const templates = useQuery(trpc.evals.templates.queryOptions({ workspaceId: workspace.id }));
  const datasets = useQuery(trpc.evals.datasets.queryOptions({ workspaceId: workspace.id }));
  const importDataset = useMutation(trpc.evals.importDataset.mutationOptions());
  const start = useMutation(trpc.evals.start.mutationOptions());
  const [checked, setChecked] = useState<string[]>([]);
  const [uploading, setUploading] = useState(false);
  const [starting, setStarting] = useState(false);
  const chosen = datasetId || datasets.data?.[0]?.id || "";

  async function upload(file: File) {
    setUploading(true);
    try {
      const row = await importDataset.mutateAsync({ workspaceId: workspace.id, benchmark: "locomo", text: await file.text(), name: file.name });
      toast.success(`${row.name}: ${plural(row.samples, "conversation")}, ${plural(row.questions, "question")}.`);
      await queryClient.invalidateQueries({ queryKey: trpc.evals.datasets.queryKey() });
      onDataset(row.id);
    } catch (err) {
      toast.error(errorMessage(err));
    } finally {
      setUploading(false);
    }
  }

  async function score() {
    setStarting(true);
    try {
      for (const template of checked) await start.mutateAsync({ workspaceId: workspace.id, template, branch: "main", datasetId: chosen });
      toast.success(`Scoring ${checked.length} template${checked.length === 1 ? "" : "s"}: each row below fills in when it finishes.`);
      setChecked([]);
    } catch (err) {
      toast.error(errorMessage(err));
    } finally {
      setStarting(false);
      await queryClient.invalidateQueries({ queryKey: trpc.evals.list.queryKey() });
    }
  }

  return (
    <Card data-testid="score-templates">
      <CardHeader>
        <CardTitle>Score architectures on a benchmark</CardTitle>
        <CardDescription>
          Each template is built from the same raw conversations (offline unless its steps name a model), then every question is searched and scored with its cost.
        </CardDescription>
      </CardHeader>
      <CardContent className="grid gap-4">
        <div className="flex flex-wrap items-end gap-4">
          <label className="grid gap-1.5 text-sm">
            Benchmark
            <select className={selectClass} value={chosen} onChange={(e) => onDataset(e.target.value)} data-testid="score-dataset">
              {(datasets.data ?? []).length === 0 && <option value="">Upload a file first</option>}
              {(datasets.data ?? []).map((d) => (
                <option key={d.id} value={d.id}>
                  {d.benchmark} · {d.name} ({plural(d.questions, "question")})
                </option>
              ))}
            </select>
          </label>
          <label className="inline-flex h-9 cursor-pointer items-center gap-2 rounded-md border px-3 text-sm hover:bg-muted">
            <Upload className="size-4" /> {uploading ? "Importing…" : "Upload LoCoMo JSON"}
            <input type="file" accept=".json,application/json" className="sr-only" data-testid="score-upload" onChange={(e) => e.target.files?.[0] && void upload(e.target.files[0])} />
          </label>
        </div>
        <fieldset className="grid gap-2 sm:grid-cols-2 lg:grid-cols-3">
          <legend className="mb-1 text-xs text-muted-foreground">Templates to score</legend>
          {(templates.data ?? []).map((t) => (
            <label key={t.name} className="flex items-start gap-2 rounded-md border p-2 text-sm" title={t.description}>
              <input
                type="checkbox"
                className="mt-1"
                checked={checked.includes(t.name)}
                onChange={() => setChecked((c) => (c.includes(t.name) ? c.filter((x) => x !== t.name) : [...c, t.name]))}
                data-testid={`score-template-${t.name}`}
              />
              <span className="grid">
                <span className="font-medium">{t.name}</span>
                <span className="text-xs text-muted-foreground">
                  {t.mode}
                  {t.step ? ` @ ${t.step}` : ""}
                </span>
              </span>
            </label>
          ))}
        </fieldset>
        <div>
          <Button onClick={() => void score()} disabled={!chosen || !checked.length || starting} data-testid="score-run">
            <Play className="size-4" /> {starting ? "Starting…" : `Score ${checked.length || ""} template${checked.length === 1 ? "" : "s"}`}
          </Button>
        </div>
      </CardContent>
    </Card>
  );
}
