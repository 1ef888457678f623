"use client";
import { useMutation } from "@tanstack/react-query";
import { Trash2 } from "lucide-react";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { fmtInt } from "@/components/runs/format";
import { Button } from "@/components/ui/button";
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from "@/components/ui/dialog";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { toast } from "@/components/ui/sonner";
import { errorMessage, useTRPC } from "@/lib/trpc";

/**
 * Purge (GDPR) from the record page: opening the dialog runs the dry run, which lists exactly what
 * would go — the record, everything derived from it on every branch, and their index entries; the
 * purge itself needs the record's id typed, because it cannot be undone.
 */
export function PurgeRecordButton({ workspaceId, recordId, afterPurgeHref }: { workspaceId: string; recordId: string; afterPurgeHref: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState("");
  const dryRun = useMutation(trpc.record.purge.mutationOptions());
  const purge = useMutation(
    trpc.record.purge.mutationOptions({
      onSuccess: (result) => {
        toast.success(`Purged ${fmtInt(result.records.length)} record(s)`);
        setOpen(false);
        router.push(afterPurgeHref);
      },
    }),
  );

  function openDialog() {
    setTyped("");
    purge.reset();
    dryRun.mutate({ workspaceId, id: recordId, dryRun: true });
    setOpen(true);
  }

  const plan = dryRun.data;
  const branches = plan ? Object.entries(plan.pointers) : [];
  return (
    <>
      <Button variant="outline" size="sm" onClick={openDialog} data-testid="purge-open">
        <Trash2 /> Purge…
      </Button>
      <Dialog open={open} onOpenChange={setOpen}>
        <DialogContent data-testid="purge-dialog">
          <DialogHeader>
            <DialogTitle>Purge this record</DialogTitle>
            <DialogDescription>
              Deletes the record and everything derived from it on every branch, with their embeddings and search entries. It cannot be undone; the audit log keeps who
              did it and what went.
            </DialogDescription>
          </DialogHeader>
          {dryRun.isPending ? <p className="text-sm text-muted-foreground">Listing what would be purged…</p> : null}
          {dryRun.isError ? (
            <p className="text-sm text-destructive" role="alert" data-testid="purge-error">
              {errorMessage(dryRun.error)}
            </p>
          ) : null}
          {plan ? (
            <div className="space-y-2 text-sm" data-testid="purge-plan">
              <p>
                <strong>{fmtInt(plan.records.length)}</strong> record(s) would be purged:
              </p>
              <ul className="list-disc pl-5" data-testid="purge-by-step">
                {Object.entries(plan.byStep).map(([step, n]) => (
                  <li key={step}>
                    {step}: {fmtInt(n)}
                  </li>
                ))}
              </ul>
              <p className="text-muted-foreground">
                {branches.length ? `Pointers on ${branches.map(([b, n]) => `${b} (${fmtInt(n)})`).join(", ")}; ` : ""}
                {fmtInt(plan.embeddings)} embedding(s), {fmtInt(plan.postings)} search posting(s), {fmtInt(plan.edges)} provenance edge(s).
              </p>
              <p className="text-muted-foreground" data-testid="purge-copies">
                Copies of its text elsewhere: {fmtInt(plan.copies.evalCases)} eval case(s) and {fmtInt(plan.copies.runFailures)} run failure(s) redacted,{" "}
                {fmtInt(plan.copies.webhookDeliveries)} webhook delivery(ies) deleted, {fmtInt(plan.copies.questions)} question-set question(s) updated, {fmtInt(plan.copies.idempotencyResponses)} kept API answer(s) (Idempotency-Key) of this
                workspace replaced by “gone”.
              </p>
              <div className="space-y-1">
                <Label htmlFor="purge-confirm" className="block leading-normal">
                  Type the record id <code>{recordId}</code> to confirm
                </Label>
                <Input id="purge-confirm" value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
              </div>
            </div>
          ) : null}
          {purge.isError ? (
            <p className="text-sm text-destructive" role="alert">
              {errorMessage(purge.error)}
            </p>
          ) : null}
          {purge.isPending ? (
            <p className="text-sm text-muted-foreground" role="status" data-testid="purge-progress">
              Removing the records, their derived records, embeddings and index entries…
            </p>
          ) : null}
          <DialogFooter>
            <Button variant="outline" onClick={() => setOpen(false)}>
              Cancel
            </Button>
            <Button
              variant="destructive"
              disabled={!plan || typed.trim() !== recordId || purge.isPending}
              onClick={() => purge.mutate({ workspaceId, id: recordId, dryRun: false })}
              data-testid="purge-confirm"
            >
              {purge.isPending ? `Purging ${plan ? fmtInt(plan.records.length) : ""} record(s)…` : `Purge ${plan ? fmtInt(plan.records.length) : ""} record(s)`}
            </Button>
          </DialogFooter>
        </DialogContent>
      </Dialog>
    </>
  );
}
