"use client";
import { useMutation } from "@tanstack/react-query";
import { Loader2, NotebookPen } from "lucide-react";
import { useState } from "react";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { Input } from "@/components/ui/input";
import { toast } from "@/components/ui/sonner";
import { Textarea } from "@/components/ui/textarea";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { MAX_NOTE_CHARS, MAX_NOTE_TITLE_CHARS } from "@/server/core/note";

/** Quick add: a note, or a page's text pasted in, becomes one item of the source (the same note twice adds nothing). */
export function QuickAdd({ pipelineId, source, onAdded }: { pipelineId: string; source: string; onAdded?: () => void }) {
  const trpc = useTRPC();
  const { workspace } = useWorkspace();
  const canWrite = useCan("pipelines:write");
  const [text, setText] = useState("");
  const [title, setTitle] = useState("");
  const [error, setError] = useState<string | null>(null);
  const add = useMutation(
    trpc.ingest.addItem.mutationOptions({
      onSuccess: (res) => {
        setError(null);
        if (res.added) {
          setText("");
          setTitle("");
          toast.success(res.runRequested ? "Note added; an incremental run was requested" : "Note added");
          onAdded?.();
        } else toast.info("That note is already in this source: nothing added");
      },
      onError: (err) => setError(errorMessage(err)),
    }),
  );
  if (!canWrite) return null;

  const length = text.trim().length;
  const tooLong = length > MAX_NOTE_CHARS;
  const submit = () => {
    if (!length) return setError("The note is empty: write or paste some text.");
    if (tooLong) return setError(`A note is at most ${MAX_NOTE_CHARS.toLocaleString("en-US")} characters (this one has ${length.toLocaleString("en-US")}): split it, or import it as a file.`);
    add.mutate({ workspaceId: workspace.id, pipelineId, source, text, title: title.trim() || undefined });
  };

  return (
    <form
      data-testid={`quick-add-${source}`}
      className="space-y-2 rounded-lg border px-3 py-3"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <div className="flex items-center gap-1.5 text-xs font-medium">
        <NotebookPen className="size-3.5 text-muted-foreground" />
        Quick add
      </div>
      <Input
        data-testid={`quick-add-title-${source}`}
        aria-label="Title (optional)"
        placeholder="Title (optional)"
        maxLength={MAX_NOTE_TITLE_CHARS}
        value={title}
        onChange={(e) => setTitle(e.target.value)}
        className="h-8 text-xs md:text-xs"
      />
      <Textarea
        data-testid={`quick-add-text-${source}`}
        aria-label="Note"
        aria-invalid={error ? true : undefined}
        placeholder="A note, or a page's text pasted here"
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          if (error) setError(null);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) {
            e.preventDefault();
            submit();
          }
        }}
        className="max-h-60 min-h-20 text-xs md:text-xs"
      />
      {error ? (
        <p role="alert" data-testid={`quick-add-error-${source}`} className="text-xs text-destructive">
          {error}
        </p>
      ) : null}
      <div className="flex items-center justify-between gap-2">
        <span className={cn("text-xs text-muted-foreground", tooLong && "text-destructive")}>
          {length.toLocaleString("en-US")} / {MAX_NOTE_CHARS.toLocaleString("en-US")}
        </span>
        <Button type="submit" size="sm" disabled={add.isPending || !length} data-testid={`quick-add-submit-${source}`}>
          {add.isPending ? <Loader2 className="size-4 animate-spin" /> : null}
          Add note
        </Button>
      </div>
    </form>
  );
}
