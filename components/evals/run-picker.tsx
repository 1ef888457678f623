"use client";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Plus } from "lucide-react";
import { useEffect, useState } from "react";
import { RunStatusBadge } from "@/components/runs/run-status-badge";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle, DialogTrigger } from "@/components/ui/dialog";
import { Input } from "@/components/ui/input";
import { errorMessage, useTRPC } from "@/lib/trpc";

const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });

/**
 * "Add a run": any eval run of the workspace that ended (completed, or failed: it joins as a row with
 * its reason), searched by pipeline, template, branch, mode or dataset (`evals.searchRuns`). Runs
 * already in the comparison say so; the dialog stays open to add several.
 */
export function RunPicker({ selected, full, onAdd }: { selected: readonly string[]; full: boolean; onAdd: (id: string) => void }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const [text, setText] = useState("");
  const [query, setQuery] = useState("");
  useEffect(() => {
    const t = setTimeout(() => setQuery(text.trim()), 200);
    return () => clearTimeout(t);
  }, [text]);
  const found = useQuery({
    ...trpc.evals.searchRuns.queryOptions({ workspaceId: workspace.id, query: query || undefined, limit: 30 }, { enabled: open }),
    placeholderData: keepPreviousData,
  });
  return (
    <Dialog open={open} onOpenChange={setOpen}>
      <DialogTrigger asChild>
        <Button size="sm" variant="outline" data-testid="compare-add-run">
          <Plus className="size-3.5" /> Add a run
        </Button>
      </DialogTrigger>
      <DialogContent className="sm:max-w-2xl">
        <DialogHeader>
          <DialogTitle>Add a run to this comparison</DialogTitle>
          <DialogDescription>Any completed or failed eval run of the workspace. Search by pipeline, template, branch, mode or dataset.</DialogDescription>
        </DialogHeader>
        <Input autoFocus placeholder="e.g. memex main, bm25, locomo" value={text} onChange={(e) => setText(e.target.value)} aria-label="Search eval runs" data-testid="run-picker-search" />
        {full ? <p className="text-sm text-muted-foreground">The comparison is full (24 runs): remove one to add another.</p> : null}
        <div className="max-h-96 overflow-y-auto rounded-md border" data-testid="run-picker-results">
          {found.isError ? (
            <p className="p-3 text-sm text-destructive">The runs could not be searched: {errorMessage(found.error)}</p>
          ) : found.isPending ? (
            <p className="p-3 text-sm text-muted-foreground">Searching…</p>
          ) : !found.data.length ? (
            <p className="p-3 text-sm text-muted-foreground">No ended eval run matches “{query}”.</p>
          ) : (
            <ul className="divide-y">
              {found.data.map((r) => {
                const added = selected.includes(r.id);
                return (
                  <li key={r.id} className="flex items-center gap-3 px-3 py-2" data-testid="run-picker-row" data-run={r.id} data-label={r.label}>
                    <div className="grid min-w-0 flex-1 gap-0.5 text-sm">
                      <span className="flex flex-wrap items-center gap-2 font-medium">
                        <span className="break-words">
                          {r.label}
                          {r.version ? ` ${r.version}` : ""}
                        </span>
                        <RunStatusBadge status={r.status} />
                      </span>
                      <span className="text-xs break-words text-muted-foreground">
                        {r.mode}
                        {r.step ? ` @ ${r.step}` : ""} · {r.datasetName} · {r.status === "completed" ? `${r.questions} q · ` : ""}
                        {when.format(new Date(r.createdAt))}
                      </span>
                      {r.error ? <span className="line-clamp-2 text-xs break-words text-red-600">{r.error}</span> : null}
                    </div>
                    <Button size="sm" variant={added ? "ghost" : "secondary"} disabled={added || full} onClick={() => onAdd(r.id)} aria-label={`Add ${r.label}${r.version ? ` ${r.version}` : ""} (${r.id})`}>
                      {added ? "Added" : "Add"}
                    </Button>
                  </li>
                );
              })}
            </ul>
          )}
        </div>
      </DialogContent>
    </Dialog>
  );
}
