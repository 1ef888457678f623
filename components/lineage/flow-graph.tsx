"use client";
import dagre from "@dagrejs/dagre";
import {
  Background,
  Controls,
  Handle,
  Position,
  ReactFlow,
  type Edge,
  type Node,
  type NodeProps,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useMemo, type ReactNode } from "react";
import { cn } from "@/components/ui/cn";

export interface GraphNode {
  id: string;
  kind: "source" | "step" | "output" | "record";
  title: string;
  subtitle?: string;
  body?: ReactNode;
  highlight?: boolean;
  testId?: string;
}

export interface GraphEdge {
  from: string;
  to: string;
}

const NODE_W = 190;
const NODE_H = 76;

type BoxData = { node: GraphNode };

const KIND_STYLE: Record<GraphNode["kind"], string> = {
  source: "border-sky-500/60 bg-sky-500/5",
  step: "border-border bg-card",
  output: "border-emerald-500/60 bg-emerald-500/5",
  record: "border-border bg-card",
};

function BoxNode({ data }: NodeProps<Node<BoxData>>) {
  const n = data.node;
  return (
    <div
      data-testid={n.testId}
      className={cn(
        "rounded-lg border px-3 py-2 text-left text-xs shadow-xs",
        KIND_STYLE[n.kind],
        n.highlight && "ring-2 ring-primary",
      )}
      style={{ width: NODE_W, minHeight: NODE_H - 10 }}
    >
      <Handle type="target" position={Position.Left} className="!size-1.5 !bg-muted-foreground" />
      <div className="flex items-center justify-between gap-2">
        <span className="truncate font-semibold text-foreground">{n.title}</span>
        <span className="text-[10px] tracking-wide text-muted-foreground uppercase">{n.subtitle}</span>
      </div>
      {n.body ? <div className="mt-1 text-muted-foreground">{n.body}</div> : null}
      <Handle type="source" position={Position.Right} className="!size-1.5 !bg-muted-foreground" />
    </div>
  );
}

const nodeTypes = { box: BoxNode };

export function layoutGraph(nodes: GraphNode[], edges: GraphEdge[], direction: "LR" | "TB" = "LR") {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: direction, nodesep: 20, ranksep: 40 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.id, { width: NODE_W, height: NODE_H });
  const ids = new Set(nodes.map((n) => n.id));
  for (const e of edges) if (ids.has(e.from) && ids.has(e.to)) g.setEdge(e.from, e.to);
  dagre.layout(g);
  const rfNodes: Node<BoxData>[] = nodes.map((n) => {
    const p = g.node(n.id) as { x: number; y: number } | undefined;
    return {
      id: n.id,
      type: "box",
      position: { x: (p?.x ?? 0) - NODE_W / 2, y: (p?.y ?? 0) - NODE_H / 2 },
      data: { node: n },
      draggable: false,
      connectable: false,
    };
  });
  const rfEdges: Edge[] = edges
    .filter((e) => ids.has(e.from) && ids.has(e.to))
    .map((e) => ({ id: `${e.from}->${e.to}`, source: e.from, target: e.to, animated: false }));
  return { nodes: rfNodes, edges: rfEdges };
}

/** A read-only graph: dagre layout, React Flow rendering, click a node to select it. */
export function FlowGraph({
  nodes,
  edges,
  direction = "LR",
  height = 360,
  onNodeClick,
  testId,
}: {
  nodes: GraphNode[];
  edges: GraphEdge[];
  direction?: "LR" | "TB";
  height?: number;
  onNodeClick?: (id: string) => void;
  testId?: string;
}) {
  const laid = useMemo(() => layoutGraph(nodes, edges, direction), [nodes, edges, direction]);
  return (
    <div className="rounded-xl border bg-background" style={{ height }} data-testid={testId}>
      <ReactFlow
        nodes={laid.nodes}
        edges={laid.edges}
        nodeTypes={nodeTypes}
        fitView
        fitViewOptions={{ padding: 0.15, maxZoom: 1.1 }}
        nodesDraggable={false}
        nodesConnectable={false}
        elementsSelectable={!!onNodeClick}
        onNodeClick={onNodeClick ? (_, node) => onNodeClick(node.id) : undefined}
        proOptions={{ hideAttribution: true }}
        // Large graphs: only nodes in view are rendered.
        onlyRenderVisibleElements={laid.nodes.length > 100}
        minZoom={0.1}
      >
        <Background gap={16} size={1} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
