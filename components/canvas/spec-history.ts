"use client";
import { useCallback, type Dispatch, type SetStateAction } from "react";
import type { DraftSpec } from "./spec-graph";

/** The canvas's undo history of specs. */
export interface History {
  past: DraftSpec[];
  present: DraftSpec;
  future: DraftSpec[];
  /** Consecutive edits of the same field (typing) coalesce into one undo step. */
  lastKey?: string;
  lastAt?: number;
}

const HISTORY_LIMIT = 200;

/** Edit (with typing coalesced into one step), undo and redo over a `History` state. */
export function useSpecHistory(setHistory: Dispatch<SetStateAction<History>>) {
  const commit = useCallback((fn: (s: DraftSpec) => DraftSpec, coalesceKey?: string) => {
    setHistory((h) => {
      const next = fn(h.present);
      if (next === h.present) return h;
      const now = Date.now();
      const coalesce = coalesceKey && h.lastKey === coalesceKey && now - (h.lastAt ?? 0) < 1500;
      return {
        past: coalesce ? h.past : [...h.past, h.present].slice(-HISTORY_LIMIT),
        present: next,
        future: [],
        lastKey: coalesceKey,
        lastAt: now,
      };
    });
  }, [setHistory]);
  const undo = useCallback(() => {
    setHistory((h) => (h.past.length ? { past: h.past.slice(0, -1), present: h.past.at(-1)!, future: [h.present, ...h.future] } : h));
  }, [setHistory]);
  const redo = useCallback(() => {
    setHistory((h) => (h.future.length ? { past: [...h.past, h.present], present: h.future[0]!, future: h.future.slice(1) } : h));
  }, [setHistory]);
  return { commit, undo, redo };
}
