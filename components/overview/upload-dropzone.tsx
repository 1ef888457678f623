"use client";
import { FileUp, Loader2 } from "lucide-react";
import { useRef, useState } from "react";
import { useCan, useWorkspace } from "@/components/shell/workspace-context";
import { cn } from "@/components/ui/cn";
import { toast } from "@/components/ui/sonner";
import type { ImportFormat } from "@/server/importers/types";
import type { ImportFileResult } from "@/server/services/imports";

/** Formats a browser upload can be (a folder cannot); "" = auto-detect. Typed so a new format shows up here. */
export const UPLOAD_FORMAT_LABELS: Record<Exclude<ImportFormat, "folder">, string> = {
  "chatgpt-export": "ChatGPT export",
  "claude-export": "Claude export",
  jsonl: "JSONL (one message or conversation per line)",
  markdown: "Markdown transcript",
  text: "Plain text transcript",
  pdf: "PDF (one record per page)",
  docx: "Word document (.docx)",
  html: "Web page (.html)",
  image: "Image with text (OCR: PNG, JPEG, WebP)",
  audio: "Audio memo (WAV, MP3, M4A)",
};

/** The upload route answers an import's result, or `{ error }`. */
type UploadResponse = Partial<ImportFileResult> & { error?: { code: string; message: string } };
type Report = Partial<ImportFileResult> & { fileName: string; ok: boolean; error?: string };

/** Drop a ChatGPT/Claude export, JSONL, Markdown or text file, a PDF, DOCX, HTML page, image or audio memo onto a source; one report per file. */
export function UploadDropzone({ pipelineId, source, onImported }: { pipelineId: string; source: string; onImported?: () => void }) {
  const { workspace } = useWorkspace();
  const canWrite = useCan("pipelines:write");
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [reports, setReports] = useState<Report[]>([]);
  const [format, setFormat] = useState<string>("");

  async function upload(files: File[]) {
    for (const file of files) {
      setBusy(file.name);
      const body = new FormData();
      body.set("file", file, file.name);
      body.set("workspaceId", workspace.id);
      if (format) body.set("format", format);
      let report: Report;
      try {
        const res = await fetch(`/api/v1/pipelines/${encodeURIComponent(pipelineId)}/sources/${encodeURIComponent(source)}/upload`, {
          method: "POST",
          body,
        });
        const json: UploadResponse = await res.json().catch(() => ({}));
        if (!res.ok) report = { fileName: file.name, ok: false, error: json.error?.message ?? `Upload failed (${res.status})` };
        else report = { ...json, error: undefined, fileName: file.name, ok: true };
      } catch (err) {
        report = { fileName: file.name, ok: false, error: err instanceof Error ? err.message : "Upload failed" };
      }
      setReports((r) => [report, ...r]);
      if (report.ok) {
        toast.success(`${file.name}: ${report.added ?? 0} new, ${report.skipped ?? 0} skipped`);
        onImported?.();
      } else toast.error(`${file.name}: ${report.error}`);
    }
    setBusy(null);
  }

  if (!canWrite) return <p className="text-xs text-muted-foreground">Your role can read this source but not upload to it.</p>;

  return (
    <div className="space-y-2">
      <div
        data-testid={`upload-${source}`}
        role="button"
        tabIndex={0}
        onClick={() => input.current?.click()}
        onKeyDown={(e) => (e.key === "Enter" || e.key === " ") && input.current?.click()}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          const files = [...e.dataTransfer.files];
          if (files.length) void upload(files);
        }}
        className={cn(
          "flex cursor-pointer flex-col items-center gap-1 rounded-lg border border-dashed px-4 py-5 text-center text-xs text-muted-foreground transition-colors hover:bg-muted/50",
          over && "border-primary bg-primary/5",
        )}
      >
        {busy ? <Loader2 className="size-5 animate-spin" /> : <FileUp className="size-5" />}
        <span className="font-medium text-foreground">{busy ? `Importing ${busy}…` : "Drop files here or click to choose"}</span>
        <span>ChatGPT or Claude export (.json / .zip), JSONL, Markdown, text, PDF, Word, HTML, images (OCR), audio memos</span>
        <input
          ref={input}
          type="file"
          multiple
          className="hidden"
          accept=".json,.zip,.jsonl,.ndjson,.md,.markdown,.txt,.pdf,.docx,.html,.htm,.png,.jpg,.jpeg,.webp,.wav,.mp3,.m4a"
          onChange={(e) => {
            const files = [...(e.target.files ?? [])];
            e.target.value = "";
            if (files.length) void upload(files);
          }}
        />
      </div>
      <label className="flex items-center gap-2 text-xs text-muted-foreground">
        Format
        <select
          data-testid={`upload-format-${source}`}
          value={format}
          onChange={(e) => setFormat(e.target.value)}
          className="h-7 flex-1 rounded-md border border-input bg-transparent px-2 text-xs text-foreground"
        >
          <option value="">Auto-detect</option>
          {Object.entries(UPLOAD_FORMAT_LABELS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {reports.map((r, i) => (
        <div
          key={`${r.fileName}-${i}`}
          data-testid={`upload-report-${source}`}
          className={cn("rounded-md border px-3 py-2 text-xs", r.ok ? "border-border" : "border-destructive/50 text-destructive")}
        >
          <div className="font-medium">{r.fileName}</div>
          {r.ok ? (
            <>
              <div className="text-muted-foreground">
                {r.format} · {r.received} read · <span data-testid="upload-added">{r.added}</span> added · {r.unchanged ?? 0} unchanged ·{" "}
                {r.skipped} skipped{r.warningCount ? ` · ${r.warningCount} warnings` : ""}
              </div>
              {r.warnings?.length ? (
                <ul className="mt-1 list-disc pl-4 text-muted-foreground">
                  {r.warnings.slice(0, 8).map((w, j) => (
                    <li key={j}>
                      {w.skipped ? "skipped" : "repaired"}
                      {w.conversation ? ` [${w.conversation}]` : ""}: {w.reason}
                    </li>
                  ))}
                  {r.warnings.length > 8 ? <li>… {r.warnings.length - 8} more</li> : null}
                </ul>
              ) : null}
            </>
          ) : (
            <div>{r.error}</div>
          )}
        </div>
      ))}
    </div>
  );
}
