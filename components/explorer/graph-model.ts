/**
 * Shapes of the graph procedures (taken from the router, never redeclared), the merge of several
 * neighbourhoods into the one graph the view draws (the centre's, plus each node the user
 * expanded), and its radial layout: the centre in the middle, each hop on a ring around it, every
 * node placed near the node it was reached from.
 */
import type { RouterOutputs } from "@/lib/trpc";

export type EntityNeighbourhood = RouterOutputs["graph"]["entity"];
export type GraphEntity = RouterOutputs["graph"]["entities"]["entities"][number];
export type GraphBelief = EntityNeighbourhood["beliefs"][number];
export type GraphNodeData = EntityNeighbourhood["nodes"][number];
export type GraphEdgeData = EntityNeighbourhood["edges"][number];
export type GraphInsight = RouterOutputs["graph"]["insights"]["insights"][number];

type Spec = RouterOutputs["pipeline"]["get"]["version"]["spec"];

/** Whether the spec builds an entity graph (the Graph view is offered only then). */
export function hasEntitiesStep(spec: Pick<Spec, "steps"> | undefined): boolean {
  // Compared as a string: the step type is registered by the graph build steps.
  return !!spec?.steps.some((s) => String(s.type) === "entities");
}

export interface MergedGraph {
  nodes: Array<GraphNodeData & { expanded: boolean }>;
  edges: GraphEdgeData[];
  beliefs: Map<string, GraphBelief>;
  truncated: boolean;
}

/** The centre's neighbourhood first, then each expanded one; a node or edge seen twice is kept once. */
export function mergeNeighbourhoods(centre: EntityNeighbourhood, expanded: EntityNeighbourhood[]): MergedGraph {
  const nodes = new Map<string, GraphNodeData & { expanded: boolean }>();
  const edges = new Map<string, GraphEdgeData>();
  const beliefs = new Map<string, GraphBelief>();
  let truncated = false;
  for (const hood of [centre, ...expanded]) {
    truncated ||= hood.truncated;
    for (const n of hood.nodes) {
      // Value nodes belong to the entity they describe: keyed per owner so two entities' "painting" stay apart.
      const id = n.kind === "value" ? `${hood.entity.id}|${n.id}` : n.id;
      if (!nodes.has(id)) nodes.set(id, { ...n, id, expanded: false });
    }
    for (const e of hood.edges) {
      const target = e.target.startsWith("value:") ? `${hood.entity.id}|${e.target}` : e.target;
      const id = e.target.startsWith("value:") ? `${e.source}|${e.predicate}|${target}` : e.id;
      if (!edges.has(id)) edges.set(id, { ...e, id, target });
    }
    for (const b of hood.beliefs) beliefs.set(b.id, b);
    const self = nodes.get(hood.entity.id);
    if (self) self.expanded = true;
  }
  return { nodes: [...nodes.values()], edges: [...edges.values()], beliefs, truncated };
}

const RING = 240;

/** Positions (centres) for a radial layout around `centreId`, by breadth-first distance over the edges. */
export function radialLayout(centreId: string, nodeIds: string[], edges: Array<{ source: string; target: string }>): Map<string, { x: number; y: number }> {
  const adjacent = new Map<string, string[]>();
  for (const e of edges) {
    adjacent.set(e.source, [...(adjacent.get(e.source) ?? []), e.target]);
    adjacent.set(e.target, [...(adjacent.get(e.target) ?? []), e.source]);
  }
  const depth = new Map<string, number>([[centreId, 0]]);
  const parent = new Map<string, string>();
  const queue = [centreId];
  while (queue.length) {
    const at = queue.shift()!;
    for (const next of adjacent.get(at) ?? []) {
      if (depth.has(next)) continue;
      depth.set(next, depth.get(at)! + 1);
      parent.set(next, at);
      queue.push(next);
    }
  }
  const maxDepth = Math.max(0, ...depth.values());
  // Nodes no edge reaches sit on an outer ring.
  for (const id of nodeIds) if (!depth.has(id)) depth.set(id, maxDepth + 1);
  const angle = new Map<string, number>([[centreId, 0]]);
  const pos = new Map<string, { x: number; y: number }>([[centreId, { x: 0, y: 0 }]]);
  const rings = Math.max(0, ...depth.values());
  for (let d = 1; d <= rings; d++) {
    const ring = nodeIds.filter((id) => depth.get(id) === d);
    // Near the parent's angle: sort by it, then spread evenly around the circle.
    ring.sort((a, b) => (angle.get(parent.get(a) ?? "") ?? 0) - (angle.get(parent.get(b) ?? "") ?? 0) || a.localeCompare(b));
    const offset = d === 1 ? -Math.PI / 2 : (angle.get(parent.get(ring[0] ?? "") ?? "") ?? 0) - Math.PI / ring.length;
    ring.forEach((id, i) => {
      const a = offset + (2 * Math.PI * i) / Math.max(1, ring.length);
      angle.set(id, a);
      const r = RING * d * (ring.length > 14 ? 1 + (ring.length - 14) / 28 : 1);
      pos.set(id, { x: Math.cos(a) * r, y: Math.sin(a) * r });
    });
  }
  return pos;
}

/** "2023-05-08" from an ISO time; "?" when unknown. */
export function day(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 10) : "?";
}
