"use client";
import { Workflow } from "lucide-react";
import { useState } from "react";
import { PageHeader } from "@/components/shell/page-header";
import { useCan } from "@/components/shell/workspace-context";
import { Button } from "@/components/ui/button";
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from "@/components/ui/dialog";
import { EmptyState } from "@/components/ui/empty-state";

export function PipelinesPage() {
  const canWrite = useCan("pipelines:write");
  const [open, setOpen] = useState(false);
  const create = canWrite ? (
    <Button onClick={() => setOpen(true)} data-testid="create-pipeline">
      Create your first pipeline
    </Button>
  ) : null;
  return (
    <>
      <PageHeader title="Pipelines" description="Memory architectures for your agents: sources in, queryable memory out." />
      <EmptyState
        icon={Workflow}
        title="No pipelines yet"
        description={
          canWrite
            ? "A pipeline turns raw history (chat exports, transcripts, agent events) into memory your agents can search."
            : "Nobody has created a pipeline here yet. Your role (viewer) can read pipelines but not create them."
        }
        action={create}
      />
      <Dialog open={open} onOpenChange={setOpen}>
        <DialogContent>
          <DialogHeader>
            <DialogTitle>Create a pipeline</DialogTitle>
            <DialogDescription>
              Pipeline templates and the canvas editor arrive with the engine. Until then, this workspace is ready for
              members and API keys.
            </DialogDescription>
          </DialogHeader>
          <DialogFooter>
            <Button variant="outline" onClick={() => setOpen(false)}>
              Close
            </Button>
          </DialogFooter>
        </DialogContent>
      </Dialog>
    </>
  );
}
