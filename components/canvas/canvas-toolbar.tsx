"use client";
/**
 * The canvas toolbar: back to the overview, the branch, unsaved and restored-draft state, undo and
 * redo, auto-layout, TOML import and export, the spec's validity, and saving (a version, or on a
 * protected main "Save as new branch"). The edit state lives in canvas-editor.tsx; this only shows it.
 */
import { ArrowLeft, LayoutGrid, Redo2, Save, Undo2 } from "lucide-react";
import Link from "next/link";
import { BranchBar } from "@/components/branches/branch-bar";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import type { Problem } from "@/server/pipeline/spec";
import type { PipelineMeta } from "@/server/pipeline/toml";
import type { CanvasDraft } from "./drafts";
import { SaveAsBranch } from "./save-as-branch";
import type { CanvasLayout, DraftSpec } from "./spec-graph";
import { TomlActions } from "./toml-actions";

export interface CanvasToolbarProps {
  base: string;
  pipeline: PipelineMeta & { id: string; name: string };
  branch: string;
  spec: DraftSpec;
  dirty: boolean;
  restored: CanvasDraft | null;
  onDiscardDraft: () => void;
  canUndo: boolean;
  canRedo: boolean;
  canWrite: boolean;
  canCreateBranch: boolean;
  onUndo: () => void;
  onRedo: () => void;
  onAutoLayout: () => void;
  onTomlError: (message: string | null) => void;
  onTomlImport: (spec: DraftSpec, fileName: string) => void;
  problems: Problem[];
  missingProviders: Problem[];
  /** Why saving is not possible now, or null. */
  saveBlocker: string | null;
  /** Main is protected and this person may not save there. */
  protectedHere: boolean;
  onSave: () => void;
  positionsOfSpec: () => CanvasLayout["positions"];
  baseVersionId: string;
  onEditsMoved: () => void;
}

export function CanvasToolbar({
  base,
  pipeline,
  branch,
  spec,
  dirty,
  restored,
  onDiscardDraft,
  canUndo,
  canRedo,
  canWrite,
  canCreateBranch,
  onUndo,
  onRedo,
  onAutoLayout,
  onTomlError,
  onTomlImport,
  problems,
  missingProviders,
  saveBlocker,
  protectedHere,
  onSave,
  positionsOfSpec,
  baseVersionId,
  onEditsMoved,
}: CanvasToolbarProps) {
  return (
    <div className="flex flex-wrap items-center gap-2 border-b px-4 py-2">
      <Button asChild variant="ghost" size="sm">
        <Link href={`${base}?branch=${encodeURIComponent(branch)}`}>
          <ArrowLeft /> Overview
        </Link>
      </Button>
      <div className="font-semibold">{pipeline.name}</div>
      <BranchBar pipelineId={pipeline.id} />
      {dirty ? <Badge variant="warning" data-testid="unsaved-badge">unsaved changes</Badge> : null}
      {restored && dirty ? (
        <span data-testid="draft-restored" className="flex items-center gap-2 rounded-md border border-warning/50 bg-warning/10 px-2 py-0.5 text-xs">
          Restored your unsaved edits from {new Date(restored.savedAt).toLocaleString()}
          {restored.stale ? " (made on an older version of this branch)" : ""}
          <button type="button" className="font-medium underline" onClick={onDiscardDraft} data-testid="discard-draft">
            Discard
          </button>
        </span>
      ) : null}
      <div className="ml-4 flex items-center gap-1">
        <Button size="icon" variant="ghost" onClick={onUndo} disabled={!canUndo || !canWrite} title="Undo (Ctrl+Z)" data-testid="undo">
          <Undo2 />
        </Button>
        <Button size="icon" variant="ghost" onClick={onRedo} disabled={!canRedo || !canWrite} title="Redo (Ctrl+Shift+Z)" data-testid="redo">
          <Redo2 />
        </Button>
        <Button size="sm" variant="ghost" onClick={onAutoLayout} title="Arrange the graph left to right" data-testid="auto-layout">
          <LayoutGrid /> Auto-layout
        </Button>
        <TomlActions
          spec={spec}
          meta={{ name: pipeline.name, agent: pipeline.agent, description: pipeline.description }}
          readOnly={!canWrite}
          onError={onTomlError}
          onImport={onTomlImport}
        />
      </div>
      <div className="ml-auto flex items-center gap-3">
        <span
          data-testid="validity"
          className={cn("text-xs", problems.length || missingProviders.length ? "text-destructive" : "text-muted-foreground")}
          title={saveBlocker ?? undefined}
        >
          {problems.length
            ? `${problems.length} problem${problems.length === 1 ? "" : "s"} · saving disabled`
            : missingProviders.length
              ? `Cannot run: ${missingProviders[0]!.message.replace(/ \(model .*\)$/, "")}`
              : !canWrite
                ? "Read-only"
                : dirty
                  ? "Valid spec"
                  : "Valid spec · saved"}
        </span>
        {protectedHere && canWrite && dirty ? (
          <span data-testid="save-blocker" className="max-w-xs text-xs text-muted-foreground">
            {saveBlocker}
          </span>
        ) : null}
        <Button size="sm" onClick={onSave} disabled={Boolean(saveBlocker)} title={saveBlocker ?? "Save a new version"} data-testid="save-version">
          <Save /> Save version…
        </Button>
        {protectedHere && canWrite && canCreateBranch && dirty && !problems.length ? (
          <SaveAsBranch pipelineId={pipeline.id} branch={branch} spec={spec} layout={{ positions: positionsOfSpec() }} baseVersionId={baseVersionId} onMoved={onEditsMoved} />
        ) : null}
      </div>
    </div>
  );
}
