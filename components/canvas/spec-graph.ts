/**
 * The canvas edits the pipeline spec directly: these pure functions map a (possibly invalid,
 * half-edited) spec to React Flow nodes/edges and apply graph edits back to the spec. There is
 * no second model of the pipeline; node positions live in a separate layout object that is
 * saved beside the spec and never hashed.
 *
 * Node ids are `<kind>:<name>` (`step:summaries`); a duplicate name (while editing) gets `#<index>`.
 */
import dagre from "@dagrejs/dagre";
import type { Problem } from "@/server/pipeline/spec";

export type NodeKind = "source" | "step" | "output";
export type DraftNode = Record<string, unknown> & { name?: unknown };
/** A spec as the canvas holds it: the spec JSON, possibly invalid while being edited. */
export interface DraftSpec {
  version?: 1;
  sources: DraftNode[];
  steps: DraftNode[];
  outputs: DraftNode[];
}
export interface XY {
  x: number;
  y: number;
}
/** Stored beside the spec (`layout` of a pipeline version): node id → position. */
export interface CanvasLayout {
  positions: Record<string, XY>;
}

export interface NodeRef {
  kind: NodeKind;
  index: number;
}

export interface SpecNodeData extends Record<string, unknown> {
  kind: NodeKind;
  index: number;
  name: string;
  /** step type, source format or output surface */
  type: string;
  node: DraftNode;
  problems: Problem[];
}

export interface GraphNode {
  id: string;
  type: NodeKind;
  position: XY;
  data: SpecNodeData;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  data: { invalid: boolean; fromIndex: number | null };
}

export const SECTION = { source: "sources", step: "steps", output: "outputs" } as const satisfies Record<NodeKind, keyof DraftSpec>;
const KIND_OF_SECTION: Record<string, NodeKind> = { sources: "source", steps: "step", outputs: "output" };
export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 72;

/** Step types whose `from` is one name. */
export const SINGLE_INPUT = ["transform", "split", "aggregate", "fold", "consolidate"];
/** Step types whose `from` is a list: merge, and the graph steps (relations reads the text and its entities). */
export const LIST_INPUT = ["merge", "entities", "relations", "insights"];

const str = (v: unknown): string => (typeof v === "string" ? v : "");

export function emptySpec(): DraftSpec {
  return { version: 1, sources: [], steps: [], outputs: [] };
}

/** Normalize whatever the server returned into a DraftSpec (deep copy). */
export function toDraft(spec: unknown): DraftSpec {
  const s = (spec ?? {}) as Partial<DraftSpec>;
  const copy = (v: unknown) => (Array.isArray(v) ? (structuredClone(v) as DraftNode[]) : []);
  return { version: 1, sources: copy(s.sources), steps: copy(s.steps), outputs: copy(s.outputs) };
}

export function nodeList(spec: DraftSpec, kind: NodeKind): DraftNode[] {
  return spec[SECTION[kind]];
}

export function nodeType(kind: NodeKind, node: DraftNode): string {
  if (kind === "source") return str(node.format);
  if (kind === "step") return str(node.type);
  return str(node.surface);
}

/** Ids of every node, in spec order, unique even when names collide. */
export function nodeIds(spec: DraftSpec): Map<string, NodeRef> {
  const ids = new Map<string, NodeRef>();
  for (const kind of ["source", "step", "output"] as const) {
    nodeList(spec, kind).forEach((node, index) => {
      let id = `${kind}:${str(node.name)}`;
      if (ids.has(id)) id = `${id}#${index}`;
      ids.set(id, { kind, index });
    });
  }
  return ids;
}

export function idOf(spec: DraftSpec, ref: NodeRef): string | undefined {
  for (const [id, r] of nodeIds(spec)) if (r.kind === ref.kind && r.index === ref.index) return id;
  return undefined;
}

export function refOf(spec: DraftSpec, id: string): NodeRef | undefined {
  return nodeIds(spec).get(id);
}

export function getNode(spec: DraftSpec, ref: NodeRef): DraftNode | undefined {
  return nodeList(spec, ref.kind)[ref.index];
}

/** `from` as a list of names (whatever shape it currently has). */
export function fromNames(node: DraftNode): string[] {
  const from = node.from;
  if (typeof from === "string") return from ? [from] : [];
  if (Array.isArray(from)) return from.filter((f): f is string => typeof f === "string");
  return [];
}

/** Problems attached to each node id (by their path into the spec). */
export function problemsByNode(spec: DraftSpec, problems: readonly Problem[]): Map<string, Problem[]> {
  const out = new Map<string, Problem[]>();
  for (const p of problems) {
    const kind = KIND_OF_SECTION[String(p.path[0])];
    if (!kind || typeof p.path[1] !== "number") continue;
    const id = idOf(spec, { kind, index: p.path[1] });
    if (!id) continue;
    out.set(id, [...(out.get(id) ?? []), p]);
  }
  return out;
}

/** The spec as a graph: typed nodes, edges from each input named in `from` to its reader. */
export function specToGraph(
  spec: DraftSpec,
  layout?: CanvasLayout | null,
  problems: readonly Problem[] = [],
): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const ids = nodeIds(spec);
  const byProblem = problemsByNode(spec, problems);
  const nodes: GraphNode[] = [];
  const nameToId = new Map<string, string>();
  for (const [id, ref] of ids) {
    const node = getNode(spec, ref)!;
    const name = str(node.name);
    if (ref.kind !== "output" && name && !nameToId.has(name)) nameToId.set(name, id);
    nodes.push({
      id,
      type: ref.kind,
      position: layout?.positions?.[id] ?? { x: 0, y: 0 },
      data: { kind: ref.kind, index: ref.index, name, type: nodeType(ref.kind, node), node, problems: byProblem.get(id) ?? [] },
    });
  }
  const edges: GraphEdge[] = [];
  for (const n of nodes) {
    if (n.data.kind === "source") continue;
    const from = n.data.node.from;
    const list = Array.isArray(from);
    fromNames(n.data.node).forEach((name, i) => {
      const source = nameToId.get(name);
      if (!source) return;
      const invalid = n.data.problems.some(
        (p) => p.path[2] === "from" && (p.path.length === 3 || p.path[3] === i),
      );
      edges.push({ id: `${source}->${n.id}#${i}`, source, target: n.id, data: { invalid, fromIndex: list ? i : null } });
    });
  }
  return { nodes, edges };
}

/** True when some node has no stored position. */
export function needsLayout(spec: DraftSpec, layout?: CanvasLayout | null): boolean {
  if (!layout?.positions) return true;
  return [...nodeIds(spec).keys()].some((id) => !layout.positions[id]);
}

/** Top-to-bottom dagre layout of the whole graph (sources on top, outputs at the bottom). */
export function autoLayout(spec: DraftSpec): CanvasLayout {
  const { nodes, edges } = specToGraph(spec);
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "TB", nodesep: 40, ranksep: 50, marginx: 20, marginy: 20 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of nodes) g.setNode(n.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const e of edges) g.setEdge(e.source, e.target);
  dagre.layout(g);
  const positions: Record<string, XY> = {};
  for (const n of nodes) {
    const p = g.node(n.id) as { x: number; y: number } | undefined;
    positions[n.id] = p ? { x: Math.round(p.x - NODE_WIDTH / 2), y: Math.round(p.y - NODE_HEIGHT / 2) } : { x: 0, y: 0 };
  }
  return { positions };
}

// ---------------------------------------------------------------------------------------------
// Edits (all pure: they return a new spec)

function withList(spec: DraftSpec, kind: NodeKind, fn: (list: DraftNode[]) => DraftNode[]): DraftSpec {
  return { ...spec, [SECTION[kind]]: fn([...nodeList(spec, kind)]) };
}

export function allNames(spec: DraftSpec): Set<string> {
  return new Set([...spec.sources, ...spec.steps, ...spec.outputs].map((n) => str(n.name)).filter(Boolean));
}

/** `base`, or `base-2`, `base-3`, ... : a name not used by any source, step or output. */
export function uniqueName(spec: DraftSpec, base: string): string {
  const names = allNames(spec);
  const clean = base.toLowerCase().replace(/[^a-z0-9_-]+/g, "-").replace(/^[^a-z]+/, "") || "node";
  if (!names.has(clean)) return clean;
  for (let i = 2; ; i++) if (!names.has(`${clean}-${i}`)) return `${clean}-${i}`;
}

/** Append a node (its name made unique). Returns the new spec and the new node's ref. */
export function addNode(spec: DraftSpec, kind: NodeKind, node: DraftNode): { spec: DraftSpec; ref: NodeRef } {
  const named = { ...structuredClone(node), name: uniqueName(spec, str(node.name) || kind) };
  const index = nodeList(spec, kind).length;
  return { spec: withList(spec, kind, (l) => [...l, named]), ref: { kind, index } };
}

/** Remove a node and every reference to it in `from` (single inputs become unset: invalid until reconnected). */
export function removeNode(spec: DraftSpec, ref: NodeRef): DraftSpec {
  const node = getNode(spec, ref);
  if (!node) return spec;
  const name = str(node.name);
  let next = withList(spec, ref.kind, (l) => l.filter((_, i) => i !== ref.index));
  if (ref.kind !== "output" && name && !nodeList(next, "source").concat(nodeList(next, "step")).some((n) => n.name === name)) {
    next = mapReaders(next, (n) => removeInput(n, name));
  }
  return next;
}

function mapReaders(spec: DraftSpec, fn: (node: DraftNode) => DraftNode): DraftSpec {
  return { ...spec, steps: spec.steps.map(fn), outputs: spec.outputs.map(fn) };
}

function removeInput(node: DraftNode, name: string): DraftNode {
  if (typeof node.from === "string") {
    if (node.from !== name) return node;
    const rest = { ...node };
    delete rest.from;
    return rest;
  }
  if (Array.isArray(node.from) && node.from.includes(name)) return { ...node, from: node.from.filter((f) => f !== name) };
  return node;
}

/**
 * Set fields of a node. `undefined` removes the field (the strict schema rejects nulls and unknown
 * keys, so unset fields are left out). A name is never set here: renames go through `renameNode`,
 * which checks collisions and rewrites the readers once, on commit.
 */
export function updateNode(spec: DraftSpec, ref: NodeRef, patch: Record<string, unknown>): DraftSpec {
  const node = getNode(spec, ref);
  if (!node) return spec;
  const updated: DraftNode = { ...node };
  for (const [k, v] of Object.entries(patch)) {
    if (k === "name") continue;
    if (v === undefined) delete updated[k];
    else updated[k] = v;
  }
  return withList(spec, ref.kind, (l) => l.map((n, i) => (i === ref.index ? updated : n)));
}

export type RenameResult = { ok: true; spec: DraftSpec; oldId: string; newId: string } | { ok: false; error: string };

/**
 * Rename a node and rewrite every `from` that read its old name, as one edit. Refuses a name
 * another source, step or output already has (a rename must never merge two nodes' readers) and
 * an empty name. Called when the user commits the name (blur / Enter), never per keystroke.
 */
export function renameNode(spec: DraftSpec, ref: NodeRef, rawName: string): RenameResult {
  const node = getNode(spec, ref);
  if (!node) return { ok: false, error: "That node no longer exists." };
  const newName = rawName.trim();
  const oldName = str(node.name);
  const oldId = idOf(spec, ref)!;
  if (!newName) return { ok: false, error: "A name is required." };
  if (newName === oldName) return { ok: true, spec, oldId, newId: oldId };
  for (const kind of ["source", "step", "output"] as const) {
    const i = nodeList(spec, kind).findIndex((n, index) => str(n.name) === newName && !(kind === ref.kind && index === ref.index));
    if (i >= 0) return { ok: false, error: `"${newName}" is already the name of the ${kind} at ${SECTION[kind]}[${i}]; pick another name.` };
  }
  let next = withList(spec, ref.kind, (l) => l.map((n, i) => (i === ref.index ? { ...n, name: newName } : n)));
  if (ref.kind !== "output" && oldName) {
    next = mapReaders(next, (n) => {
      if (typeof n.from === "string") return n.from === oldName ? { ...n, from: newName } : n;
      if (Array.isArray(n.from)) return { ...n, from: n.from.map((f) => (f === oldName ? newName : f)) };
      return n;
    });
  }
  return { ok: true, spec: next, oldId, newId: idOf(next, ref)! };
}

/** Whether `target` reads a list of inputs (merge steps and outputs). */
export function takesList(kind: NodeKind, node: DraftNode): boolean {
  return kind === "output" || (typeof node.type === "string" && LIST_INPUT.includes(node.type));
}

/**
 * Connect an edge `sourceId → targetId`: sets the target's `from`. Single-input steps
 * (transform, split, aggregate, fold, consolidate) get the name as a string (replacing their
 * input); merge, graph steps (entities, relations, insights) and outputs get it appended to their list.
 */
export function connect(spec: DraftSpec, sourceId: string, targetId: string): DraftSpec {
  const src = refOf(spec, sourceId);
  const dst = refOf(spec, targetId);
  if (!src || !dst || src.kind === "output" || dst.kind === "source") return spec;
  if (src.kind === dst.kind && src.index === dst.index) return spec;
  const name = str(getNode(spec, src)?.name);
  const target = getNode(spec, dst)!;
  if (!name) return spec;
  if (takesList(dst.kind, target)) {
    const current = fromNames(target);
    if (current.includes(name)) return spec;
    return updateNode(spec, dst, { from: [...current, name] });
  }
  return updateNode(spec, dst, { from: name });
}

/** Remove the edge `sourceId → targetId` (drop that name from the target's `from`). */
export function disconnect(spec: DraftSpec, sourceId: string, targetId: string): DraftSpec {
  const src = refOf(spec, sourceId);
  const dst = refOf(spec, targetId);
  if (!src || !dst) return spec;
  const name = str(getNode(spec, src)?.name);
  return withList(spec, dst.kind, (l) => l.map((n, i) => (i === dst.index ? removeInput(n, name) : n)));
}

/** A copy of a node for pasting: same fields, a fresh unique name (`summaries-copy`, `summaries-copy-2`, ...). */
export function pasteNode(spec: DraftSpec, kind: NodeKind, node: DraftNode): { spec: DraftSpec; ref: NodeRef } {
  return addNode(spec, kind, { ...node, name: `${str(node.name) || kind}-copy` });
}

/** Move a position entry when a node is renamed (ids contain the name). */
export function renameInLayout(layout: CanvasLayout, oldId: string, newId: string): CanvasLayout {
  if (oldId === newId || !layout.positions[oldId]) return layout;
  const { [oldId]: pos, ...rest } = layout.positions;
  return { positions: { ...rest, [newId]: pos! } };
}

/** The first spot at or right of `want` that does not overlap a placed node. */
export function freeSpot(layout: CanvasLayout, want: XY): XY {
  const taken = Object.values(layout.positions);
  const overlaps = (p: XY) => taken.some((t) => Math.abs(t.x - p.x) < NODE_WIDTH + 10 && Math.abs(t.y - p.y) < NODE_HEIGHT + 10);
  const spot = { ...want };
  for (let i = 0; i < 50 && overlaps(spot); i++) spot.x += NODE_WIDTH + 30;
  return spot;
}
