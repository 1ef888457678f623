"use client";
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";
import { Skeleton } from "@/components/ui/skeleton";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { recordLabel } from "./api";
import { day, type GraphBelief } from "./graph-model";

interface Ref {
  workspaceId: string;
  pipelineId: string;
  branch: string;
}

/** One belief as a line: predicate and object, validity, status. */
export function BeliefLine({ belief, active, onClick }: { belief: GraphBelief; active?: boolean; onClick: () => void }) {
  return (
    <button
      type="button"
      data-testid="edge-belief"
      data-belief={belief.id}
      onClick={onClick}
      className={cn("w-full rounded-md border px-2 py-1.5 text-left text-xs hover:bg-muted/50", active && "border-primary bg-primary/5")}
    >
      <div className="flex items-center gap-1.5">
        <span className="font-mono text-muted-foreground">
          {day(belief.validFrom)} → {belief.validTo ? day(belief.validTo) : "now"}
        </span>
        <Badge variant={belief.status === "current" ? "success" : "outline"}>{belief.status}</Badge>
        {belief.count != null ? <span className="ml-auto text-muted-foreground">{belief.count} sources</span> : null}
      </div>
      <div className="mt-0.5 text-sm">
        {belief.subjectName} <span className="text-muted-foreground">{belief.predicate}</span> {belief.object}
      </div>
    </button>
  );
}

/**
 * A belief with what it was read from: its sentence, its valid and learned times, the beliefs it
 * superseded or was superseded by, and its source records (each readable here, and openable in
 * the record page with its full lineage).
 */
export function BeliefSources({ target, beliefId, base, onSelectBelief }: { target: Ref; beliefId: string; base: string; onSelectBelief: (id: string) => void }) {
  const trpc = useTRPC();
  const detail = useQuery(trpc.graph.belief.queryOptions({ ...target, beliefId }));
  const [open, setOpen] = useState<string | null>(null);
  if (detail.isPending) return <Skeleton className="h-32 w-full" />;
  if (detail.isError) return <p className="text-sm text-destructive">{errorMessage(detail.error)}</p>;
  const { belief, sources, supersedes, supersededBy } = detail.data;
  const recordHref = (id: string) => `${base}/records/${id}?branch=${encodeURIComponent(target.branch)}`;
  return (
    <div className="space-y-3" data-testid="belief-sources" data-belief={belief.id}>
      <div>
        <div className="text-sm font-medium" data-testid="belief-text">
          {belief.subjectName} <span className="text-muted-foreground">{belief.polarity === "negative" ? `not ${belief.predicate}` : belief.predicate}</span> {belief.object}
        </div>
        {belief.evidence ? <p className="mt-1 text-xs text-muted-foreground italic">“{belief.evidence}”</p> : null}
        <div className="mt-1 flex flex-wrap gap-1.5 text-xs text-muted-foreground">
          <Badge variant={belief.status === "current" ? "success" : "outline"}>{belief.status}</Badge>
          <span>
            valid {day(belief.validFrom)} → {belief.validTo ? day(belief.validTo) : "now"}
          </span>
          <span>· learned {day(belief.learnedAt)}</span>
          <Link className="ml-auto text-primary hover:underline" href={recordHref(belief.recordId)}>
            Belief record
          </Link>
        </div>
      </div>
      {supersedes ? (
        <div className="text-xs">
          <span className="text-muted-foreground">Supersedes </span>
          <button type="button" className="text-primary hover:underline" onClick={() => onSelectBelief(supersedes.id)}>
            “{supersedes.predicate} {supersedes.object}” ({day(supersedes.validFrom)})
          </button>
        </div>
      ) : null}
      {supersededBy ? (
        <div className="text-xs">
          <span className="text-muted-foreground">Superseded by </span>
          <button type="button" className="text-primary hover:underline" onClick={() => onSelectBelief(supersededBy.id)}>
            “{supersededBy.predicate} {supersededBy.object}” ({day(supersededBy.validFrom)})
          </button>
        </div>
      ) : null}
      <div>
        <div className="mb-1 text-xs font-medium text-muted-foreground">Sources ({sources.length})</div>
        {sources.length === 0 ? (
          <p className="text-sm text-muted-foreground">No source records.</p>
        ) : (
          <div className="space-y-1.5">
            {sources.map((s) => (
              <div key={s.id} className={cn("rounded-lg border p-2 text-sm", open === s.id && "border-primary")} data-testid="belief-source">
                <button type="button" className="w-full text-left" onClick={() => setOpen(open === s.id ? null : s.id)}>
                  <div className="mb-1 flex items-center gap-2 text-xs text-muted-foreground">
                    <Badge variant="secondary">{s.step}</Badge>
                    <span className="truncate">{recordLabel(s)}</span>
                    <span className="ml-auto">{day(typeof s.metadata.time === "object" && s.metadata.time ? String((s.metadata.time as Record<string, unknown>).created_at ?? "") : null)}</span>
                  </div>
                  <div className={cn("whitespace-pre-wrap", open !== s.id && "line-clamp-3")} data-testid="belief-source-content">
                    {s.content}
                  </div>
                </button>
                <Link className="mt-1 inline-block text-xs text-primary hover:underline" href={recordHref(s.id)} data-testid="open-source-record">
                  Record details and lineage
                </Link>
              </div>
            ))}
          </div>
        )}
      </div>
    </div>
  );
}
