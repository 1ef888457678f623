"use client";
import { useState } from "react";
import { Input } from "@/components/ui/input";
import { DEFAULT_TEMPLATES } from "@/server/pipeline/prompts";
import { NodeIcon } from "./nodes";
import type { DraftNode, NodeKind } from "./spec-graph";

export interface PaletteItem {
  id: string;
  category: "Sources" | "Model steps" | "Built-in (no model)" | "Graph (Synapsis)" | "Outputs";
  label: string;
  description: string;
  kind: NodeKind;
  node: DraftNode;
}

export const PALETTE: PaletteItem[] = [
  { id: "src-chatgpt", category: "Sources", label: "ChatGPT export", description: "conversations.json or the export zip", kind: "source", node: { name: "chats", format: "chatgpt-export" } },
  { id: "src-claude", category: "Sources", label: "Claude export", description: "Claude data export", kind: "source", node: { name: "claude", format: "claude-export" } },
  { id: "src-jsonl", category: "Sources", label: "JSONL", description: "one record per line", kind: "source", node: { name: "events", format: "jsonl" } },
  { id: "src-markdown", category: "Sources", label: "Markdown", description: "notes, docs", kind: "source", node: { name: "notes", format: "markdown" } },
  { id: "src-api", category: "Sources", label: "API stream", description: "agents push messages and events", kind: "source", node: { name: "stream", format: "api" } },
  { id: "transform", category: "Model steps", label: "Transform", description: "1 → 1: summarize, extract, classify", kind: "step", node: { type: "transform", name: "summaries", prompt: DEFAULT_TEMPLATES.summary } },
  { id: "split-facts", category: "Model steps", label: "Split: facts", description: "1 → N: one durable fact per line", kind: "step", node: { type: "split", name: "facts", prompt: DEFAULT_TEMPLATES.facts } },
  { id: "aggregate", category: "Model steps", label: "Aggregate by month", description: "N → 1 per group: period, key or count window", kind: "step", node: { type: "aggregate", name: "monthly", groupBy: { period: "month" }, prompt: DEFAULT_TEMPLATES.monthly } },
  { id: "fold", category: "Model steps", label: "Fold", description: "N ordered → 1: a world model, state", kind: "step", node: { type: "fold", name: "world-model", orderKey: "time.period", prompt: DEFAULT_TEMPLATES.worldModel } },
  { id: "consolidate", category: "Model steps", label: "Consolidate", description: "facts → living memory set (ADD/UPDATE/DELETE)", kind: "step", node: { type: "consolidate", name: "memories", prompt: "Decide ADD, UPDATE, DELETE or NONE for this fact.\n\nFact: {{ record.content }}\n\nSimilar memories:\n{% for r in records %}- {{ r.content }}\n{% endfor %}" } },
  { id: "chunk", category: "Built-in (no model)", label: "Chunk", description: "split by size (characters)", kind: "step", node: { type: "split", name: "chunks", operator: { kind: "chunk", size: 1200, overlap: 0 } } },
  { id: "sentences", category: "Built-in (no model)", label: "Sentences", description: "split into sentences", kind: "step", node: { type: "split", name: "sentences", operator: { kind: "sentences", per: 1 } } },
  { id: "turns", category: "Built-in (no model)", label: "Turn windows", description: "overlapping windows of conversation turns", kind: "step", node: { type: "split", name: "windows", operator: { kind: "turns", size: 3, stride: 1 } } },
  { id: "entities", category: "Built-in (no model)", label: "Regex entities", description: "emails, urls, names…", kind: "step", node: { type: "split", name: "entities", operator: { kind: "regex-entities" } } },
  { id: "extractive", category: "Built-in (no model)", label: "Extractive summary", description: "keep the key sentences", kind: "step", node: { type: "transform", name: "digest", operator: { kind: "extractive-summary", sentences: 3 } } },
  { id: "pii", category: "Built-in (no model)", label: "PII flag", description: "flag personal data", kind: "step", node: { type: "transform", name: "pii", operator: { kind: "pii-flag" } } },
  { id: "merge", category: "Built-in (no model)", label: "Merge", description: "N sources → N, with dedupe", kind: "step", node: { type: "merge", name: "merged", from: [], dedupe: "content_hash", conflict: "prefer_latest" } },
  { id: "graph-entities", category: "Graph (Synapsis)", label: "Entities", description: "people, places, things per scope (Mel = Melanie)", kind: "step", node: { type: "entities", name: "entities", from: [] } },
  { id: "graph-relations", category: "Graph (Synapsis)", label: "Relations (beliefs)", description: "subject → predicate → object over time, superseded not lost", kind: "step", node: { type: "relations", name: "relations", from: [] } },
  { id: "graph-insights", category: "Graph (Synapsis)", label: "Insights", description: "new connections, monthly digests, contradictions", kind: "step", node: { type: "insights", name: "insights", from: [] } },
  { id: "out-search", category: "Outputs", label: "Search index", description: "an index over one or more steps", kind: "output", node: { name: "search", surface: "search", from: [] } },
  { id: "out-projection", category: "Outputs", label: "Projection", description: "latest record(s) as a context block", kind: "output", node: { name: "context", surface: "projection", from: [] } },
];

const CATEGORIES = ["Sources", "Model steps", "Built-in (no model)", "Graph (Synapsis)", "Outputs"] as const;

export function Palette({ onAdd, disabled }: { onAdd: (item: PaletteItem) => void; disabled?: boolean }) {
  const [q, setQ] = useState("");
  const needle = q.trim().toLowerCase();
  const items = PALETTE.filter((i) => !needle || `${i.label} ${i.description} ${i.category} ${i.node.type ?? ""}`.toLowerCase().includes(needle));
  return (
    <div className="flex h-full flex-col gap-2" data-testid="palette">
      <Input placeholder="Search nodes…" value={q} onChange={(e) => setQ(e.target.value)} className="h-8" aria-label="Search nodes" />
      <div className="flex-1 space-y-3 overflow-y-auto pr-1">
        {CATEGORIES.map((cat) => {
          const inCat = items.filter((i) => i.category === cat);
          if (!inCat.length) return null;
          return (
            <div key={cat}>
              <div className="mb-1 text-[11px] font-medium uppercase tracking-wide text-muted-foreground">{cat}</div>
              <div className="space-y-1">
                {inCat.map((item) => {
                  return (
                    <button
                      key={item.id}
                      type="button"
                      disabled={disabled}
                      data-testid={`palette-${item.id}`}
                      onClick={() => onAdd(item)}
                      className="flex w-full items-start gap-2 rounded-md border bg-card px-2 py-1.5 text-left text-xs hover:bg-accent disabled:opacity-50"
                      title={`Add ${item.label}${item.kind !== "source" ? " (connected to the selected node)" : ""}`}
                    >
                      <NodeIcon kind={item.kind} type={String(item.node.type ?? item.node.surface ?? item.node.format ?? "")} className="mt-0.5 size-3.5 shrink-0 text-muted-foreground" />
                      <span>
                        <span className="block font-medium">{item.label}</span>
                        <span className="block text-muted-foreground">{item.description}</span>
                      </span>
                    </button>
                  );
                })}
              </div>
            </div>
          );
        })}
        {!items.length ? <p className="text-xs text-muted-foreground">Nothing matches “{q}”.</p> : null}
      </div>
    </div>
  );
}
