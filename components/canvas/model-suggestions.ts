"use client";
/** Model names offered in a step's model field: the offline model, then common models of each provider the workspace has. */
import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useTRPC } from "@/lib/trpc";

const KNOWN: Record<string, string[]> = {
  openai: ["gpt-4o-mini", "gpt-4o", "gpt-4.1-mini"],
  anthropic: ["claude-3-5-haiku-latest", "claude-sonnet-4-0"],
};

export function useModelSuggestions(workspaceId: string): string[] {
  const trpc = useTRPC();
  const providers = useQuery({ ...trpc.provider.list.queryOptions({ workspaceId }), retry: false, staleTime: 60_000 });
  return useMemo(() => {
    const out = ["offline/extractive"];
    for (const p of providers.data ?? []) for (const m of KNOWN[p.kind] ?? ["model"]) out.push(`${p.name}/${m}`);
    return out;
  }, [providers.data]);
}
