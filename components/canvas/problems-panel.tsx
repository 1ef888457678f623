"use client";
import Link from "next/link";
import { cn } from "@/components/ui/cn";
import { formatPath, type Problem } from "@/server/pipeline/spec";
import type { NodeRef } from "./spec-graph";

/** Under the canvas: the spec's problems (click one to select its node) and models without a provider. */
export function ProblemsPanel({
  problems,
  missingProviders,
  modelsHref,
  onSelect,
}: {
  problems: Problem[];
  missingProviders: Problem[];
  modelsHref: string;
  onSelect: (ref: NodeRef) => void;
}) {
  return (
    <div data-testid="problems-panel" className="max-h-40 min-h-10 overflow-y-auto border-t px-4 py-2 text-xs">
      {problems.length ? (
        <>
          <div className="mb-1 font-medium text-destructive">
            {problems.length} problem{problems.length === 1 ? "" : "s"} (saving is disabled until they are fixed)
          </div>
          <ul className="space-y-0.5">
            {problems.map((p, i) => (
              <li key={i}>
                <button
                  type="button"
                  className="text-left hover:underline"
                  onClick={() => {
                    const kind = ({ sources: "source", steps: "step", outputs: "output" } as const)[String(p.path[0]) as "sources"];
                    if (kind && typeof p.path[1] === "number") onSelect({ kind, index: p.path[1] });
                  }}
                >
                  <code className="text-muted-foreground">{formatPath(p.path)}</code>
                  {p.node ? <span className="font-medium"> ({p.node})</span> : null}: {p.message}
                </button>
              </li>
            ))}
          </ul>
        </>
      ) : missingProviders.length ? null : (
        <span className="text-muted-foreground">No problems: the spec is valid.</span>
      )}
      {missingProviders.length ? (
        <div data-testid="provider-problems" className={cn("text-destructive", problems.length && "mt-2")}>
          <div className="mb-1 font-medium">
            Runs will not start until these models have a provider (saving is allowed):{" "}
            <Link className="underline" href={modelsHref}>
              Settings → Models
            </Link>
          </div>
          <ul className="space-y-0.5">
            {missingProviders.map((p) => (
              <li key={formatPath(p.path)}>
                <code className="text-muted-foreground">{formatPath(p.path)}</code>
                {p.node ? <span className="font-medium"> ({p.node})</span> : null}: {p.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
