"use client";
import type { inferRouterOutputs } from "@trpc/server";
import { useEffect, useRef } from "react";
import type { AppRouter } from "@/server/api/root";

type PromptChange = inferRouterOutputs<AppRouter>["pipeline"]["diff"]["prompts"][number];

/** One step's prompt between two versions, as text: removed words struck through, added ones marked. */
export function PromptDiff({ change }: { change: PromptChange }) {
  const pre = useRef<HTMLPreElement>(null);
  // Open at the first change (issue 48: text added at the end of a long prompt was below the fold).
  // Only the box scrolls, a line of context above the change; the page stays where it is.
  useEffect(() => {
    const box = pre.current;
    const first = box?.querySelector<HTMLElement>("ins, del");
    if (box && first) box.scrollTop = Math.max(0, first.offsetTop - 24);
  }, [change]);
  return (
    <div data-testid={`prompt-diff-${change.step}`} className="space-y-1">
      <div className="text-[11px] text-muted-foreground">
        Prompt of <span className="font-medium text-foreground">{change.step}</span>
        {change.before === null ? " (new step)" : change.after === null ? " (step removed)" : ""} · {change.added} characters added, {change.removed} removed
      </div>
      <pre ref={pre} data-testid="prompt-diff-text" className="relative max-h-64 overflow-auto rounded-md border bg-muted/40 p-2 font-mono text-[11px] leading-relaxed whitespace-pre-wrap">
        {change.segments.map((s, i) =>
          s.op === "added" ? (
            <ins key={i} className="bg-emerald-500/20 text-emerald-900 no-underline dark:text-emerald-200">
              {s.text}
            </ins>
          ) : s.op === "removed" ? (
            <del key={i} className="bg-red-500/15 text-red-900 dark:text-red-200">
              {s.text}
            </del>
          ) : (
            <span key={i}>{s.text}</span>
          ),
        )}
      </pre>
    </div>
  );
}
