"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Check } from "lucide-react";
import type { inferRouterOutputs } from "@trpc/server";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { PageHeader } from "@/components/shell/page-header";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { Select, SelectContent, SelectItem, SelectTrigger, SelectValue } from "@/components/ui/select";
import { toast } from "@/components/ui/sonner";
import { Textarea } from "@/components/ui/textarea";
import { errorMessage, useTRPC } from "@/lib/trpc";
import type { AppRouter } from "@/server/api/root";

const FORMATS = [
  { id: "chatgpt-export", label: "ChatGPT export (conversations.json / .zip)" },
  { id: "claude-export", label: "Claude export" },
  { id: "jsonl", label: "JSONL" },
  { id: "markdown", label: "Markdown" },
  { id: "text", label: "Plain text" },
  { id: "json", label: "JSON array" },
  { id: "folder", label: "Folder" },
  { id: "api", label: "API stream (agents push events)" },
] as const;
type Format = (typeof FORMATS)[number]["id"];

type Template = inferRouterOutputs<AppRouter>["pipeline"]["templates"][number];

function stepCount(t: Template): string {
  const steps = `${t.steps} step${t.steps === 1 ? "" : "s"}`;
  return t.outputs ? `${steps} · ${t.outputs} output${t.outputs === 1 ? "" : "s"}` : steps;
}

const NAME_RE = /^[a-z0-9][a-z0-9_-]*$/i;

export function NewPipelineForm() {
  const { workspace } = useWorkspace();
  const canWrite = useCan("pipelines:write");
  const router = useRouter();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const templates = useQuery(trpc.pipeline.templates.queryOptions({ workspaceId: workspace.id }));
  const [template, setTemplate] = useState("chat-memory");
  const [name, setName] = useState("");
  const [agent, setAgent] = useState("");
  const [description, setDescription] = useState("");
  const [format, setFormat] = useState<Format>("chatgpt-export");
  // The template's own source format until the person picks one (Documents: a folder, Synapse: an API stream).
  const [formatPicked, setFormatPicked] = useState(false);
  const pickTemplate = (t: Template) => {
    setTemplate(t.id);
    const own = FORMATS.find((f) => f.id === t.sourceFormat);
    if (own && !formatPicked) setFormat(own.id);
  };
  const create = useMutation(
    trpc.pipeline.create.mutationOptions({
      onSuccess: async ({ pipeline }) => {
        toast.success(`Pipeline ${pipeline.name} created`);
        await queryClient.invalidateQueries({ queryKey: trpc.pipeline.list.queryKey() });
        router.push(`/w/${workspace.slug}/pipelines/${pipeline.id}`);
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );
  if (!canWrite) {
    return <EmptyState title="You cannot create pipelines" description="Your role in this workspace is read-only. Ask an editor or admin." />;
  }
  const nameProblem = name && !NAME_RE.test(name) ? "Use letters, digits, - and _ (start with a letter or digit)." : null;
  return (
    <div className="max-w-3xl">
      <PageHeader title="New pipeline" description="Pick an architecture to start from. You can change every step in the canvas afterwards." />
      <form
        className="space-y-6"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({ workspaceId: workspace.id, name: name.trim(), agent: agent.trim(), description: description.trim(), template, format });
        }}
      >
        <div className="grid gap-3 sm:grid-cols-3" role="radiogroup" aria-label="Template">
          {(templates.data ?? []).map((t) => (
            <button
              key={t.id}
              type="button"
              role="radio"
              aria-checked={template === t.id}
              data-testid={`template-${t.id}`}
              onClick={() => pickTemplate(t)}
              className={cn(
                "relative flex flex-col gap-2 rounded-xl border p-4 text-left text-sm transition-colors hover:bg-accent/50",
                template === t.id && "border-primary ring-2 ring-primary/30",
              )}
            >
              <span className="flex items-center gap-2 font-medium">
                {t.title}
                {t.badge ? <span className="rounded bg-primary/10 px-1.5 text-xs text-primary">{t.badge}</span> : null}
                {template === t.id ? <Check className="ml-auto size-4 text-primary" /> : null}
              </span>
              {t.goodFor ? <span data-testid="template-good-for">{t.goodFor}</span> : null}
              <span className="text-xs text-muted-foreground" title={t.seed ? `Follows reference design ${t.seed}` : undefined}>
                {t.description.replace(/^Seed \d+:\s*/, "")}
              </span>
              {t.offlineStandIn ? (
                <span className="text-xs text-amber-700 dark:text-amber-400" data-testid="template-offline-stand-in" title={t.offlineStandIn.detail}>
                  Offline: {t.offlineStandIn.note}
                </span>
              ) : null}
              <span className="mt-auto text-xs text-muted-foreground" data-testid="template-nodes" data-nodes={t.nodes.join(" ")}>
                {stepCount(t)}
              </span>
            </button>
          ))}
        </div>
        <Card>
          <CardHeader>
            <CardTitle>Details</CardTitle>
            <CardDescription>The name is how the CLI and the API refer to this pipeline.</CardDescription>
          </CardHeader>
          <CardContent className="grid gap-4 sm:grid-cols-2">
            <div className="space-y-2">
              <Label htmlFor="pipeline-name">Name</Label>
              <Input
                id="pipeline-name"
                placeholder="support-agent-memory"
                value={name}
                onChange={(e) => setName(e.target.value)}
                aria-invalid={Boolean(nameProblem)}
                required
              />
              {nameProblem ? <p className="text-xs text-destructive">{nameProblem}</p> : null}
            </div>
            <div className="space-y-2">
              <Label htmlFor="pipeline-agent">Agent</Label>
              <Input id="pipeline-agent" placeholder="support-bot" value={agent} onChange={(e) => setAgent(e.target.value)} />
            </div>
            <div className="space-y-2">
              <Label htmlFor="pipeline-format">Source format</Label>
              <Select
                value={format}
                onValueChange={(v) => {
                  setFormat(v as Format);
                  setFormatPicked(true);
                }}
              >
                <SelectTrigger id="pipeline-format" className="w-full" data-testid="source-format">
                  <SelectValue />
                </SelectTrigger>
                <SelectContent>
                  {FORMATS.map((f) => (
                    <SelectItem key={f.id} value={f.id}>
                      {f.label}
                    </SelectItem>
                  ))}
                </SelectContent>
              </Select>
              <p className="text-xs text-muted-foreground">You upload the files on the pipeline page after creating it.</p>
            </div>
            <div className="space-y-2 sm:col-span-2">
              <Label htmlFor="pipeline-description">Description</Label>
              <Textarea
                id="pipeline-description"
                placeholder="What this memory is for"
                value={description}
                onChange={(e) => setDescription(e.target.value)}
              />
            </div>
          </CardContent>
        </Card>
        <div className="flex justify-end gap-2">
          <Button type="button" variant="outline" onClick={() => router.back()}>
            Cancel
          </Button>
          <Button type="submit" disabled={create.isPending || !name.trim() || Boolean(nameProblem)} data-testid="create-pipeline-submit">
            {create.isPending ? "Creating…" : "Create pipeline"}
          </Button>
        </div>
      </form>
    </div>
  );
}
