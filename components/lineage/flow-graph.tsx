"use client";
import dagre from "@dagrejs/dagre";
import {
  Background,
  Controls,
  Handle,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useNodesInitialized,
  useReactFlow,
  type Edge,
  type Node,
  type NodeChange,
  type NodeProps,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
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
/** Zoom-to-fit stays readable: never blown up for two nodes, never below ~9 px text for many. */
export const FIT_VIEW = { padding: 0.15, minZoom: 0.6, maxZoom: 1.1 } as const;
/** A focused graph that grew (a lineage group opened) fits whole down to this zoom before it scrolls to the focus. */
const GROWN_FIT = { padding: 0.1, minZoom: 0.1, maxZoom: 1.1 } as const;

type BoxData = { node: GraphNode };
type Size = { width: number; height: number };

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

/**
 * Dagre layout with each node's real size when known (`sizes`, as rendered), else the default box:
 * nodes whose badges wrap to more lines get the room they take, so none overlap.
 */
export function layoutGraph(nodes: GraphNode[], edges: GraphEdge[], direction: "LR" | "TB" = "LR", sizes: Record<string, Size> = {}) {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: direction, nodesep: 20, ranksep: 40 });
  g.setDefaultEdgeLabel(() => ({}));
  const sizeOf = (id: string) => ({ width: sizes[id]?.width ?? NODE_W, height: sizes[id]?.height ?? NODE_H });
  for (const n of nodes) g.setNode(n.id, sizeOf(n.id));
  const ids = new Set(nodes.map((n) => n.id));
  for (const e of edges) if (ids.has(e.from) && ids.has(e.to)) g.setEdge(e.from, e.to);
  dagre.layout(g);
  const rfNodes: Node<BoxData>[] = nodes.map((n) => {
    const p = g.node(n.id) as { x: number; y: number } | undefined;
    const size = sizeOf(n.id);
    return {
      id: n.id,
      type: "box",
      position: { x: (p?.x ?? 0) - size.width / 2, y: (p?.y ?? 0) - size.height / 2 },
      data: { node: n },
      draggable: false,
      connectable: false,
      ...(sizes[n.id] ? { measured: sizes[n.id] } : {}),
    };
  });
  const rfEdges: Edge[] = edges
    .filter((e) => ids.has(e.from) && ids.has(e.to))
    .map((e) => ({ id: `${e.from}->${e.to}`, source: e.from, target: e.to, animated: false }));
  return { nodes: rfNodes, edges: rfEdges };
}

interface FlowGraphProps {
  nodes: GraphNode[];
  edges: GraphEdge[];
  direction?: "LR" | "TB";
  height?: number;
  onNodeClick?: (id: string) => void;
  testId?: string;
  /** A node kept in view when the graph grows (the record a lineage is about). */
  focusId?: string;
}

/** A read-only graph: dagre layout on measured node sizes, React Flow rendering, click a node to select it. */
export function FlowGraph(props: FlowGraphProps) {
  return (
    <ReactFlowProvider>
      <Graph {...props} />
    </ReactFlowProvider>
  );
}

function Graph({ nodes, edges, direction = "LR", height = 360, onNodeClick, testId, focusId }: FlowGraphProps) {
  const rf = useReactFlow();
  const box = useRef<HTMLDivElement>(null);
  const [sizes, setSizes] = useState<Record<string, Size>>({});
  const laid = useMemo(() => layoutGraph(nodes, edges, direction, sizes), [nodes, edges, direction, sizes]);
  const initialized = useNodesInitialized();
  // Only rendered nodes are measured (a big graph renders what is in view).
  const measuredAll = laid.nodes.length > 100 || laid.nodes.every((n) => sizes[n.id]);
  // The layout's shape: ids and sizes. A refresh with the same shape (a status poll) moves nothing.
  const shape = laid.nodes.map((n) => `${n.id}:${sizes[n.id]?.width ?? 0}x${sizes[n.id]?.height ?? 0}`).join("|");
  const fitted = useRef(false);

  const onNodesChange = useCallback((changes: NodeChange[]) => {
    setSizes((s) => {
      let next = s;
      for (const c of changes) {
        if (c.type !== "dimensions" || !c.dimensions) continue;
        const d = { width: Math.round(c.dimensions.width), height: Math.round(c.dimensions.height) };
        if (next[c.id]?.width === d.width && next[c.id]?.height === d.height) continue;
        next = { ...next, [c.id]: d };
      }
      return next;
    });
  }, []);

  // Once every node is measured and laid out on its real size: fit (again when the shape changes),
  // or, with a focus, fit once and then keep the focus in view as the graph grows.
  useEffect(() => {
    if (!initialized || !measuredAll) return;
    const frame = requestAnimationFrame(() => {
      if (!fitted.current || !focusId) {
        fitted.current = true;
        void rf.fitView(FIT_VIEW);
        return;
      }
      const focus = focusId ? laid.nodes.find((n) => n.id === focusId) : undefined;
      const rect = box.current?.getBoundingClientRect();
      if (!focus || !rect) return;
      const size = sizes[focus.id] ?? { width: NODE_W, height: NODE_H };
      // The graph grew (a group opened): show all of it if it fits at a smaller zoom (its page and
      // "more" node stay reachable), then make sure the focus is in view.
      void rf.fitView(GROWN_FIT).then(() => {
        const { x, y, zoom } = rf.getViewport();
        const left = focus.position.x * zoom + x;
        const top = focus.position.y * zoom + y;
        const inView = left >= 0 && top >= 0 && left + size.width * zoom <= rect.width && top + size.height * zoom <= rect.height;
        if (!inView) void rf.setCenter(focus.position.x + size.width / 2, focus.position.y + size.height / 2, { zoom, duration: 250 });
      });
    });
    return () => cancelAnimationFrame(frame);
    // `shape` stands for laid and sizes: a new layout of the same shape needs nothing.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [initialized, measuredAll, shape, focusId, rf]);

  return (
    <div ref={box} className="rounded-xl border bg-background" style={{ height }} data-testid={testId}>
      <ReactFlow
        nodes={laid.nodes}
        edges={laid.edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        fitView
        fitViewOptions={FIT_VIEW}
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
        <Controls showInteractive={false} fitViewOptions={FIT_VIEW} />
      </ReactFlow>
    </div>
  );
}
