"use client";
import { Download, Upload } from "lucide-react";
import { useRef } from "react";
import { Button } from "@/components/ui/button";
import { formatPath } from "@/server/pipeline/spec";
import { parseSpecToml, specToToml, type PipelineMeta } from "@/server/pipeline/toml";
import type { DraftSpec } from "./spec-graph";

/**
 * TOML export and import in the canvas, in the format `synthex export` writes and `synthex apply`
 * reads (server/pipeline/toml.ts). Export writes the canvas as shown (unsaved edits included);
 * import replaces the canvas with the file as unsaved edits, or says what is wrong and where.
 */
export function TomlActions({
  spec,
  meta,
  readOnly,
  onImport,
  onError,
}: {
  spec: DraftSpec;
  meta: PipelineMeta & { name: string };
  readOnly: boolean;
  onImport: (spec: DraftSpec, fileName: string) => void;
  onError: (message: string | null) => void;
}) {
  const input = useRef<HTMLInputElement>(null);

  const exportToml = () => {
    let text: string;
    try {
      text = specToToml(spec as Parameters<typeof specToToml>[0], meta);
    } catch (err) {
      onError(`Cannot export: ${(err as Error).message}`);
      return;
    }
    const url = URL.createObjectURL(new Blob([text], { type: "application/toml" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = `${meta.name}.toml`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };

  const importFile = async (file: File) => {
    const text = await file.text();
    const parsed = parseSpecToml(text);
    if (!parsed.ok) {
      const lines = parsed.problems.slice(0, 5).map((p) => (p.path.length ? `${formatPath(p.path)}: ${p.message}` : p.message));
      const more = parsed.problems.length > 5 ? ` (and ${parsed.problems.length - 5} more)` : "";
      onError(`${file.name} was not imported: ${lines.join("; ")}${more}`);
      return;
    }
    onError(null);
    onImport(parsed.spec as DraftSpec, file.name);
  };

  return (
    <>
      <Button size="sm" variant="ghost" onClick={exportToml} title="Download the canvas as TOML (synthex apply reads it)" data-testid="export-toml">
        <Download /> TOML
      </Button>
      {readOnly ? null : (
        <>
          <Button size="sm" variant="ghost" onClick={() => input.current?.click()} title="Replace the canvas with a TOML spec (as unsaved edits)">
            <Upload /> Import
          </Button>
          <input
            ref={input}
            type="file"
            accept=".toml,application/toml,text/plain"
            className="hidden"
            data-testid="import-toml"
            onChange={(e) => {
              const file = e.target.files?.[0];
              e.target.value = "";
              if (file) void importFile(file);
            }}
          />
        </>
      )}
    </>
  );
}
