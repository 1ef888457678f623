"use client";
import { useQueries, useQuery } from "@tanstack/react-query";
import { ChevronRight, Layers, Network, Search } from "lucide-react";
import Link from "next/link";
import { usePathname, useSearchParams } from "next/navigation";
import { useState } from "react";
import { AddToQuestionSet } from "@/components/evals/add-to-question-set";
import { PipelineTabs } from "@/components/overview/pipeline-tabs";
import { PageHeader } from "@/components/shell/page-header";
import { useWorkspace } from "@/components/shell/workspace-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { EmptyState } from "@/components/ui/empty-state";
import { Input } from "@/components/ui/input";
import { Skeleton } from "@/components/ui/skeleton";
import { errorMessage, useTRPC, type RouterOutputs } from "@/lib/trpc";
import { describePath } from "@/server/search/evidence-path";
import { excerpt, recordLabel, type RecordSummary } from "./api";
import { hasEntitiesStep } from "./graph-model";
import { Highlight } from "./highlight";
import { MediaOriginCard } from "./media-origin";
import { DeletedMemoriesPanel } from "./memory-history";

export const MODES = ["fts", "semantic", "hybrid", "graph"] as const;

type Spec = RouterOutputs["pipeline"]["get"]["version"]["spec"];

/** Steps a search output indexes, in spec order (lowest altitude first). */
export function indexedSteps(spec: Pick<Spec, "sources" | "steps" | "outputs"> | undefined): string[] {
  if (!spec) return [];
  const set = new Set<string>();
  for (const o of spec.outputs) if (o.surface === "search") for (const f of Array.isArray(o.from) ? o.from : [o.from]) set.add(f);
  const order = [...spec.sources.map((s) => s.name), ...spec.steps.map((s) => s.name)];
  return order.filter((n) => set.has(n));
}

/**
 * Page state lives in the URL, and every control reads it from there. Writes merge onto the URL as
 * it is at that moment (`window.location`), not as of the last render, so two quick changes
 * (Altitude, then Mode) both land; the native history API updates `useSearchParams` without a
 * server round trip, and back/forward restore every control.
 *
 * Next applies a history write to `useSearchParams` in a transition, after the event: a controlled
 * checkbox rendered from it would be reset by React until then (and a click would not show). So
 * the params just written are shown at once, until the router's own params move on.
 */
export function useUrlState() {
  const pathname = usePathname();
  const routerParams = useSearchParams();
  const [written, setWritten] = useState<{ over: string; params: URLSearchParams } | null>(null);
  const current = routerParams.toString();
  // Once the router has moved on (caught up, or back/forward), the write is history: forget it, so
  // that returning to the URL it was written over shows that URL.
  if (written && written.over !== current) setWritten(null);
  const params = written && written.over === current ? written.params : routerParams;
  const set = (patch: Record<string, string | null | undefined>, replace = false) => {
    const next = new URLSearchParams(window.location.search);
    for (const [k, v] of Object.entries(patch)) {
      if (v == null || v === "") next.delete(k);
      else next.set(k, v);
    }
    setWritten({ over: current, params: next });
    const url = `${pathname}?${next.toString()}`;
    if (replace) window.history.replaceState(null, "", url);
    else window.history.pushState(null, "", url);
  };
  return { params, set };
}

export function Explorer({ pipelineId }: { pipelineId: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  const { params, set } = useUrlState();
  const branch = params.get("branch") ?? "main";
  const q = params.get("q") ?? "";
  const mode = params.get("mode") ?? "hybrid";
  const step = params.get("step") ?? "";
  const scope = params.get("scope") ?? "";
  const exact = params.get("exact") === "1";
  const trail = (params.get("trail") ?? "").split(",").filter(Boolean);
  const src = params.get("src");
  const view = params.get("view") === "leaves" ? "leaves" : "sources";
  const base = `/w/${workspace.slug}/pipelines/${pipelineId}`;
  const [draft, setDraft] = useState(q);
  const [seenQ, setSeenQ] = useState(q);
  if (seenQ !== q) {
    // The URL changed (back/forward, a shared link): show its query in the box.
    setSeenQ(q);
    setDraft(q);
  }

  const pipeline = useQuery(trpc.pipeline.get.queryOptions({ workspaceId: workspace.id, pipelineId, branch }));
  const spec = pipeline.data?.version.spec;
  const steps = indexedSteps(spec);
  const allNodes = spec ? [...spec.sources.map((s) => s.name), ...spec.steps.map((s) => s.name)] : [];

  const validMode = (MODES as readonly string[]).includes(mode) ? (mode as (typeof MODES)[number]) : "hybrid";
  const search = useQuery({
    ...trpc.search.search.queryOptions({
      workspaceId: workspace.id,
      pipelineId,
      branch,
      query: q,
      mode: validMode,
      ...(step ? { step } : {}),
      ...(scope ? { scope } : {}),
      exact,
      limit: 30,
    }),
    enabled: q.trim().length > 0,
    retry: false,
  });
  const result = search.data ?? { hits: [], notice: undefined };

  const current = trail.at(-1) ?? "";
  const ref = { workspaceId: workspace.id, pipelineId, branch };
  const sourcesQ = useQuery({ ...trpc.record.sources.queryOptions({ ...ref, id: current }), enabled: !!current && view === "sources" });
  const leavesQ = useQuery({ ...trpc.record.leaves.queryOptions({ ...ref, id: current, maxCount: 100 }), enabled: !!current && view === "leaves" });
  const children = view === "leaves" ? leavesQ : sourcesQ;
  const childList: RecordSummary[] = view === "leaves" ? (leavesQ.data?.leaves ?? []) : (sourcesQ.data ?? []);
  const selected = useQuery({ ...trpc.record.get.queryOptions({ ...ref, id: src ?? "" }), enabled: !!src });
  const trailRecords = useQueries({ queries: trail.map((id) => ({ ...trpc.record.get.queryOptions({ ...ref, id }), staleTime: 60_000 })) });

  const submit = () =>
    set({ q: draft.trim() || null, trail: null, src: null, view: null });

  return (
    <>
      <PageHeader
        title={pipeline.data ? `${pipeline.data.pipeline.name} · explore` : "Explore"}
        description="Search at an altitude, then drill down through the sources to the raw conversation."
      />
      <PipelineTabs pipelineId={pipelineId} />

      <form
        className="mb-4 flex flex-wrap items-end gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <div className="relative min-w-64 flex-1">
          <Search className="pointer-events-none absolute top-2.5 left-2.5 size-4 text-muted-foreground" />
          <Input
            data-testid="search-input"
            className="pl-8"
            placeholder="Search memory, e.g. a name, a decision, a phrase"
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
          />
        </div>
        <label className="flex flex-col gap-1 text-xs text-muted-foreground">
          Altitude
          <select
            data-testid="search-step"
            className="h-9 rounded-md border border-input bg-transparent px-2 text-sm text-foreground"
            value={step}
            onChange={(e) => set({ step: e.target.value || null, trail: null, src: null }, true)}
          >
            <option value="">All indexed (highest wins)</option>
            {steps.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
            {allNodes
              .filter((n) => !steps.includes(n))
              .map((s) => (
                <option key={s} value={s}>
                  {s} (not indexed)
                </option>
              ))}
          </select>
        </label>
        <label className="flex flex-col gap-1 text-xs text-muted-foreground">
          Mode
          <select
            data-testid="search-mode"
            className="h-9 rounded-md border border-input bg-transparent px-2 text-sm text-foreground"
            value={validMode}
            onChange={(e) => set({ mode: e.target.value }, true)}
          >
            {MODES.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col gap-1 text-xs text-muted-foreground">
          Scope prefix
          <Input
            data-testid="search-scope"
            className="h-9 w-40"
            placeholder="acme:eng"
            defaultValue={scope}
            key={scope}
            onBlur={(e) => e.target.value !== scope && set({ scope: e.target.value.trim() || null, trail: null, src: null }, true)}
          />
        </label>
        <label className="flex h-9 items-center gap-1 text-xs text-muted-foreground" title="Literal phrase in source records">
          <input type="checkbox" checked={exact} onChange={(e) => set({ exact: e.target.checked ? "1" : null }, true)} />
          exact
        </label>
        <Button type="submit" data-testid="search-submit">
          Search
        </Button>
        <Button asChild variant="outline">
          <Link href={`${base}/records?branch=${encodeURIComponent(branch)}`}>Browse records</Link>
        </Button>
        {hasEntitiesStep(spec) ? (
          <Button asChild variant="outline">
            <Link href={`${base}/explore/graph?branch=${encodeURIComponent(branch)}`} data-testid="open-graph">
              <Network /> Graph
            </Link>
          </Button>
        ) : null}
      </form>

      {(spec?.steps ?? [])
        .filter((s) => s.type === "consolidate")
        .map((s) => (
          <DeletedMemoriesPanel key={s.name} workspaceId={workspace.id} pipelineId={pipelineId} step={s.name} branch={branch} base={base} />
        ))}

      {!q ? (
        <EmptyState
          icon={Layers}
          title="Search your memory"
          description="Type a phrase and pick an altitude: monthly reflections, summaries or transcripts. Then click a result to walk down to the conversations it came from. No results yet? Run the pipeline from the overview first."
        />
      ) : (
        <div className="grid min-h-[28rem] gap-3 lg:grid-cols-3">
          {/* Column 1: results */}
          <section className="flex min-h-0 flex-col rounded-xl border" data-testid="results-column">
            <header className="border-b px-3 py-2 text-xs font-medium text-muted-foreground">
              Results {step ? `at ${step}` : "(all altitudes)"} {search.data ? `· ${result.hits.length}` : ""}
            </header>
            <div className="flex-1 space-y-2 overflow-auto p-2">
              {search.isPending ? (
                <Skeleton className="h-24 w-full" />
              ) : search.isError ? (
                <p className="p-2 text-sm text-destructive">{errorMessage(search.error)}</p>
              ) : result.hits.length === 0 ? (
                <div className="space-y-1 p-2 text-sm" data-testid="no-good-match">
                  <p className="font-medium">No good match</p>
                  <p className="text-muted-foreground">
                    {result.notice ?? "Nothing in this memory clears the relevance floor for these words. Try another altitude, other words, or fewer of them."}
                  </p>
                </div>
              ) : (
                result.hits.map((h) => (
                  <button
                    type="button"
                    key={h.id}
                    data-testid="search-result"
                    data-step={h.step}
                    onClick={() => set({ trail: h.id, src: null, view: null })}
                    className={cn(
                      "w-full rounded-lg border p-2 text-left text-sm hover:bg-muted/50",
                      trail[0] === h.id && "border-primary bg-primary/5",
                    )}
                  >
                    <div className="mb-1 flex items-center gap-2 text-xs text-muted-foreground">
                      <Badge variant="secondary">{h.step}</Badge>
                      <span className="truncate">{recordLabel(h)}</span>
                      <span className="ml-auto">{h.sourceCount} sources</span>
                    </div>
                    <div className="line-clamp-4">
                      <Highlight text={h.snippet || excerpt(h.content, q)} query={q} />
                    </div>
                    {h.score ? (
                      <div className="mt-1 text-[10px] text-muted-foreground">
                        score {h.score.fused.toFixed(3)}
                        {h.score.fts != null ? ` · fts ${h.score.fts.toFixed(3)}` : ""}
                        {h.score.semantic != null ? ` · sem ${h.score.semantic.toFixed(3)}` : ""}
                        {h.score.graph != null ? ` · graph ${h.score.graph.toFixed(3)}` : ""}
                        {h.lowerHits?.length ? ` · also matches ${h.lowerHits.length} lower` : ""}
                      </div>
                    ) : null}
                    {h.evidencePaths?.length ? (
                      <ul className="mt-1 space-y-0.5 text-[11px] text-muted-foreground" data-testid="evidence-paths">
                        {h.evidencePaths.map((p) => (
                          <li key={p.edges.map((e) => e.beliefId).join(">")} data-testid="evidence-path">
                            via {describePath(p)}
                          </li>
                        ))}
                      </ul>
                    ) : null}
                  </button>
                ))
              )}
            </div>
          </section>

          {/* Column 2: sources of the current record on the trail */}
          <section className="flex min-h-0 flex-col rounded-xl border" data-testid="source-column">
            <header className="flex flex-wrap items-center gap-1 border-b px-3 py-2 text-xs text-muted-foreground">
              {trail.length === 0 ? (
                <span>Sources</span>
              ) : (
                <>
                  {trail.map((id, i) => (
                    <span key={id} className="flex items-center gap-1">
                      {i > 0 ? <ChevronRight className="size-3" /> : null}
                      <button
                        type="button"
                        className={cn("hover:underline", i === trail.length - 1 && "font-medium text-foreground")}
                        onClick={() => set({ trail: trail.slice(0, i + 1).join(","), src: null })}
                      >
                        {trailRecords[i]?.data ? `${trailRecords[i]!.data!.step} · ${recordLabel(trailRecords[i]!.data!)}` : id.slice(0, 6)}
                      </button>
                    </span>
                  ))}
                  <span className="ml-auto flex gap-1">
                    <button
                      type="button"
                      data-testid="view-sources"
                      className={cn("rounded px-1.5", view === "sources" && "bg-muted text-foreground")}
                      onClick={() => set({ view: null, src: null }, true)}
                    >
                      sources
                    </button>
                    <button
                      type="button"
                      data-testid="view-leaves"
                      className={cn("rounded px-1.5", view === "leaves" && "bg-muted text-foreground")}
                      onClick={() => set({ view: "leaves", src: null }, true)}
                    >
                      leaves
                    </button>
                  </span>
                </>
              )}
            </header>
            <div className="flex-1 space-y-2 overflow-auto p-2">
              {!current ? (
                <p className="p-2 text-sm text-muted-foreground">Select a result to see what it was made from.</p>
              ) : children.isPending ? (
                <Skeleton className="h-24 w-full" />
              ) : children.isError ? (
                <p className="p-2 text-sm text-destructive">{errorMessage(children.error)}</p>
              ) : childList.length === 0 ? (
                <p className="p-2 text-sm text-muted-foreground">
                  This record is a leaf: raw source data, it has no sources.{" "}
                  <Link
                    className="text-primary hover:underline"
                    href={`${base}/records/${trail[trail.length - 1]}?branch=${encodeURIComponent(branch)}`}
                    data-testid="open-leaf-record"
                  >
                    Open its record page
                  </Link>
                </p>
              ) : (
                childList.map((r) => (
                  <SourceItem key={r.id} record={r} q={q} active={src === r.id} onClick={() => set({ src: r.id })} />
                ))
              )}
            </div>
          </section>

          {/* Column 3: content of the selected source */}
          <section className="flex min-h-0 min-w-0 flex-col rounded-xl border">
            <header className="flex flex-wrap items-center gap-2 border-b px-3 py-2 text-xs text-muted-foreground">
              Content
              {selected.data ? (
                <>
                  <Badge variant="secondary">{selected.data.step}</Badge>
                  <Link className="ml-auto text-primary hover:underline" href={`${base}/records/${selected.data.id}?branch=${encodeURIComponent(branch)}`} data-testid="open-record">
                    Record details
                  </Link>
                  <AddToQuestionSet recordId={selected.data.id} question={q} />
                </>
              ) : null}
            </header>
            <div className="flex-1 overflow-auto p-3">
              {!src ? (
                <p className="text-sm text-muted-foreground">Select a source to read it.</p>
              ) : selected.isPending ? (
                <Skeleton className="h-32 w-full" />
              ) : selected.isError ? (
                <p className="text-sm text-destructive">{errorMessage(selected.error)}</p>
              ) : (
                <>
                  {selected.data.sourceCount > 0 ? (
                    <Button
                      size="sm"
                      variant="outline"
                      className="mb-3"
                      data-testid="drill-down"
                      onClick={() => set({ trail: [...trail, selected.data.id].join(","), src: null, view: null })}
                    >
                      Drill into its {selected.data.sourceCount === 1 ? "source" : `${selected.data.sourceCount} sources`} <ChevronRight />
                    </Button>
                  ) : (
                    <Badge variant="outline" className="mb-3" data-testid="leaf-badge">
                      leaf · raw source
                    </Badge>
                  )}
                  <MediaOriginCard metadata={selected.data.metadata} recordId={selected.data.id} />
                  <div className="text-sm whitespace-pre-wrap" data-testid="record-content">
                    <Highlight text={selected.data.content} query={q} />
                  </div>
                </>
              )}
            </div>
          </section>
        </div>
      )}
    </>
  );
}

function SourceItem({ record, q, active, onClick }: { record: RecordSummary; q: string; active: boolean; onClick: () => void }) {
  return (
    <button
      type="button"
      data-testid="source-item"
      data-step={record.step}
      onClick={onClick}
      className={cn("w-full rounded-lg border p-2 text-left text-sm hover:bg-muted/50", active && "border-primary bg-primary/5")}
    >
      <div className="mb-1 flex items-center gap-2 text-xs text-muted-foreground">
        <Badge variant="secondary">{record.step}</Badge>
        <span className="truncate">{recordLabel(record)}</span>
        <span className="ml-auto">{record.sourceCount ? `${record.sourceCount} sources` : "leaf"}</span>
      </div>
      <div className="line-clamp-4">
        <Highlight text={excerpt(record.content, q)} query={q} />
      </div>
    </button>
  );
}
