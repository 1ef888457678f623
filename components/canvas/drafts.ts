/**
 * Unsaved canvas edits, kept in localStorage per pipeline+branch so leaving the page loses nothing;
 * "Save as new branch" moves a draft from one branch's key to another's.
 */
import type { CanvasLayout, DraftSpec } from "./spec-graph";
import { toDraft } from "./spec-graph";

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
