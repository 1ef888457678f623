"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ChevronDown, ChevronRight, Pencil, Trash2 } from "lucide-react";
import { useState } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from "@/components/ui/dialog";
import { Input } from "@/components/ui/input";
import { toast } from "@/components/ui/sonner";
import { Table, TableBody, TableCell, TableHead, TableHeader, TableRow } from "@/components/ui/table";
import { errorMessage, useTRPC } from "@/lib/trpc";
import type { QuestionSetSummary } from "./format";

/**
 * The team's own question sets this pipeline is scored on (added from the explorer): open one to
 * see its questions and delete one, rename a set, delete a set after confirming.
 */
export function QuestionSetsPanel({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const sets = useQuery(trpc.evals.questionSets.queryOptions({ workspaceId: workspace.id }));
  const mine = (sets.data ?? []).filter((s) => s.pipelineId === pipelineId || s.pipelineId === null);
  if (!mine.length) return null;
  return (
    <section className="grid gap-2" data-testid="question-sets">
      <h2 className="text-base font-semibold">Question sets</h2>
      <p className="text-sm text-muted-foreground">Your own questions about this pipeline&apos;s memory, added from the explorer (&quot;Add to question set&quot;). Pick one above as the benchmark to score a branch on it.</p>
      <div className="grid gap-2">
        {mine.map((s) => (
          <QuestionSetRow key={s.id} set={s} />
        ))}
      </div>
    </section>
  );
}

function QuestionSetRow({ set }: { set: QuestionSetSummary }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(set.name);
  const [renameError, setRenameError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const detail = useQuery({ ...trpc.evals.questionSet.queryOptions({ workspaceId: workspace.id, id: set.id }), enabled: open });
  const refresh = () => Promise.all([queryClient.invalidateQueries({ queryKey: trpc.evals.questionSets.queryKey() }), queryClient.invalidateQueries({ queryKey: trpc.evals.questionSet.queryKey() })]);
  const rename = useMutation(trpc.evals.renameQuestionSet.mutationOptions());
  const remove = useMutation(trpc.evals.removeFromQuestionSet.mutationOptions());
  const destroy = useMutation(trpc.evals.deleteQuestionSet.mutationOptions());

  async function saveName() {
    setRenameError(null);
    try {
      const res = await rename.mutateAsync({ workspaceId: workspace.id, setId: set.id, name: name.trim() });
      toast.success(`Renamed to ${res.name}.`);
      setRenaming(false);
      await refresh();
    } catch (err) {
      setRenameError(errorMessage(err));
    }
  }

  async function removeQuestion(questionId: string, question: string) {
    try {
      const res = await remove.mutateAsync({ workspaceId: workspace.id, setId: set.id, questionId });
      toast.success(`Removed "${question}" (${res.questions} left in ${res.name}).`);
      await refresh();
    } catch (err) {
      toast.error(errorMessage(err));
    }
  }

  async function deleteSet() {
    try {
      await destroy.mutateAsync({ workspaceId: workspace.id, setId: set.id });
      toast.success(`Deleted the question set ${set.name}.`);
      setConfirming(false);
      await refresh();
    } catch (err) {
      toast.error(errorMessage(err));
    }
  }

  return (
    <div className="rounded-md border" data-testid="question-set" data-name={set.name}>
      <div className="flex flex-wrap items-center gap-2 px-3 py-2">
        <Button size="sm" variant="ghost" onClick={() => setOpen((o) => !o)} aria-expanded={open} aria-label={`${open ? "Hide" : "Show"} the questions of ${set.name}`}>
          {open ? <ChevronDown className="size-4" /> : <ChevronRight className="size-4" />}
        </Button>
        {renaming ? (
          <form
            className="flex flex-wrap items-center gap-2"
            onSubmit={(e) => {
              e.preventDefault();
              void saveName();
            }}
          >
            <Input className="h-8 w-56" value={name} onChange={(e) => setName(e.target.value)} aria-label="New name" data-testid="question-set-rename-input" autoFocus />
            <Button size="sm" type="submit" disabled={rename.isPending || !name.trim()} data-testid="question-set-rename-save">
              Save
            </Button>
            <Button
              size="sm"
              variant="ghost"
              type="button"
              onClick={() => {
                setRenaming(false);
                setName(set.name);
                setRenameError(null);
              }}
            >
              Cancel
            </Button>
            {renameError && (
              <span className="text-xs text-destructive" role="alert" data-testid="question-set-rename-error">
                {renameError}
              </span>
            )}
          </form>
        ) : (
          <span className="font-medium" data-testid="question-set-title">
            {set.name}
          </span>
        )}
        <span className="text-sm text-muted-foreground" data-testid="question-set-count">
          {set.questions} {set.questions === 1 ? "question" : "questions"}
        </span>
        <div className="ml-auto flex items-center gap-1">
          {!renaming && (
            <Button size="sm" variant="ghost" onClick={() => setRenaming(true)} data-testid="question-set-rename">
              <Pencil className="size-4" /> Rename
            </Button>
          )}
          <Button size="sm" variant="ghost" className="text-destructive" onClick={() => setConfirming(true)} data-testid="question-set-delete">
            <Trash2 className="size-4" /> Delete
          </Button>
        </div>
      </div>
      {open && (
        <div className="border-t px-3 py-2">
          {detail.isError ? (
            <p className="text-sm text-destructive">{errorMessage(detail.error)}</p>
          ) : !detail.data ? (
            <p className="text-sm text-muted-foreground">Loading…</p>
          ) : detail.data.questions.length === 0 ? (
            <p className="text-sm text-muted-foreground">No questions left: add some from the explorer, or delete the set.</p>
          ) : (
            <Table>
              <TableHeader>
                <TableRow>
                  <TableHead>Question</TableHead>
                  <TableHead>Expected answer</TableHead>
                  <TableHead className="text-right">Records</TableHead>
                  <TableHead className="w-24" />
                </TableRow>
              </TableHeader>
              <TableBody>
                {detail.data.questions.map((q) => (
                  <TableRow key={q.id} data-testid="question-set-question-row">
                    <TableCell>{q.question}</TableCell>
                    <TableCell className="text-muted-foreground">{q.answer || "—"}</TableCell>
                    <TableCell className="text-right tabular-nums">{q.recordIds.length}</TableCell>
                    <TableCell className="text-right">
                      <Button size="sm" variant="ghost" aria-label={`Delete the question "${q.question}"`} disabled={remove.isPending} onClick={() => void removeQuestion(q.id, q.question)}>
                        <Trash2 className="size-4" />
                      </Button>
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          )}
        </div>
      )}
      <Dialog open={confirming} onOpenChange={setConfirming}>
        <DialogContent data-testid="question-set-delete-dialog">
          <DialogHeader>
            <DialogTitle>Delete the question set {set.name}?</DialogTitle>
            <DialogDescription>
              Its {set.questions} {set.questions === 1 ? "question goes" : "questions go"} with it. Finished evals on it keep their results; the records the questions point at are not touched.
            </DialogDescription>
          </DialogHeader>
          <DialogFooter>
            <Button variant="ghost" onClick={() => setConfirming(false)}>
              Keep it
            </Button>
            <Button variant="destructive" disabled={destroy.isPending} onClick={() => void deleteSet()} data-testid="question-set-delete-confirm">
              Delete {set.name}
            </Button>
          </DialogFooter>
        </DialogContent>
      </Dialog>
    </div>
  );
}
