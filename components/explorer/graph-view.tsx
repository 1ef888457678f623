"use client";
import { useQueries, useQuery } from "@tanstack/react-query";
import { Network, Search } from "lucide-react";
import Link from "next/link";
import { useDeferredValue, useMemo, useState } from "react";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { PageHeader } from "@/components/shell/page-header";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Skeleton } from "@/components/ui/skeleton";
import { errorMessage, useTRPC } from "@/lib/trpc";
import { useUrlState } from "./explorer";
import { BeliefLine, BeliefSources } from "./graph-belief";
import { GraphCanvas } from "./graph-canvas";
import { InsightsList } from "./graph-insights";
import { day, hasEntitiesStep, mergeNeighbourhoods, type GraphEntity } from "./graph-model";
import { BeliefTimeline } from "./graph-timeline";

const NEIGHBOURS = 12;

/** Pick an entity: the most mentioned ones, or those whose name or alias contains what is typed. */
function EntityPicker({ target, scope, centre, onPick }: { target: { workspaceId: string; pipelineId: string; branch: string }; scope: string; centre: string; onPick: (e: GraphEntity) => void }) {
  const trpc = useTRPC();
  const [q, setQ] = useState("");
  const deferred = useDeferredValue(q.trim());
  const list = useQuery({ ...trpc.graph.entities.queryOptions({ ...target, ...(deferred ? { q: deferred } : {}), ...(scope ? { scope } : {}), limit: 30 }), placeholderData: (prev) => prev });
  return (
    <div className="flex min-h-0 flex-col rounded-xl border">
      <div className="relative border-b p-2">
        <Search className="pointer-events-none absolute top-4.5 left-4.5 size-4 text-muted-foreground" />
        <Input data-testid="entity-search" className="pl-8" placeholder="Find an entity: a person, a place…" value={q} onChange={(e) => setQ(e.target.value)} />
      </div>
      <div className="max-h-[30rem] flex-1 space-y-1 overflow-auto p-2">
        {list.isPending ? (
          <Skeleton className="h-24 w-full" />
        ) : list.isError ? (
          <p className="p-2 text-sm text-destructive">{errorMessage(list.error)}</p>
        ) : list.data.entities.length === 0 ? (
          <p className="p-2 text-sm text-muted-foreground">{deferred ? `No entity matches “${deferred}”.` : "No entities yet: run the pipeline to build the graph."}</p>
        ) : (
          <>
            <p className="px-1 text-xs text-muted-foreground">
              {list.data.entities.length < list.data.total ? `${list.data.entities.length} of ${list.data.total}` : list.data.total} entities
            </p>
            {list.data.entities.map((e) => (
              <button
                key={e.id}
                type="button"
                data-testid="entity-option"
                data-name={e.name}
                onClick={() => onPick(e)}
                className={cn("w-full rounded-lg border px-2 py-1.5 text-left text-sm hover:bg-muted/50", centre === e.id && "border-primary bg-primary/5")}
              >
                <div className="flex items-center gap-2">
                  <span className="truncate font-medium">{e.name}</span>
                  <Badge variant="secondary" className="ml-auto">
                    {e.type}
                  </Badge>
                </div>
                <div className="truncate text-xs text-muted-foreground">
                  {e.mentions} mentions{e.aliases.length ? ` · also ${e.aliases.join(", ")}` : ""} · {e.scope || "(no scope)"}
                </div>
              </button>
            ))}
          </>
        )}
      </div>
    </div>
  );
}

/**
 * The explorer's Graph view: pick an entity, see its neighbourhood (one hop, a dozen neighbours;
 * click a node to expand it, double-click to make it the centre), its beliefs over time, and the
 * pipeline's insights. An edge or a belief opens its sources.
 */
export function GraphView({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const { params, set } = useUrlState();
  const branch = params.get("branch") ?? "main";
  const scope = params.get("scope") ?? "";
  const centre = params.get("entity") ?? "";
  const belief = params.get("belief");
  const panel = params.get("panel") ?? "timeline";
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  const target = { workspaceId: workspace.id, pipelineId, branch };
  const [expanded, setExpanded] = useState<{ centre: string; ids: string[] }>({ centre, ids: [] });
  const expandedIds = expanded.centre === centre ? expanded.ids : [];
  const [selectedNode, setSelectedNode] = useState<string | null>(null);
  const [selectedEdge, setSelectedEdge] = useState<string | null>(null);

  const pipeline = useQuery(trpc.pipeline.get.queryOptions({ workspaceId: workspace.id, pipelineId, branch }));
  const enabled = hasEntitiesStep(pipeline.data?.version.spec);
  const hood = useQuery({ ...trpc.graph.entity.queryOptions({ ...target, entityId: centre, limit: NEIGHBOURS, ...(scope ? { scope } : {}) }), enabled: enabled && !!centre });
  // `combine` keeps the array stable while the results are, so the merge below reruns only on new data.
  const moreData = useQueries({
    queries: expandedIds.map((id) => ({ ...trpc.graph.entity.queryOptions({ ...target, entityId: id, limit: NEIGHBOURS, ...(scope ? { scope } : {}) }), staleTime: 60_000 })),
    combine: (results) => results.flatMap((r) => (r.data ? [r.data] : [])),
  });
  const graph = useMemo(() => (hood.data ? mergeNeighbourhoods(hood.data, moreData) : null), [hood.data, moreData]);
  const edge = selectedEdge && graph ? graph.edges.find((e) => e.id === selectedEdge) : undefined;

  const pick = (id: string) => {
    setSelectedNode(null);
    setSelectedEdge(null);
    set({ entity: id, belief: null, panel: "timeline" });
  };
  const selectBelief = (id: string) => set({ belief: id }, true);

  const title = pipeline.data ? `${pipeline.data.pipeline.name} · graph` : "Graph";
  const header = (
    <>
      <PageHeader
        title={title}
        description="Entities, their beliefs over time and the insights drawn from them. Every edge opens the conversations it was read from."
        actions={
          <Button asChild variant="outline">
            <Link href={`${base}/explore?branch=${encodeURIComponent(branch)}`}>Search</Link>
          </Button>
        }
      />
      <PipelineTabs pipelineId={pipelineId} />
    </>
  );
  if (pipeline.isPending) return header;
  if (pipeline.isError) return <>{header}<p className="text-sm text-destructive">{errorMessage(pipeline.error)}</p></>;
  if (!enabled) {
    return (
      <>
        {header}
        <EmptyState
          icon={Network}
          title="No entity graph in this pipeline"
          description="The Graph view draws the records of an entities step (and its relations and insights). Start from the synapsis template, or add an entities step on the canvas."
        />
      </>
    );
  }

  return (
    <>
      {header}
      <div className="mb-3 flex flex-wrap items-end gap-2">
        <label className="flex flex-col gap-1 text-xs text-muted-foreground">
          Scope prefix
          <Input
            data-testid="graph-scope"
            className="h-9 w-48"
            placeholder="locomo:conv-26"
            defaultValue={scope}
            key={scope}
            onBlur={(e) => e.target.value.trim() !== scope && set({ scope: e.target.value.trim() || null, entity: null, belief: null }, true)}
          />
        </label>
        {hood.data ? (
          <p className="pb-2 text-xs text-muted-foreground" data-testid="graph-summary">
            {graph!.nodes.length} nodes · {graph!.edges.length} edges{graph!.truncated ? " · capped: click a node to expand" : ""} · {hood.data.entity.name} seen {day(hood.data.entity.firstSeen)} – {day(hood.data.entity.lastSeen)}
          </p>
        ) : null}
      </div>
      <div className="grid gap-3 lg:grid-cols-[16rem_1fr_24rem]">
        <EntityPicker target={target} scope={scope} centre={centre} onPick={(e) => pick(e.id)} />

        <section className="min-w-0" data-testid="graph-section">
          {!centre ? (
            <EmptyState icon={Network} title="Pick an entity" description="Its neighbourhood appears here: the entities it is linked to by beliefs, one hop out. Click a node to expand it." />
          ) : hood.isPending ? (
            <Skeleton className="h-[34rem] w-full" />
          ) : hood.isError ? (
            <p className="text-sm text-destructive">{errorMessage(hood.error)}</p>
          ) : (
            <>
              <GraphCanvas
                graph={graph!}
                centreId={centre}
                selectedNode={selectedNode}
                selectedEdge={selectedEdge}
                onNodeClick={(id, kind) => {
                  setSelectedNode(id);
                  if (kind === "entity" && id !== centre && !expandedIds.includes(id)) setExpanded({ centre, ids: [...expandedIds, id] });
                }}
                onEdgeClick={(id) => {
                  setSelectedEdge(id);
                  set({ panel: "edge" }, true);
                }}
              />
              {selectedNode && selectedNode !== centre && graph!.nodes.find((n) => n.id === selectedNode)?.kind === "entity" ? (
                <div className="mt-2 flex items-center gap-2 text-sm">
                  <span className="text-muted-foreground">Selected:</span>
                  <span className="font-medium">{graph!.nodes.find((n) => n.id === selectedNode)?.label}</span>
                  <Button size="sm" variant="outline" data-testid="make-centre" onClick={() => pick(selectedNode)}>
                    Centre on it
                  </Button>
                </div>
              ) : null}
            </>
          )}
        </section>

        <section className="flex min-w-0 flex-col gap-3">
          <div className="rounded-xl border">
            <div className="flex gap-1 border-b px-2 py-1.5 text-xs">
              {(["timeline", "edge", "insights"] as const).map((p) => (
                <button
                  key={p}
                  type="button"
                  data-testid={`graph-panel-${p}`}
                  onClick={() => set({ panel: p }, true)}
                  className={cn("rounded px-2 py-1", panel === p ? "bg-muted font-medium text-foreground" : "text-muted-foreground hover:text-foreground")}
                >
                  {p === "timeline" ? "Belief timeline" : p === "edge" ? "Edge" : "Insights"}
                </button>
              ))}
            </div>
            <div className="max-h-[30rem] overflow-auto p-2">
              {panel === "insights" ? (
                <InsightsList target={target} scope={scope} selectedBelief={belief} onSelectBelief={selectBelief} onSelectEntity={pick} />
              ) : panel === "edge" ? (
                !edge ? (
                  <p className="p-2 text-sm text-muted-foreground">Click an edge of the graph to list its beliefs.</p>
                ) : (
                  <div className="space-y-1" data-testid="edge-beliefs">
                    <p className="text-xs text-muted-foreground">
                      {edge.predicate} · {edge.count} belief{edge.count === 1 ? "" : "s"}, {edge.current} current · {edge.weight} source{edge.weight === 1 ? "" : "s"}
                      {edge.count > edge.beliefIds.length ? ` · the ${edge.beliefIds.length} newest listed` : ""}
                    </p>
                    {edge.beliefIds
                      .map((id) => graph!.beliefs.get(id))
                      .filter((b) => !!b)
                      .map((b) => (
                        <BeliefLine key={b.id} belief={b} active={belief === b.id} onClick={() => selectBelief(b.id)} />
                      ))}
                  </div>
                )
              ) : !hood.data ? (
                <p className="p-2 text-sm text-muted-foreground">Pick an entity to see its beliefs over time.</p>
              ) : (
                <BeliefTimeline beliefs={hood.data.timeline} total={hood.data.timelineTotal} selected={belief} onSelect={selectBelief} />
              )}
            </div>
          </div>
          {belief ? (
            <div className="rounded-xl border p-3">
              <BeliefSources key={belief} target={target} beliefId={belief} base={base} onSelectBelief={selectBelief} />
            </div>
          ) : null}
        </section>
      </div>
    </>
  );
}
