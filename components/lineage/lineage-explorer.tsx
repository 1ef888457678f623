"use client";
import { useQueries, useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import Link from "next/link";
import { useMemo, useState } from "react";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Skeleton } from "@/components/ui/skeleton";
import { errorMessage, useTRPC } from "@/lib/trpc";
import type { AppRouter } from "@/server/api/root";
import { FlowGraph, type GraphEdge, type GraphNode } from "./flow-graph";

type Neighbourhood = inferRouterOutputs<AppRouter>["record"]["neighbourhood"];
type LineageRecord = Neighbourhood["record"];

/** Records shown per opened group at a time; "next" pages through the rest. */
export const GROUP_PAGE = 25;
/** Groups this small are shown as their records straight away. */
const INLINE_GROUP = 3;

type Direction = "parents" | "children";
const groupId = (owner: string, direction: Direction, step: string) => `g:${owner}:${direction}:${step}`;
const moreId = (group: string) => `${group}:more`;

interface GraphModel {
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** What a click on a node does. */
  actions: Map<string, { kind: "record"; record: LineageRecord } | { kind: "group" | "more"; group: string; owner: string; direction: Direction; step: string; count: number }>;
}

/**
 * The lineage of one record as a readable graph at any size: it opens on the record's
 * neighbourhood — parents and children grouped by step with counts, and the rest of the path to
 * the raw sources as counts per step — and grows on click: a group opens into its records (a page
 * at a time), a record opens its own neighbourhood. Laid out left to right by dagre.
 */
export function LineageExplorer({ pipelineId, branch, recordId, hrefFor }: { pipelineId: string; branch: string; recordId: string; hrefFor: (id: string) => string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const ref = { workspaceId: workspace.id, pipelineId, branch };
  // Records whose neighbourhood is shown (the root always), and the page offset of each opened group.
  const [expanded, setExpanded] = useState<string[]>([]);
  const [opened, setOpened] = useState<Record<string, { owner: string; direction: Direction; step: string; offset: number }>>({});
  const [selected, setSelected] = useState<LineageRecord | null>(null);

  const root = useQuery(trpc.record.neighbourhood.queryOptions({ ...ref, id: recordId, limit: GROUP_PAGE }));
  // The rest of the path down (a walk over every ancestor) arrives after the graph has opened.
  const ancestry = useQuery({ ...trpc.record.ancestry.queryOptions({ ...ref, id: recordId }), staleTime: 60_000 });
  const more = useQueries({
    queries: expanded.map((id) => ({ ...trpc.record.neighbourhood.queryOptions({ ...ref, id, limit: GROUP_PAGE }), staleTime: 60_000 })),
  });
  const pages = useQueries({
    queries: Object.values(opened)
      .filter((g) => g.offset > 0)
      .map((g) => ({
        ...trpc.record.neighbourhood.queryOptions({ ...ref, id: g.owner, direction: g.direction, step: g.step, offset: g.offset, limit: GROUP_PAGE }),
        staleTime: 60_000,
      })),
  });

  const model = useMemo<GraphModel | null>(() => {
    if (!root.data) return null;
    const hoods = new Map<string, Neighbourhood>([[recordId, root.data]]);
    expanded.forEach((id, i) => {
      const d = more[i]?.data;
      if (d) hoods.set(id, d);
    });
    const paged = new Map<string, Neighbourhood["groups"][number]>();
    Object.entries(opened)
      .filter(([, g]) => g.offset > 0)
      .forEach(([key], i) => {
        const g = pages[i]?.data?.groups[0];
        if (g) paged.set(key, g);
      });

    const nodes = new Map<string, GraphNode>();
    const edges = new Map<string, GraphEdge>();
    const actions: GraphModel["actions"] = new Map();
    const addEdge = (from: string, to: string) => edges.set(`${from}->${to}`, { from, to });
    const addRecord = (r: LineageRecord) => {
      if (nodes.has(r.id)) return;
      const isRoot = r.id === recordId;
      const open = isRoot || hoods.has(r.id);
      nodes.set(r.id, {
        id: r.id,
        kind: r.parentCount === 0 ? "source" : "record",
        title: r.step,
        subtitle: isRoot ? "this record" : r.onBranch === false ? "off branch" : open ? "open" : undefined,
        highlight: isRoot || selected?.id === r.id,
        testId: `lineage-node-${r.step}`,
        body: (
          <span className="block">
            <span className="line-clamp-2">{r.preview}</span>
            <span className="mt-1 block text-[10px]">
              {r.parentCount} sources · {r.childCount} derived
            </span>
          </span>
        ),
      });
      actions.set(r.id, { kind: "record", record: r });
    };

    for (const [owner, hood] of hoods) {
      addRecord(hood.record);
      for (const g of hood.groups) {
        const key = groupId(owner, g.direction, g.step);
        const state = opened[key];
        const link = (id: string) => (g.direction === "parents" ? addEdge(id, owner) : addEdge(owner, id));
        if (!state && g.count > INLINE_GROUP) {
          nodes.set(key, {
            id: key,
            kind: "step",
            title: g.step,
            subtitle: g.direction === "parents" ? "sources" : "derived",
            testId: `lineage-node-${g.step}`,
            body: (
              <span data-testid="lineage-group" data-step={g.step} data-direction={g.direction}>
                <b className="text-foreground">{g.count.toLocaleString()}</b> records · click to show them
              </span>
            ),
          });
          actions.set(key, { kind: "group", group: key, owner, direction: g.direction, step: g.step, count: g.count });
          link(key);
          continue;
        }
        const offset = state?.offset ?? 0;
        const records = offset > 0 ? (paged.get(key)?.records ?? []) : g.records;
        for (const r of records) {
          addRecord(r);
          link(r.id);
        }
        const rest = g.count - offset - records.length;
        if (rest > 0 || offset > 0) {
          const id = moreId(key);
          nodes.set(id, {
            id,
            kind: "step",
            title: `${g.step}: ${offset + 1}–${offset + records.length} of ${g.count.toLocaleString()}`,
            testId: "lineage-more",
            body: <span>{rest > 0 ? `next ${Math.min(GROUP_PAGE, rest)} →` : "back to the first"}</span>,
          });
          actions.set(id, { kind: "more", group: key, owner, direction: g.direction, step: g.step, count: g.count });
          link(id);
        }
      }
    }

    // The rest of the path to the raw sources, as counts per step, chained by depth.
    const byDepth = new Map<number, string[]>();
    for (const a of ancestry.data ?? []) {
      const id = `a:${a.step}`;
      nodes.set(id, {
        id,
        kind: "source",
        title: a.step,
        subtitle: `${a.depth} hops`,
        testId: `lineage-node-${a.step}`,
        body: (
          <span data-testid="lineage-ancestors" data-step={a.step}>
            <b className="text-foreground">{a.count.toLocaleString()}</b> records further down · open a source to walk there
          </span>
        ),
      });
      byDepth.set(a.depth, [...(byDepth.get(a.depth) ?? []), id]);
    }
    const parentGroups = [...nodes.keys()].filter((id) => id.startsWith(`g:${recordId}:parents:`) || root.data!.groups.some((g) => g.direction === "parents" && g.records.some((r) => r.id === id)));
    for (const [depth, ids] of byDepth) {
      const below = depth === 2 ? parentGroups : (byDepth.get(depth - 1) ?? []);
      for (const id of ids) for (const b of below) addEdge(id, b);
    }
    return { nodes: [...nodes.values()], edges: [...edges.values()], actions };
  }, [root.data, ancestry.data, more, pages, expanded, opened, recordId, selected]);

  if (root.isPending) return <Skeleton className="h-64 w-full" />;
  if (root.isError) return <p className="text-sm text-destructive">{errorMessage(root.error)}</p>;
  if (!model || root.data.groups.length === 0) {
    return <p className="text-sm text-muted-foreground">A leaf with nothing made from it yet: raw source data with no sources of its own.</p>;
  }

  const onNodeClick = (id: string) => {
    const action = model.actions.get(id);
    if (!action) return;
    if (action.kind === "record") {
      setSelected(action.record);
      if (action.record.id !== recordId && (action.record.parentCount > 0 || action.record.childCount > 0)) {
        setExpanded((list) => (list.includes(action.record.id) ? list.filter((x) => x !== action.record.id) : [...list, action.record.id]));
      }
      return;
    }
    const { group, owner, direction, step, count } = action;
    setOpened((o) => {
      const current = o[group]?.offset ?? 0;
      const offset = action.kind === "group" ? 0 : current + GROUP_PAGE < count ? current + GROUP_PAGE : 0;
      return { ...o, [group]: { owner, direction, step, offset } };
    });
  };

  return (
    <div className="space-y-2">
      <FlowGraph nodes={model.nodes} edges={model.edges} height={460} onNodeClick={onNodeClick} testId="lineage-graph" focusId={recordId} />
      <div className="flex flex-wrap items-center gap-2 text-xs text-muted-foreground" data-testid="lineage-status">
        <span>
          {model.nodes.length} nodes shown · sources on the left, what was made from this record on the right. Click a group to list its records, a record to open
          its own neighbourhood.
        </span>
        {expanded.length || Object.keys(opened).length ? (
          <Button
            size="sm"
            variant="ghost"
            onClick={() => {
              setExpanded([]);
              setOpened({});
              setSelected(null);
            }}
          >
            Collapse all
          </Button>
        ) : null}
      </div>
      {selected ? (
        <div className="flex items-center gap-2 rounded-md border px-3 py-2 text-sm" data-testid="lineage-selected">
          <Badge variant="secondary">{selected.step}</Badge>
          <span className="min-w-0 flex-1 truncate text-muted-foreground">{selected.preview}</span>
          <Link className="shrink-0 text-primary hover:underline" href={hrefFor(selected.id)} data-testid="lineage-open-record">
            Open record →
          </Link>
        </div>
      ) : null}
    </div>
  );
}
