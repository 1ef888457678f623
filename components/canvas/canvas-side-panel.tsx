"use client";
/**
 * The canvas's side panel: the selected node's inspector (or how to edit when nothing is selected)
 * and the versions of the branch, as two tabs.
 */
import type { ReactNode } from "react";
import { cn } from "@/components/ui/cn";

export type SidePanelTab = "node" | "versions";

export function CanvasSidePanel({ tab, onTab, node, versions }: { tab: SidePanelTab; onTab: (tab: SidePanelTab) => void; node: ReactNode; versions: ReactNode }) {
  return (
    <aside className="flex w-80 shrink-0 flex-col border-l xl:w-96 2xl:w-[28rem]">
      <div className="flex border-b text-sm">
        {(["node", "versions"] as const).map((t) => (
          <button
            key={t}
            type="button"
            data-testid={`tab-${t}`}
            onClick={() => onTab(t)}
            className={cn("flex-1 px-3 py-2 capitalize", tab === t ? "border-b-2 border-primary font-medium" : "text-muted-foreground")}
          >
            {t === "node" ? "Node" : "Versions"}
          </button>
        ))}
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto p-4">
        {tab === "versions" ? (
          versions
        ) : node ? (
          node
        ) : (
          <div className="space-y-2 text-sm text-muted-foreground">
            <p>Select a node to edit it.</p>
            <ul className="list-disc space-y-1 pl-4 text-xs">
              <li>Add nodes from the palette (a new step reads from the selected node).</li>
              <li>Drag from a node&apos;s bottom handle to another node to set its input.</li>
              <li>Delete removes the selected node or edge; Ctrl+C / Ctrl+V copies a node; Ctrl+Z / Ctrl+Shift+Z undo and redo.</li>
            </ul>
          </div>
        )}
      </div>
    </aside>
  );
}
