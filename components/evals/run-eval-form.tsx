"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Play, Upload } from "lucide-react";
import Link from "next/link";
import { useState } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { Label } from "@/components/ui/label";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { plural } from "@/components/ui/plural";

const selectClass = "h-9 rounded-md border bg-background px-2 text-sm";
/** Option values of team question sets in the benchmark select. */
const QS = "qs:";

/**
 * Why a `provider/model` cannot be used here, or null. The server refuses the same (this only
 * says it before the button is pressed).
 */
function modelProblem(id: string, available: string[] | undefined): string | null {
  if (!id) return null;
  const slash = id.indexOf("/");
  if (slash <= 0 || slash === id.length - 1) return `"${id}" is not provider/model (e.g. openai/gpt-4o-mini).`;
  const provider = id.slice(0, slash);
  if (available && !available.includes(provider)) return `No provider named "${provider}" in this workspace: add it in Settings → Models.`;
  return null;
}

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
  const [mode, setMode] = useState<"hybrid" | "fts" | "semantic" | "graph" | "bm25" | "walk">("hybrid");
  const [step, setStep] = useState("");
  const [baselines, setBaselines] = useState<string[]>([]);
  const [uploading, setUploading] = useState(false);
  // With an answer model, answers are generated from the retrieved context and graded (j, F1).
  const providers = useQuery(trpc.provider.available.queryOptions({ workspaceId: workspace.id }));
  const [answerModel, setAnswerModel] = useState("");
  const [judgeModel, setJudgeModel] = useState("");
  const [budget, setBudget] = useState("");
  const answer = answerModel.trim();
  const judge = judgeModel.trim();
  const budgetUsd = budget.trim() ? Number(budget) : undefined;
  const problems = {
    answer: modelProblem(answer, providers.data),
    judge: judge && !answer ? "A judge model needs an answer model to grade." : modelProblem(judge, providers.data),
    budget: budgetUsd !== undefined && !(budgetUsd > 0 && budgetUsd <= 1000) ? "The budget must be more than $0 and at most $1000." : null,
  };
  const invalid = Object.values(problems).some(Boolean);
  // A picked question set that was deleted meanwhile falls back to the first choice.
  const picked = datasetId.startsWith(QS) && questionSets.data && !questionSets.data.some((q) => `${QS}${q.id}` === datasetId) ? "" : datasetId;
  const chosen = picked || datasets.data?.[0]?.id || (questionSets.data?.[0] ? `${QS}${questionSets.data[0].id}` : "");
  // A team's question set is asked of this pipeline's own memory: no templates beside it.
  const questionSet = chosen.startsWith(QS) ? chosen.slice(QS.length) : null;

  const importDataset = useMutation(trpc.evals.importDataset.mutationOptions());
  const start = useMutation(trpc.evals.start.mutationOptions());

  async function upload(file: File) {
    setUploading(true);
    try {
      const row = await importDataset.mutateAsync({ workspaceId: workspace.id, benchmark: "locomo", text: await file.text(), name: file.name });
      const skips = row.skips as Array<{ dropped: boolean }>;
      toast.success(`${row.name}: ${plural(row.samples, "conversation")}, ${plural(row.questions, "question")} (${skips.filter((s) => s.dropped).length} skipped, ${skips.filter((s) => !s.dropped).length} repaired).`);
      await queryClient.invalidateQueries({ queryKey: trpc.evals.datasets.queryKey() });
      setDatasetId(row.id);
    } catch (err) {
      toast.error(errorMessage(err));
    } finally {
      setUploading(false);
    }
  }

  async function run() {
    if (!chosen || invalid) return;
    // The templates beside it are answered and judged the same way, so their j is comparable.
    const answering = answer ? { answerModel: answer, judgeModel: judge || undefined, budgetUsd } : {};
    try {
      await start.mutateAsync({ workspaceId: workspace.id, pipelineId, branch, ...(questionSet ? { questionSet } : { datasetId: chosen }), mode, step: step || undefined, ...answering });
      if (!questionSet) for (const template of baselines) await start.mutateAsync({ workspaceId: workspace.id, template, branch: "main", datasetId: chosen, ...answering });
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
                  {d.benchmark} · {d.name} ({plural(d.questions, "question")})
                </option>
              ))}
              {(questionSets.data ?? []).length > 0 && (
                <optgroup label="Team question sets (this pipeline's own memory)">
                  {questionSets.data!.map((q) => (
                    <option key={q.id} value={`${QS}${q.id}`}>
                      question set · {q.name} ({plural(q.questions, "question")})
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
              <option value="graph">graph (entities and beliefs, fused with hybrid)</option>
              <option value="bm25">bm25 (one step)</option>
              <option value="walk">walk (top-down from the step)</option>
            </select>
          </div>
          <Button onClick={() => void run()} disabled={!chosen || invalid || start.isPending} data-testid="run-eval">
            <Play className="size-4" /> Run eval
          </Button>
        </div>
        <fieldset className="grid gap-2" data-testid="eval-answering">
          <legend className="mb-1 text-xs text-muted-foreground">
            Answers and judge (optional): a model answers each question from the retrieved context and a judge grades it against the gold answer (j, token F1). Without one, answers are extractive and j is not measured.
          </legend>
          <div className="flex flex-wrap items-start gap-4">
            <div className="grid gap-1.5">
              <Label htmlFor="eval-answer-model">Answer model</Label>
              <Input
                id="eval-answer-model"
                className="w-80"
                list="eval-model-providers"
                placeholder="provider/model, e.g. openai/gpt-4o-mini"
                value={answerModel}
                onChange={(e) => setAnswerModel(e.target.value)}
                aria-invalid={!!problems.answer}
                data-testid="eval-answer-model"
              />
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor="eval-judge-model">Judge model</Label>
              <Input
                id="eval-judge-model"
                className="w-80"
                list="eval-model-providers"
                placeholder={answer ? `same as the answer model (${answer})` : "same as the answer model"}
                value={judgeModel}
                onChange={(e) => setJudgeModel(e.target.value)}
                aria-invalid={!!problems.judge}
                data-testid="eval-judge-model"
              />
            </div>
            <div className="grid gap-1.5">
              <Label htmlFor="eval-budget">Budget (USD)</Label>
              <Input
                id="eval-budget"
                className="w-28"
                type="number"
                min={0.01}
                step="any"
                placeholder="1.00"
                value={budget}
                onChange={(e) => setBudget(e.target.value)}
                aria-invalid={!!problems.budget}
                data-testid="eval-budget"
              />
            </div>
            <datalist id="eval-model-providers">
              {(providers.data ?? [])
                .filter((p) => p !== "offline")
                .map((p) => (
                  <option key={p} value={`${p}/`} />
                ))}
            </datalist>
          </div>
          <p className="text-xs text-muted-foreground">
            Providers in this workspace: {(providers.data ?? []).join(", ") || "…"} (manage them in{" "}
            <Link className="text-primary hover:underline" href={`/w/${workspace.slug}/settings/models`}>
              Settings → Models
            </Link>
            ). The budget caps the answer and judge calls of each eval together (default $1); past it, questions are left unjudged and counted.
          </p>
          {Object.values(problems)
            .filter(Boolean)
            .map((p) => (
              <p key={p} className="text-sm text-destructive" role="alert" data-testid="eval-answering-error">
                {p}
              </p>
            ))}
        </fieldset>
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
