"use client";
import { ArrowRight } from "lucide-react";
import { Badge } from "@/components/ui/badge";
import { cn } from "@/components/ui/cn";
import { day, type GraphBelief } from "./graph-model";

/**
 * An entity's beliefs over time, oldest valid time first: each with its validity interval
 * (valid from → valid to), current or superseded, and a link to the belief that superseded it
 * (or that it superseded). Clicking a belief opens it with its sources.
 */
export function BeliefTimeline({
  beliefs,
  total,
  selected,
  onSelect,
}: {
  beliefs: GraphBelief[];
  total: number;
  selected: string | null;
  onSelect: (beliefId: string) => void;
}) {
  if (!beliefs.length) {
    return <p className="p-2 text-sm text-muted-foreground">No beliefs about this entity yet (only co-mentions).</p>;
  }
  const byId = new Map(beliefs.map((b) => [b.id, b]));
  const current = beliefs.filter((b) => b.status === "current").length;
  return (
    <div data-testid="belief-timeline">
      <p className="mb-2 text-xs text-muted-foreground">
        {beliefs.length < total ? `First ${beliefs.length} of ${total} beliefs` : `${total} beliefs`} · {current} current · {beliefs.length - current} superseded
      </p>
      <ol className="relative space-y-2 border-l pl-4">
        {beliefs.map((b) => {
          const next = b.supersededBy ? byId.get(b.supersededBy) : undefined;
          return (
            <li key={b.id} className="relative">
              <span
                className={cn("absolute top-3 -left-[1.3rem] size-2.5 rounded-full border-2 border-background", b.status === "current" ? "bg-primary" : "bg-muted-foreground/50")}
                aria-hidden
              />
              <button
                type="button"
                data-testid="timeline-belief"
                data-belief={b.id}
                data-status={b.status}
                onClick={() => onSelect(b.id)}
                className={cn(
                  "w-full rounded-lg border p-2 text-left text-sm hover:bg-muted/50",
                  b.status === "superseded" && "text-muted-foreground",
                  selected === b.id && "border-primary bg-primary/5",
                )}
              >
                <div className="mb-1 flex flex-wrap items-center gap-1.5 text-xs">
                  <span className="font-mono" data-testid="belief-validity">
                    {day(b.validFrom)} → {b.validTo ? day(b.validTo) : "now"}
                  </span>
                  <Badge variant={b.status === "current" ? "success" : "outline"}>{b.status}</Badge>
                  {b.polarity === "negative" ? <Badge variant="warning">negative</Badge> : null}
                  <span className="ml-auto text-muted-foreground">{b.sources.length} src</span>
                </div>
                <div className={cn(b.status === "superseded" && "line-through decoration-muted-foreground/40")}>
                  <span className="text-muted-foreground">{b.predicate}</span> {b.object}
                </div>
                {b.evidence ? <div className="mt-0.5 line-clamp-2 text-xs text-muted-foreground italic">“{b.evidence}”</div> : null}
              </button>
              {b.supersededBy ? (
                <button
                  type="button"
                  data-testid="superseded-by"
                  className="mt-0.5 flex items-center gap-1 text-xs text-primary hover:underline"
                  onClick={() => onSelect(b.supersededBy!)}
                >
                  <ArrowRight className="size-3" /> superseded by {next ? `“${next.predicate} ${next.object}” (${day(next.validFrom)})` : b.supersededBy}
                </button>
              ) : null}
            </li>
          );
        })}
      </ol>
    </div>
  );
}
