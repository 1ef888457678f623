"use client";
import { Button } from "@/components/ui/button";
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from "@/components/ui/dialog";
import { Input } from "@/components/ui/input";

/** "Save a version": the message, then an immutable version on the branch. */
export function SaveVersionDialog({
  open,
  onOpenChange,
  pipelineName,
  branch,
  message,
  onMessageChange,
  pending,
  onSave,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  pipelineName: string;
  branch: string;
  message: string;
  onMessageChange: (message: string) => void;
  pending: boolean;
  onSave: () => void;
}) {
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            onSave();
          }}
          className="space-y-4"
        >
          <DialogHeader>
            <DialogTitle>Save a version</DialogTitle>
            <DialogDescription>
              Every save is an immutable version of {pipelineName} on {branch}. Steps whose definition changed (and everything downstream) will re-run.
            </DialogDescription>
          </DialogHeader>
          <Input
            autoFocus
            data-testid="version-message"
            placeholder="What changed and why, e.g. “Summaries: focus on decisions”"
            value={message}
            maxLength={500}
            onChange={(e) => onMessageChange(e.target.value)}
          />
          <DialogFooter>
            <Button type="button" variant="outline" onClick={() => onOpenChange(false)}>
              Cancel
            </Button>
            <Button type="submit" disabled={pending} data-testid="confirm-save">
              {pending ? "Saving…" : "Save version"}
            </Button>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
