"use client";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ListPlus } from "lucide-react";
import { useState } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle, DialogTrigger } from "@/components/ui/dialog";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { plural } from "@/components/ui/plural";

/**
 * "Add to question set" (the explorer): the question (the search that found it), the record being
 * read as what answers it, and optionally the expected answer. The set is created on first use;
 * the pipeline's Evals tab scores its branches on it.
 */
export function AddToQuestionSet({ recordId, question }: { recordId: string; question: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const sets = useQuery(trpc.evals.questionSets.queryOptions({ workspaceId: workspace.id }));
  const [open, setOpen] = useState(false);
  const [set, setSet] = useState("");
  const [text, setText] = useState(question);
  const [answer, setAnswer] = useState("");
  const add = useMutation(trpc.evals.addToQuestionSet.mutationOptions());
  const name = set || sets.data?.[0]?.name || "my-questions";

  async function save() {
    try {
      const res = await add.mutateAsync({ workspaceId: workspace.id, set: name, question: text, answer: answer || undefined, recordIds: [recordId] });
      toast.success(res.merged ? `Added this record to "${res.question.question}" in ${res.set.name}.` : `Added to ${res.set.name} (${plural(res.set.questions, "question")}).`);
      await queryClient.invalidateQueries({ queryKey: trpc.evals.questionSets.queryKey() });
      setOpen(false);
    } catch (err) {
      toast.error(errorMessage(err));
    }
  }

  return (
    <Dialog
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        if (o) setText(question);
      }}
    >
      <DialogTrigger asChild>
        <Button size="sm" variant="outline" data-testid="add-to-question-set">
          <ListPlus className="size-4" /> Add to question set
        </Button>
      </DialogTrigger>
      <DialogContent data-testid="question-set-dialog">
        <DialogHeader>
          <DialogTitle>Add to a question set</DialogTitle>
          <DialogDescription>This record answers the question. Score the pipeline&apos;s branches on the set from its Evals tab, or with `synthex eval {name}`.</DialogDescription>
        </DialogHeader>
        <div className="grid gap-3">
          <div className="grid gap-1.5">
            <Label htmlFor="qs-name">Question set</Label>
            <Input id="qs-name" list="qs-names" value={name} onChange={(e) => setSet(e.target.value)} data-testid="question-set-name" />
            <datalist id="qs-names">
              {(sets.data ?? []).map((s) => (
                <option key={s.id} value={s.name}>{plural(s.questions, "question")}</option>
              ))}
            </datalist>
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor="qs-question">Question</Label>
            <Input id="qs-question" value={text} onChange={(e) => setText(e.target.value)} data-testid="question-set-question" />
          </div>
          <div className="grid gap-1.5">
            <Label htmlFor="qs-answer">Expected answer (optional: scored with token F1 and the judge)</Label>
            <Input id="qs-answer" value={answer} onChange={(e) => setAnswer(e.target.value)} data-testid="question-set-answer" />
          </div>
        </div>
        <DialogFooter>
          <Button onClick={() => void save()} disabled={add.isPending || !text.trim()} data-testid="question-set-save">
            Add
          </Button>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
