"use client";
/**
 * The pipeline canvas: the spec as a graph (React Flow), the palette, the node inspector and the
 * versions panel, with undo history, a kept draft per branch, and saving (or, on a protected main,
 * "Save as new branch"). One component owns the edit state every part reads; the toolbar, drafts,
 * history, problems, the save dialogs and TOML are their own files.
 */
import "@xyflow/react/dist/style.css";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import {
  Background,
  Controls,
  ReactFlow,
  useReactFlow,
  type Connection,
  type Edge,
  type EdgeChange,
  type Node,
  type NodeChange,
} from "@xyflow/react";
import { useTheme } from "next-themes";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { toast } from "@/components/ui/sonner";
import type { inferRouterOutputs } from "@trpc/server";
import { errorMessage, useTRPC } from "@/lib/trpc";
import type { AppRouter } from "@/server/api/root";
import { providerProblems } from "@/server/pipeline/provider-problems";
import { parseSpec, type Problem } from "@/server/pipeline/spec";
import { NodePanel } from "./node-panel";
import { ProblemsPanel } from "./problems-panel";
import { nodeTypes } from "./nodes";
import { Palette, type PaletteItem } from "./palette";
import {
  addNode,
  autoLayout,
  connect,
  disconnect,
  getNode,
  freeSpot,
  idOf,
  NODE_HEIGHT,
  NODE_WIDTH,
  nodeIds,
  pasteNode,
  problemsByNode,
  refOf,
  removeNode,
  renameInLayout,
  renameNode,
  specToGraph,
  toDraft,
  updateNode,
  type CanvasLayout,
  type DraftNode,
  type NodeKind,
  type NodeRef,
} from "./spec-graph";
import { draftStorageKey, initialState, removeDraft, writeDraft, type CanvasDraft } from "./drafts";
import { SaveVersionDialog } from "./save-version-dialog";
import { useSpecHistory, type History } from "./spec-history";
import { SAMPLE_CONTENT } from "./template-editor";
import { CanvasSidePanel } from "./canvas-side-panel";
import { CanvasToolbar } from "./canvas-toolbar";
import { useModelSuggestions } from "./model-suggestions";
import { useCanvasKeys } from "./use-canvas-keys";
import { VersionsPanel } from "./versions-panel";

/** Zoom-to-fit stays readable: never blown up for two nodes, never below ~9 px text for many. */
const FIT_VIEW = { padding: 0.15, minZoom: 0.6, maxZoom: 1.1 } as const;

type LoadedPipeline = inferRouterOutputs<AppRouter>["pipeline"]["get"];

/** What the side panel showed before a reload (a restore reopens the versions and their diff). */
export interface Resume {
  tab: "node" | "versions";
  compare: { from: string; to: string } | null;
}

export function LoadedEditor({
  pipelineId,
  branch,
  data,
  resume,
  onReload,
}: {
  pipelineId: string;
  branch: string;
  data: LoadedPipeline;
  resume?: Resume;
  onReload: (resume?: Resume) => void;
}) {
  const { workspace } = useWorkspace();
  const canWrite = useCan("pipelines:write");
  const canWriteProtected = useCan("branches:admin");
  const canCreateBranch = useCan("branches:write");
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const { resolvedTheme } = useTheme();
  const rf = useReactFlow();
  const draftKey = draftStorageKey(pipelineId, branch);

  const [initial] = useState(() => initialState(data, draftKey));
  const [history, setHistory] = useState<History>(initial.history);
  const [saved, setSaved] = useState<string>(initial.saved);
  const [layout, setLayout] = useState<CanvasLayout>(initial.layout);
  const [restored] = useState<CanvasDraft | null>(initial.restored);
  const [selection, setSelected] = useState<NodeRef | null>(null);
  const [selectedEdge, setSelectedEdge] = useState<string | null>(null);
  const [tab, setTab] = useState<"node" | "versions">(resume?.tab ?? "node");
  const [compare, setCompare] = useState<{ from: string; to: string } | null>(resume?.compare ?? null);
  const [tomlError, setTomlError] = useState<string | null>(null);
  const canvasBox = useRef<HTMLDivElement>(null);
  const [sample, setSample] = useState(SAMPLE_CONTENT);
  const [saveOpen, setSaveOpen] = useState(false);
  const [message, setMessage] = useState("");
  const [measured, setMeasured] = useState<Record<string, { width: number; height: number }>>({});

  const spec = history.present;
  // A selection that undo/redo/removal made invalid is no selection.
  const selected = selection && getNode(spec, selection) ? selection : null;
  const parsed = useMemo(() => (spec ? parseSpec(spec) : null), [spec]);
  const problems: Problem[] = useMemo(() => (parsed && !parsed.ok ? parsed.problems : []), [parsed]);
  // Models whose provider the workspace lacks: saving is allowed (a provider can be added later), running is not.
  const available = useQuery({ ...trpc.provider.available.queryOptions({ workspaceId: workspace.id }), staleTime: 30_000 });
  const missingProviders: Problem[] = useMemo(() => (available.data ? providerProblems(spec, available.data) : []), [spec, available.data]);
  const shownProblems = useMemo(() => [...problems, ...missingProviders], [problems, missingProviders]);
  const dirty = spec ? JSON.stringify(spec) !== saved : false;

  const { commit, undo, redo } = useSpecHistory(setHistory);

  // Unsaved edits are kept as a draft per pipeline+branch until saved or discarded.
  const baseVersionId = data.version.id;
  useEffect(() => {
    if (dirty) writeDraft(draftKey, { spec, layout, baseVersionId, savedAt: new Date().toISOString() });
    else removeDraft(draftKey);
  }, [spec, layout, dirty, draftKey, baseVersionId]);

  const discardDraft = () => {
    removeDraft(draftKey);
    onReload();
  };
  // "Save as new branch" moved the edits: this branch has none left (no draft is written back).
  const editsMoved = () => {
    setSaved(JSON.stringify(history.present));
    removeDraft(draftKey);
  };

  // Unsaved edits: the browser asks before leaving the page.
  useEffect(() => {
    if (!dirty) return;
    const warn = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty]);

  const graph = useMemo(() => specToGraph(spec, layout, shownProblems), [spec, layout, shownProblems]);
  const selectedId = spec && selected ? idOf(spec, selected) : undefined;
  const nodes: Node[] = useMemo(
    () =>
      graph.nodes.map((n) => ({
        ...n,
        // Own type names: React Flow styles its built-in "output" type.
        type: `spec-${n.type}`,
        selected: n.id === selectedId,
        measured: measured[n.id],
        deletable: false,
      })),
    [graph.nodes, selectedId, measured],
  );
  const edges: Edge[] = useMemo(
    () =>
      graph.edges.map((e) => ({
        id: e.id,
        source: e.source,
        target: e.target,
        selected: e.id === selectedEdge,
        deletable: false,
        animated: e.data.invalid,
        style: e.data.invalid ? { stroke: "var(--destructive)", strokeWidth: 2 } : e.id === selectedEdge ? { stroke: "var(--primary)", strokeWidth: 2 } : undefined,
        data: e.data,
      })),
    [graph.edges, selectedEdge],
  );

  const onNodesChange = useCallback(
    (changes: NodeChange[]) => {
      for (const c of changes) {
        if (c.type === "position" && c.position) {
          const pos = c.position;
          setLayout((l) => ({ positions: { ...l.positions, [c.id]: { x: Math.round(pos.x), y: Math.round(pos.y) } } }));
        } else if (c.type === "dimensions" && c.dimensions) {
          const dims = c.dimensions;
          setMeasured((m) => (m[c.id]?.width === dims.width && m[c.id]?.height === dims.height ? m : { ...m, [c.id]: dims }));
        } else if (c.type === "select" && c.selected && spec) {
          const ref = refOf(spec, c.id);
          if (ref) {
            setSelected(ref);
            setSelectedEdge(null);
            setTab("node");
          }
        }
      }
    },
    [spec],
  );
  const onEdgesChange = useCallback((changes: EdgeChange[]) => {
    for (const c of changes) if (c.type === "select" && c.selected) setSelectedEdge(c.id);
  }, []);
  const onConnect = useCallback(
    (c: Connection) => {
      if (!canWrite || !c.source || !c.target) return;
      commit((s) => connect(s, c.source, c.target));
    },
    [commit, canWrite],
  );

  const add = useCallback(
    (kind: NodeKind, node: DraftNode, near?: NodeRef | null, paste = false) => {
      if (!spec) return;
      const anchorId = near ? idOf(spec, near) : undefined;
      const added = paste ? pasteNode(spec, kind, node) : addNode(spec, kind, node);
      const ref = added.ref;
      let next = added.spec;
      const newId = idOf(next, ref)!;
      // A new step/output reads from the selected source/step.
      if (!paste && kind !== "source" && near && near.kind !== "output" && anchorId) next = connect(next, anchorId, newId);
      const anchorPos = anchorId ? layout.positions[anchorId] : undefined;
      // The middle of the canvas as shown (between the palette and the inspector), not of the window.
      const box = canvasBox.current?.getBoundingClientRect();
      const middle = box ? { x: box.left + box.width / 2, y: box.top + box.height / 2 } : { x: window.innerWidth / 2, y: window.innerHeight / 2 };
      const viewport = rf.screenToFlowPosition(middle);
      const want = anchorPos ? (paste ? { x: anchorPos.x + 40, y: anchorPos.y + 40 } : { x: anchorPos.x, y: anchorPos.y + NODE_HEIGHT + 50 }) : viewport;
      // A step lands in view: beside its input when that spot is on screen, else in a free spot in the
      // middle of the canvas (the view stays put); only when neither is on screen does the view move.
      const zoom = rf.getZoom();
      const onScreen = (p: { x: number; y: number }) => {
        if (!box) return true;
        const tl = rf.flowToScreenPosition(p);
        return tl.x >= box.left && tl.y >= box.top && tl.x + NODE_WIDTH * zoom <= box.right && tl.y + NODE_HEIGHT * zoom <= box.bottom;
      };
      const besideInput = freeSpot(layout, want);
      const spot = onScreen(besideInput) ? besideInput : freeSpot(layout, { x: viewport.x - NODE_WIDTH / 2, y: viewport.y - NODE_HEIGHT / 2 });
      setLayout((l) => ({ positions: { ...l.positions, [newId]: spot } }));
      commit(() => next);
      if (!onScreen(spot)) requestAnimationFrame(() => void rf.setCenter(spot.x + NODE_WIDTH / 2, spot.y + NODE_HEIGHT / 2, { zoom, duration: 200 }));
      setSelected(ref);
      setTab("node");
    },
    [spec, layout, rf, commit],
  );

  const removeSelected = useCallback(() => {
    if (!spec || !canWrite) return;
    if (selectedEdge) {
      const e = graph.edges.find((x) => x.id === selectedEdge);
      if (e) commit((s) => disconnect(s, e.source, e.target));
      setSelectedEdge(null);
      return;
    }
    if (selected) {
      commit((s) => removeNode(s, selected));
      setSelected(null);
    }
  }, [spec, canWrite, selected, selectedEdge, graph.edges, commit]);

  const doAutoLayout = useCallback(() => {
    if (!spec) return;
    setLayout(autoLayout(spec));
    requestAnimationFrame(() => rf.fitView({ ...FIT_VIEW, duration: 200 }));
  }, [spec, rf]);

  useCanvasKeys({ spec, selected, disabled: saveOpen, canWrite, undo, redo, removeSelected, paste: (kind, node, near) => add(kind, node, near, true) });

  const saveMutation = useMutation(
    trpc.pipeline.saveVersion.mutationOptions({
      onSuccess: async (res) => {
        toast.success("Version saved");
        setSaved(JSON.stringify(history.present));
        setSaveOpen(false);
        setMessage("");
        await queryClient.invalidateQueries({ queryKey: trpc.pipeline.versions.queryKey() });
        await queryClient.invalidateQueries({ queryKey: trpc.pipeline.status.queryKey() });
        await queryClient.invalidateQueries({ queryKey: trpc.pipeline.list.queryKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.pipeline.get.queryKey() });
        if (res.version.parentId) setCompare({ from: res.version.parentId, to: res.version.id });
        setTab("versions");
      },
      onError: (err) => toast.error(errorMessage(err)),
    }),
  );

  const protectedHere = branch === "main" && data.pipeline.protectedMain && !canWriteProtected;
  const saveBlocker = !canWrite
    ? "Your role can read this pipeline but not change it."
    : protectedHere
      ? "Main is protected: only admins and owners save here. Save your edits as a new branch."
    : problems.length
      ? `Fix ${problems.length} problem${problems.length === 1 ? "" : "s"} before saving.`
      : !dirty
        ? "No changes since the last saved version."
        : null;

  const modelSuggestions = useModelSuggestions(workspace.id);

  const pipeline = data.pipeline;
  const selectedNode = selected ? getNode(spec, selected) : undefined;
  const byNode = problemsByNode(spec, shownProblems);
  const inputNames = [...spec.sources, ...spec.steps].map((n) => String(n.name ?? "")).filter(Boolean);
  const base = `/w/${workspace.slug}/pipelines/${pipeline.id}`;
  const positionsOfSpec = () => Object.fromEntries(Object.entries(layout.positions).filter(([id]) => nodeIds(spec).has(id)));

  return (
    <div className="-m-6 flex h-[calc(100vh-3.5rem)] flex-col">
      <CanvasToolbar
        base={base}
        pipeline={pipeline}
        branch={branch}
        spec={spec}
        dirty={dirty}
        restored={restored}
        onDiscardDraft={discardDraft}
        canUndo={history.past.length > 0}
        canRedo={history.future.length > 0}
        canWrite={canWrite}
        canCreateBranch={canCreateBranch}
        onUndo={undo}
        onRedo={redo}
        onAutoLayout={doAutoLayout}
        onTomlError={setTomlError}
        onTomlImport={(imported, fileName) => {
          commit(() => toDraft(imported));
          setLayout(autoLayout(imported));
          setSelected(null);
          requestAnimationFrame(() => rf.fitView({ ...FIT_VIEW, duration: 200 }));
          toast.success(`Imported ${fileName}: review the canvas, then save it as a version`);
        }}
        problems={problems}
        missingProviders={missingProviders}
        saveBlocker={saveBlocker}
        protectedHere={protectedHere}
        onSave={() => setSaveOpen(true)}
        positionsOfSpec={positionsOfSpec}
        baseVersionId={baseVersionId}
        onEditsMoved={editsMoved}
      />

      {tomlError ? (
        <div data-testid="toml-import-error" className="flex items-start gap-2 border-b border-destructive/40 bg-destructive/10 px-4 py-1.5 text-xs text-destructive">
          <span className="min-w-0 flex-1 whitespace-pre-wrap">{tomlError}</span>
          <button type="button" className="underline" onClick={() => setTomlError(null)}>
            Dismiss
          </button>
        </div>
      ) : null}
      <div className="flex min-h-0 flex-1">
        {/* Palette */}
        <aside className="w-40 shrink-0 border-r p-3 xl:w-48 2xl:w-56">
          <Palette disabled={!canWrite} onAdd={(item: PaletteItem) => add(item.kind, item.node, selected)} />
        </aside>

        {/* Canvas + problems */}
        <div className="flex min-w-0 flex-1 flex-col">
          <div ref={canvasBox} className="min-h-0 flex-1" data-testid="canvas">
            <ReactFlow
              nodes={nodes}
              edges={edges}
              nodeTypes={nodeTypes}
              onNodesChange={onNodesChange}
              onEdgesChange={onEdgesChange}
              onConnect={onConnect}
              onPaneClick={() => {
                setSelected(null);
                setSelectedEdge(null);
              }}
              nodesDraggable
              nodesConnectable={canWrite}
              deleteKeyCode={null}
              fitView
              fitViewOptions={FIT_VIEW}
              minZoom={0.2}
              colorMode={resolvedTheme === "dark" ? "dark" : "light"}
              proOptions={{ hideAttribution: true }}
            >
              <Background />
              <Controls showInteractive={false} fitViewOptions={FIT_VIEW} />
            </ReactFlow>
          </div>
          <ProblemsPanel
            problems={problems}
            missingProviders={missingProviders}
            modelsHref={`/w/${workspace.slug}/settings/models`}
            onSelect={(ref) => {
              setSelected(ref);
              setTab("node");
            }}
          />
        </div>

        <CanvasSidePanel
          tab={tab}
          onTab={setTab}
          node={
            selected && selectedNode ? (
              <NodePanel
                key={`${selected.kind}:${selected.index}`}
                kind={selected.kind}
                node={selectedNode}
                problems={byNode.get(selectedId ?? "") ?? []}
                inputs={inputNames}
                modelSuggestions={modelSuggestions}
                readOnly={!canWrite}
                sample={sample}
                onSampleChange={setSample}
                onDelete={removeSelected}
                onPatch={(patch, key) => commit((s) => updateNode(s, selected, patch), key ? `${selected.kind}:${selected.index}:${key}` : undefined)}
                onRename={(name) => {
                  const res = renameNode(spec, selected, name);
                  if (!res.ok) return res.error;
                  if (res.spec !== spec) {
                    commit(() => res.spec);
                    setLayout((l) => renameInLayout(l, res.oldId, res.newId));
                  }
                  return null;
                }}
              />
            ) : null
          }
          versions={
            <VersionsPanel
              pipelineId={pipeline.id}
              branch={branch}
              headVersionId={data.version.id}
              restoreBlocker={!canWrite ? "Your role can read this pipeline but not change it." : protectedHere ? "Main is protected: only admins and owners restore versions here." : null}
              onRestored={(next) => {
                removeDraft(draftKey);
                onReload({ tab: "versions", compare: next });
              }}
              compare={compare}
              onCompare={setCompare}
              onSelectNode={(name) => {
                const ref = [...nodeIds(spec).values()].find((r) => getNode(spec, r)?.name === name);
                if (ref) {
                  setSelected(ref);
                  setTab("node");
                }
              }}
            />
          }
        />
      </div>

      <SaveVersionDialog
        open={saveOpen}
        onOpenChange={setSaveOpen}
        pipelineName={pipeline.name}
        branch={branch}
        message={message}
        onMessageChange={setMessage}
        pending={saveMutation.isPending}
        onSave={() => saveMutation.mutate({ workspaceId: workspace.id, pipelineId: pipeline.id, branch, spec, layout: { positions: positionsOfSpec() }, message: message.trim() })}
      />
    </div>
  );
}
