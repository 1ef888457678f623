"use client";
import { Handle, Position, type NodeProps } from "@xyflow/react";
import {
  AlertTriangle,
  Combine,
  Database,
  Eye,
  FileText,
  GitMerge,
  Layers,
  Lightbulb,
  Network,
  ListTree,
  Repeat,
  Search,
  Split,
  Users,
  Wand2,
} from "lucide-react";
import { cn } from "@/components/ui/cn";
import type { SpecNodeData } from "./spec-graph";

/** The icon of a node kind/type (sources: database, api: file; outputs: search/eye; steps by type). */
export function NodeIcon({ kind, type, className }: { kind: string; type: string; className?: string }) {
  if (kind === "source") return type === "api" ? <FileText className={className} /> : <Database className={className} />;
  if (kind === "output") return type === "projection" ? <Eye className={className} /> : <Search className={className} />;
  switch (type) {
    case "transform":
      return <Wand2 className={className} />;
    case "split":
      return <Split className={className} />;
    case "aggregate":
      return <Layers className={className} />;
    case "fold":
      return <Repeat className={className} />;
    case "merge":
      return <GitMerge className={className} />;
    case "consolidate":
      return <Combine className={className} />;
    case "entities":
      return <Users className={className} />;
    case "relations":
      return <Network className={className} />;
    case "insights":
      return <Lightbulb className={className} />;
    default:
      return <ListTree className={className} />;
  }
}

/** One-line summary of what a step does (operator, grouping, model). */
function detail(data: SpecNodeData): string {
  const n = data.node as Record<string, unknown>;
  if (data.kind === "source") return typeof n.scope === "string" ? `scope ${n.scope}` : "source";
  if (data.kind === "output") {
    const from = Array.isArray(n.from) ? n.from.length : n.from ? 1 : 0;
    return `${data.type || "output"} · ${from} input${from === 1 ? "" : "s"}`;
  }
  const parts: string[] = [];
  const groupBy = n.groupBy as Record<string, unknown> | undefined;
  if (groupBy) parts.push(groupBy.period ? `by ${String(groupBy.period)}` : groupBy.key ? `by ${String(groupBy.key)}` : `every ${String(groupBy.every)}`);
  const op = n.operator as { kind?: string } | undefined;
  if (op?.kind) parts.push(op.kind);
  else if (typeof n.prompt === "string") parts.push(typeof n.model === "string" ? n.model : "offline/extractive");
  if (data.type === "merge") parts.push(typeof n.dedupe === "string" ? n.dedupe : "dedupe");
  if (data.type === "entities" && typeof n.prompt !== "string") {
    const known = n.dictionary && typeof n.dictionary === "object" ? Object.keys(n.dictionary).length : 0;
    parts.push(`offline${known ? ` · ${known} known` : ""}`);
  }
  if (data.type === "relations") parts.push(n.coMentions === false ? "beliefs" : "beliefs + co-mentions");
  if (data.type === "insights") parts.push(Array.isArray(n.kinds) ? n.kinds.join(", ") : "connections, digests, contradictions");
  return parts.join(" · ") || data.type;
}

const KIND_STYLE = {
  source: "border-l-emerald-500 bg-emerald-500/5",
  step: "border-l-indigo-500 bg-card",
  output: "border-l-amber-500 bg-amber-500/5 rounded-full pl-4",
} as const;

const ICON_STYLE = {
  source: "bg-emerald-500/15 text-emerald-600 dark:text-emerald-400",
  step: "bg-indigo-500/15 text-indigo-600 dark:text-indigo-400",
  output: "bg-amber-500/15 text-amber-700 dark:text-amber-400",
} as const;

export function SpecNode({ data, selected }: NodeProps & { data: SpecNodeData }) {
  const invalid = data.problems.length > 0;
  return (
    <div
      data-testid={`canvas-node-${data.name}`}
      data-invalid={invalid ? "true" : undefined}
      title={invalid ? data.problems.map((p) => p.message).join("\n") : undefined}
      className={cn(
        "flex w-[220px] items-center gap-2 rounded-lg border border-l-4 px-3 py-2 text-left shadow-sm",
        KIND_STYLE[data.kind],
        selected && "ring-2 ring-primary",
        invalid && "border-destructive ring-2 ring-destructive/40",
      )}
    >
      {data.kind !== "source" ? <Handle type="target" position={Position.Top} className="!size-2.5 !bg-muted-foreground" /> : null}
      <div className={cn("flex size-8 shrink-0 items-center justify-center rounded-md", ICON_STYLE[data.kind])}>
        <NodeIcon kind={data.kind} type={data.type} className="size-4" />
      </div>
      <div className="min-w-0 flex-1">
        <div className="flex items-center gap-1">
          <span className="truncate text-sm font-medium">{data.name || <em className="text-muted-foreground">unnamed</em>}</span>
          {invalid ? <AlertTriangle className="size-3.5 shrink-0 text-destructive" aria-label="has problems" /> : null}
        </div>
        <div className="truncate text-[11px] text-muted-foreground">
          <span className="font-medium uppercase tracking-wide">{data.kind === "step" ? data.type : data.kind}</span>
          {" · "}
          {detail(data)}
        </div>
      </div>
      {data.kind !== "output" ? <Handle type="source" position={Position.Bottom} className="!size-2.5 !bg-muted-foreground" /> : null}
    </div>
  );
}

export const nodeTypes = { "spec-source": SpecNode, "spec-step": SpecNode, "spec-output": SpecNode };
