"use client";
import { useRouter } from "next/navigation";
import { useMemo } from "react";
import { FlowGraph, type GraphEdge, type GraphNode } from "./flow-graph";

export interface LineageData {
  root: string;
  nodes: Array<{ id: string; step: string; scope: string; preview: string; depth: number; onBranch: boolean | null }>;
  edges: Array<{ parent: string; child: string }>;
  truncated: boolean;
}

/** Provenance of one record: its sources flowing into it (leaves on the left), click to open one. */
export function LineageGraph({ data, hrefFor }: { data: LineageData; hrefFor: (id: string) => string }) {
  const router = useRouter();
  const { nodes, edges } = useMemo(() => {
    const nodes: GraphNode[] = data.nodes.map((n) => ({
      id: n.id,
      kind: n.depth > 0 && !data.edges.some((e) => e.child === n.id) ? "source" : "record",
      title: n.step,
      subtitle: n.id === data.root ? "this record" : n.onBranch === false ? "off branch" : undefined,
      highlight: n.id === data.root,
      testId: `lineage-node-${n.step}`,
      body: <span className="line-clamp-2">{n.preview}</span>,
    }));
    const edges: GraphEdge[] = data.edges.map((e) => ({ from: e.parent, to: e.child }));
    return { nodes, edges };
  }, [data]);
  return (
    <div>
      <FlowGraph nodes={nodes} edges={edges} height={420} onNodeClick={(id) => router.push(hrefFor(id))} testId="lineage-graph" />
      {data.truncated ? <p className="mt-2 text-xs text-muted-foreground">The graph is cut at 200 nodes; open a source to continue from there.</p> : null}
    </div>
  );
}
