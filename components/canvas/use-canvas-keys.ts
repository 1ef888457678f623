"use client";
/**
 * The canvas's keyboard: Delete removes the selected node or edge, Ctrl+C / Ctrl+V copies and pastes
 * a node (beside its original), Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y undo and redo. Keys typed into a
 * field, a select or the prompt editor are left alone, and so is everything while a dialog is open.
 */
import { useEffect, useRef } from "react";
import { toast } from "@/components/ui/sonner";
import { getNode, nodeIds, type DraftNode, type DraftSpec, type NodeKind, type NodeRef } from "./spec-graph";

function isTextTarget(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el) return false;
  return el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable || Boolean(el.closest?.(".cm-editor"));
}

export function useCanvasKeys({
  spec,
  selected,
  disabled,
  canWrite,
  undo,
  redo,
  removeSelected,
  paste,
}: {
  spec: DraftSpec;
  selected: NodeRef | null;
  /** A dialog is open: the canvas takes no keys. */
  disabled: boolean;
  canWrite: boolean;
  undo: () => void;
  redo: () => void;
  removeSelected: () => void;
  paste: (kind: NodeKind, node: DraftNode, near: NodeRef | null) => void;
}) {
  const clipboard = useRef<{ kind: NodeKind; node: DraftNode } | null>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTextTarget(e.target) || disabled) return;
      const mod = e.ctrlKey || e.metaKey;
      if ((e.key === "Delete" || e.key === "Backspace") && !mod) {
        e.preventDefault();
        removeSelected();
      } else if (mod && e.key.toLowerCase() === "z") {
        e.preventDefault();
        if (!canWrite) return;
        if (e.shiftKey) redo();
        else undo();
      } else if (mod && e.key.toLowerCase() === "y") {
        e.preventDefault();
        if (canWrite) redo();
      } else if (mod && e.key.toLowerCase() === "c" && spec && selected) {
        const node = getNode(spec, selected);
        if (node) {
          clipboard.current = { kind: selected.kind, node: structuredClone(node) };
          toast.message(`Copied ${String(node.name)}`);
        }
      } else if (mod && e.key.toLowerCase() === "v" && clipboard.current && canWrite) {
        e.preventDefault();
        const { kind, node } = clipboard.current;
        const original = spec ? [...nodeIds(spec).values()].find((r) => r.kind === kind && getNode(spec, r)?.name === node.name) : undefined;
        paste(kind, node, original ?? selected);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [removeSelected, undo, redo, paste, spec, selected, disabled, canWrite]);
}
