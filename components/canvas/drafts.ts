/**
 * Unsaved canvas edits, kept in localStorage per pipeline+branch so leaving the page loses nothing;
 * "Save as new branch" moves a draft from one branch's key to another's.
 */
import type { CanvasLayout, DraftSpec } from "./spec-graph";
import { autoLayout, needsLayout, toDraft } from "./spec-graph";
import type { History } from "./spec-history";

export interface CanvasDraft {
  spec: DraftSpec;
  layout: CanvasLayout;
  /** The saved version the edits started from. */
  baseVersionId: string;
  savedAt: string;
  stale?: boolean;
}

export const draftStorageKey = (pipelineId: string, branch: string) => `synthex:canvas-draft:${pipelineId}:${branch}`;

export function readDraft(key: string): CanvasDraft | null {
  try {
    const raw = window.localStorage.getItem(key);
    const d = raw ? (JSON.parse(raw) as CanvasDraft) : null;
    return d && d.spec && Array.isArray(d.spec.steps) && d.layout?.positions ? { ...d, spec: toDraft(d.spec) } : null;
  } catch {
    return null;
  }
}

export function writeDraft(key: string, draft: CanvasDraft) {
  try {
    window.localStorage.setItem(key, JSON.stringify(draft));
  } catch {
    // Storage full or disabled: the beforeunload warning still guards the edits.
  }
}

export function removeDraft(key: string) {
  try {
    window.localStorage.removeItem(key);
  } catch {
    // ignore
  }
}

export interface InitialState {
  history: History;
  layout: CanvasLayout;
  saved: string;
  restored: CanvasDraft | null;
}

/** The saved version, or the unsaved draft left on this pipeline+branch (tab click, back, closed tab). */
export function initialState(data: { version: { id: string; spec: unknown; layout?: unknown } }, draftKey: string): InitialState {
  const spec = toDraft(data.version.spec);
  const stored = data.version.layout as CanvasLayout | null | undefined;
  const saved = JSON.stringify(spec);
  const draft = readDraft(draftKey);
  if (draft && JSON.stringify(draft.spec) !== saved) {
    return {
      // Undo goes back to the saved version.
      history: { past: [spec], present: draft.spec, future: [] },
      layout: needsLayout(draft.spec, draft.layout) ? autoLayout(draft.spec) : { positions: { ...draft.layout.positions } },
      saved,
      restored: { ...draft, stale: draft.baseVersionId !== data.version.id },
    };
  }
  return {
    history: { past: [], present: spec, future: [] },
    layout: needsLayout(spec, stored) ? autoLayout(spec) : { positions: { ...stored!.positions } },
    saved,
    restored: null,
  };
}
