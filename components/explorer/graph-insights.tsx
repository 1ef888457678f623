"use client";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";
import { Skeleton } from "@/components/ui/skeleton";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { BeliefLine } from "./graph-belief";
import { day, type GraphInsight } from "./graph-model";

const KINDS = ["connection", "digest", "contradiction"] as const;
type Kind = (typeof KINDS)[number];
const KIND_VARIANT: Record<Kind, "secondary" | "outline" | "destructive"> = { connection: "secondary", digest: "outline", contradiction: "destructive" };

interface Ref {
  workspaceId: string;
  pipelineId: string;
  branch: string;
}

/** The beliefs an insight names, fetched when it is opened. */
function InsightBeliefs({ target, insight, selected, onSelectBelief }: { target: Ref; insight: GraphInsight; selected: string | null; onSelectBelief: (id: string) => void }) {
  const trpc = useTRPC();
  const ids = insight.beliefs.slice(0, 200);
  const beliefs = useQuery({ ...trpc.graph.beliefs.queryOptions({ ...target, ids }), enabled: ids.length > 0 });
  if (!ids.length) return <p className="text-xs text-muted-foreground">No beliefs named.</p>;
  if (beliefs.isPending) return <Skeleton className="h-12 w-full" />;
  if (beliefs.isError) return <p className="text-xs text-destructive">{errorMessage(beliefs.error)}</p>;
  return (
    <div className="space-y-1">
      {beliefs.data.map((b) => (
        <BeliefLine key={b.id} belief={b} active={selected === b.id} onClick={() => onSelectBelief(b.id)} />
      ))}
      {insight.beliefs.length > ids.length ? <p className="text-xs text-muted-foreground">and {insight.beliefs.length - ids.length} more</p> : null}
    </div>
  );
}

/**
 * The pipeline's insights (new connections between entities, periodic digests, contradictions
 * between current beliefs), newest first, filterable by kind. Opening one lists its beliefs;
 * a belief opens its sources, an entity becomes the graph's centre.
 */
export function InsightsList({
  target,
  scope,
  selectedBelief,
  onSelectBelief,
  onSelectEntity,
}: {
  target: Ref;
  scope: string;
  selectedBelief: string | null;
  onSelectBelief: (id: string) => void;
  onSelectEntity: (id: string) => void;
}) {
  const trpc = useTRPC();
  const [kind, setKind] = useState<Kind | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const list = useQuery(trpc.graph.insights.queryOptions({ ...target, ...(scope ? { scope } : {}), ...(kind ? { kind } : {}), limit: 100 }));
  return (
    <div data-testid="insights-list">
      <div className="mb-2 flex flex-wrap gap-1">
        {[null, ...KINDS].map((k) => (
          <button
            key={k ?? "all"}
            type="button"
            data-testid={`insight-kind-${k ?? "all"}`}
            onClick={() => setKind(k)}
            className={cn("rounded-md border px-2 py-0.5 text-xs", kind === k ? "border-primary bg-primary/10 text-foreground" : "text-muted-foreground hover:bg-muted")}
          >
            {k ?? "all"}
          </button>
        ))}
        {list.data ? <span className="ml-auto self-center text-xs text-muted-foreground">{list.data.total}</span> : null}
      </div>
      {list.isPending ? (
        <Skeleton className="h-24 w-full" />
      ) : list.isError ? (
        <p className="text-sm text-destructive">{errorMessage(list.error)}</p>
      ) : list.data.steps.length === 0 ? (
        <p className="text-sm text-muted-foreground">This pipeline has no insights step.</p>
      ) : list.data.insights.length === 0 ? (
        <p className="text-sm text-muted-foreground">No insights{kind ? ` of kind ${kind}` : ""} yet. Run the pipeline to detect them.</p>
      ) : (
        <div className="space-y-1.5">
          {list.data.insights.map((i) => (
            <div key={i.recordId} className={cn("rounded-lg border p-2", open === i.recordId && "border-primary")} data-testid="insight" data-kind={i.kind}>
              <button type="button" className="w-full text-left" onClick={() => setOpen(open === i.recordId ? null : i.recordId)}>
                <div className="mb-1 flex items-center gap-1.5 text-xs text-muted-foreground">
                  <Badge variant={KIND_VARIANT[i.kind]}>{i.kind}</Badge>
                  {i.period ? <span>{i.period}</span> : null}
                  <span className="truncate">{i.scope}</span>
                  <span className="ml-auto">{day(i.detectedAt)}</span>
                </div>
                <div className="text-sm">{i.title}</div>
              </button>
              {open === i.recordId ? (
                <div className="mt-2 space-y-2">
                  {i.text !== i.title ? <p className="text-xs whitespace-pre-wrap text-muted-foreground">{i.text}</p> : null}
                  {i.entityRefs.length ? (
                    <div className="flex flex-wrap gap-1">
                      {i.entityRefs.map((e) => (
                        <button key={e.id} type="button" className="rounded-full border px-2 py-0.5 text-xs hover:bg-muted" onClick={() => onSelectEntity(e.id)}>
                          {e.name}
                        </button>
                      ))}
                    </div>
                  ) : null}
                  <InsightBeliefs target={target} insight={i} selected={selectedBelief} onSelectBelief={onSelectBelief} />
                </div>
              ) : null}
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
