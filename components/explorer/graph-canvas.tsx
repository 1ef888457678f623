"use client";
import { Background, Controls, Handle, MarkerType, Position, ReactFlow, type Edge, type Node, type NodeProps } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useMemo } from "react";
import { cn } from "@/components/ui/cn";
import { radialLayout, type MergedGraph } from "./graph-model";

type EntityNodeData = { label: string; kind: "entity" | "value"; type: string | null; mentions: number | null; centre: boolean; expanded: boolean; selected: boolean; entityId: string };

const ENTITY_W = 150;
const VALUE_W = 120;

/** Edges attach at the node's middle (radial layout: any direction), so the handles are invisible and centred. */
const centred = "!top-1/2 !left-1/2 !size-px !min-h-0 !min-w-0 !-translate-1/2 !border-0 !bg-transparent";

function EntityNode({ data }: NodeProps<Node<EntityNodeData>>) {
  const isValue = data.kind === "value";
  return (
    <div
      data-testid={isValue ? "graph-value-node" : "graph-entity-node"}
      data-entity={isValue ? undefined : data.entityId}
      data-name={data.label}
      data-expanded={data.expanded ? "1" : "0"}
      title={isValue ? data.label : `${data.label} · ${data.type ?? "entity"}${data.mentions != null ? ` · ${data.mentions} mentions` : ""}`}
      className={cn(
        "cursor-pointer text-center shadow-xs",
        isValue ? "rounded-md border border-dashed bg-muted/40 px-2 py-1 text-[11px] text-muted-foreground" : "rounded-full border-2 bg-card px-3 py-2 text-xs",
        !isValue && data.centre && "border-primary bg-primary/10 font-semibold",
        !isValue && !data.centre && (data.expanded ? "border-sky-500/70" : "border-border"),
        data.selected && "ring-2 ring-primary",
      )}
      style={{ width: isValue ? VALUE_W : ENTITY_W }}
    >
      <Handle type="target" position={Position.Top} className={centred} isConnectable={false} />
      <div className="truncate">{data.label}</div>
      {!isValue ? (
        <div className="truncate text-[10px] font-normal text-muted-foreground">
          {data.type ?? "entity"}
          {data.mentions != null ? ` · ${data.mentions}×` : ""}
        </div>
      ) : null}
      <Handle type="source" position={Position.Bottom} className={centred} isConnectable={false} />
    </div>
  );
}

const nodeTypes = { entity: EntityNode };

/**
 * The neighbourhood as React Flow draws it: entities as round nodes (the centre highlighted,
 * expanded ones outlined), literal objects as dashed boxes, beliefs as labelled edges (the
 * predicate and how many beliefs; dashed when none of them is current).
 */
export function GraphCanvas({
  graph,
  centreId,
  selectedNode,
  selectedEdge,
  onNodeClick,
  onEdgeClick,
}: {
  graph: MergedGraph;
  centreId: string;
  selectedNode: string | null;
  selectedEdge: string | null;
  onNodeClick: (id: string, kind: "entity" | "value") => void;
  onEdgeClick: (id: string) => void;
}) {
  const laid = useMemo(() => {
    const positions = radialLayout(
      centreId,
      graph.nodes.map((n) => n.id),
      graph.edges,
    );
    const nodes: Node<EntityNodeData>[] = graph.nodes.map((n) => {
      const p = positions.get(n.id) ?? { x: 0, y: 0 };
      const w = n.kind === "value" ? VALUE_W : ENTITY_W;
      return {
        id: n.id,
        type: "entity",
        position: { x: p.x - w / 2, y: p.y - 20 },
        data: {
          label: n.label,
          kind: n.kind,
          type: n.entity?.type ?? null,
          mentions: n.entity?.mentions ?? null,
          centre: n.id === centreId,
          expanded: n.expanded,
          selected: n.id === selectedNode,
          entityId: n.id,
        },
        draggable: false,
        connectable: false,
      };
    });
    const edges: Edge[] = graph.edges.map((e) => {
      const superseded = e.current === 0;
      return {
        id: e.id,
        source: e.source,
        target: e.target,
        type: "straight",
        label: e.weight > 1 ? `${e.predicate} ×${e.weight}` : e.predicate,
        labelBgPadding: [4, 2] as [number, number],
        labelStyle: { fontSize: 10 },
        markerEnd: { type: MarkerType.ArrowClosed, width: 14, height: 14 },
        style: { strokeDasharray: superseded ? "4 3" : undefined, strokeWidth: e.id === selectedEdge ? 3 : Math.min(3, 1 + Math.log10(e.weight)), stroke: e.id === selectedEdge ? "var(--color-primary)" : undefined },
        data: { predicate: e.predicate },
        interactionWidth: 16,
      };
    });
    return { nodes, edges };
  }, [graph, centreId, selectedNode, selectedEdge]);

  return (
    <div className="h-[34rem] rounded-xl border bg-background" data-testid="graph-canvas">
      <ReactFlow
        nodes={laid.nodes}
        edges={laid.edges}
        nodeTypes={nodeTypes}
        fitView
        fitViewOptions={{ padding: 0.2, maxZoom: 1.2 }}
        nodesDraggable={false}
        nodesConnectable={false}
        onNodeClick={(_, node) => onNodeClick(node.id, (node.data as EntityNodeData).kind)}
        onEdgeClick={(_, edge) => onEdgeClick(edge.id)}
        proOptions={{ hideAttribution: true }}
        minZoom={0.1}
      >
        <Background gap={16} size={1} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
