"use client";
import { useQuery } from "@tanstack/react-query";
import { FileAudio, FileImage, FileText } from "lucide-react";
import { z } from "zod";
import { useWorkspace } from "@/components/shell/workspace-context";
import { useTRPC } from "@/lib/trpc";
import { Badge } from "@/components/ui/badge";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";

/** The media fields an importer writes into a source record's metadata (server/importers/media.ts); anything else is ignored. */
const MediaMeta = z.object({
  modality: z.enum(["document", "image", "audio"]),
  file: z.object({ name: z.string(), sha256: z.string(), bytes: z.number(), type: z.string() }),
  position: z.union([
    z.object({ page: z.number(), pages: z.number() }),
    z.object({ line_start: z.number(), line_end: z.number() }),
    z.object({ start_s: z.number(), end_s: z.number() }),
  ]),
  document: z.object({ title: z.string().nullable().optional(), author: z.string().nullable().optional(), headings: z.array(z.object({ level: z.number(), text: z.string(), line: z.number() })).optional() }).optional(),
  image: z
    .object({
      width: z.number(),
      height: z.number(),
      thumbnail: z.string().startsWith("data:image/webp;base64,").optional(),
      original: z.object({ type: z.string(), width: z.number(), height: z.number(), bytes: z.number() }).optional(),
    })
    .optional(),
  ocr: z.object({ mean_confidence: z.number(), low_confidence: z.boolean(), lines: z.array(z.object({ text: z.string(), confidence: z.number(), low: z.boolean().optional() })) }).optional(),
  pdf: z.object({ needs_ocr: z.boolean().optional() }).optional(),
  transcript: z.object({ status: z.enum(["awaiting", "done"]), model: z.string().optional(), segments: z.array(z.object({ start: z.number(), end: z.number(), text: z.string() })).optional() }).optional(),
});
type Media = z.infer<typeof MediaMeta>;

/** `m:ss` of a time in seconds. */
export const clock = (s: number) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, "0")}`;
const kb = (n: number) => (n < 1024 * 1024 ? `${(n / 1024).toFixed(0)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);

/** Where a record's text is in its file: "page 2 of 3", "0:42–1:10", "lines 1–7". */
export function positionLabel(p: Media["position"]): string {
  if ("page" in p) return `page ${p.page} of ${p.pages}`;
  if ("start_s" in p) return `${clock(p.start_s)}–${clock(p.end_s)}`;
  return `lines ${p.line_start}–${p.line_end}`;
}

/** A source record's origin: the PDF page, the image with its OCR lines, the memo's timed segments. Nothing for other records. */
export function MediaOriginCard({ metadata, recordId }: { metadata: Record<string, unknown>; recordId?: string }) {
  const parsed = MediaMeta.safeParse(metadata);
  if (!parsed.success) return null;
  const m = parsed.data;
  const Icon = m.modality === "image" ? FileImage : m.modality === "audio" ? FileAudio : FileText;
  return (
    <Card className="mb-6" data-testid="media-origin">
      <CardHeader>
        <CardTitle className="flex flex-wrap items-center gap-2">
          <Icon className="size-4" aria-hidden />
          <span className="break-all">{m.file.name}</span>
          <Badge variant="secondary" data-testid="media-position">
            {positionLabel(m.position)}
          </Badge>
          <Badge variant="outline">{m.modality}</Badge>
          {m.pdf?.needs_ocr ? <Badge variant="warning">no text layer: awaits OCR</Badge> : null}
          {m.ocr?.low_confidence ? <Badge variant="warning">low OCR confidence ({m.ocr.mean_confidence})</Badge> : null}
          {m.transcript?.status === "awaiting" ? <Badge variant="warning">awaits transcription</Badge> : null}
        </CardTitle>
        <CardDescription>
          {m.document?.title ? <>“{m.document.title}”{m.document.author ? ` by ${m.document.author}` : ""} · </> : null}
          {m.file.type} · {kb(m.file.bytes)} · sha256 <code title={m.file.sha256}>{m.file.sha256.slice(0, 12)}</code>
          {m.image ? ` · ${m.image.width}×${m.image.height}` : null}
        </CardDescription>
      </CardHeader>
      {m.modality === "image" || m.transcript?.segments?.length || m.document?.headings?.length ? (
        <CardContent className="min-w-0">
          {m.modality === "image" ? <ImageOcr m={m} recordId={recordId} /> : null}
          {m.transcript?.segments?.length ? <Segments segments={m.transcript.segments} model={m.transcript.model} /> : null}
          {m.document?.headings?.length ? (
            <ol className="space-y-0.5 text-sm" aria-label="Headings">
              {m.document.headings.slice(0, 40).map((h, i) => (
                <li key={i} style={{ paddingLeft: `${(h.level - 1) * 0.9}rem` }}>
                  <span className="text-muted-foreground">line {h.line} · </span>
                  {h.text}
                </li>
              ))}
            </ol>
          ) : null}
        </CardContent>
      ) : null}
    </Card>
  );
}

function ImageOcr({ m, recordId }: { m: Media; recordId?: string }) {
  const { workspace } = useWorkspace();
  const trpc = useTRPC();
  // The stored original (bounded, server/importers/image.ts), read through the record: the thumbnail until it arrives.
  const original = useQuery({ ...trpc.record.original.queryOptions({ workspaceId: workspace.id, id: recordId ?? "" }), enabled: Boolean(recordId && m.image?.original), staleTime: Infinity, retry: false });
  return (
    <div className="flex flex-wrap gap-4" data-testid="image-ocr">
      {original.data ? (
        <a href={original.data.dataUrl} download={m.file.name} className="shrink-0 self-start" title={`${original.data.width}×${original.data.height} · ${kb(original.data.bytes)}`}>
          {/* A data URL read through the record: next/image adds nothing here. */}
          {/* eslint-disable-next-line @next/next/no-img-element */}
          <img src={original.data.dataUrl} alt={`Image ${m.file.name}`} data-testid="image-original" className="h-auto max-h-96 max-w-xs rounded border bg-white sm:max-w-sm" />
        </a>
      ) : m.image?.thumbnail ? (
        // A data URL the importer made (≤ 160 px WebP): next/image adds nothing here.
        // eslint-disable-next-line @next/next/no-img-element
        <img src={m.image.thumbnail} alt={`Thumbnail of ${m.file.name}`} className="h-auto max-w-40 shrink-0 self-start rounded border bg-white" />
      ) : (
        <p className="text-sm text-muted-foreground">No thumbnail stored: the text below is what OCR read in {m.file.name}.</p>
      )}
      <ul className="min-w-0 shrink grow basis-48 space-y-1 text-sm">
        {(m.ocr?.lines ?? []).map((l, i) => (
          <li key={i} className="flex items-baseline gap-2">
            <span className={`min-w-0 break-words ${l.low ? "text-amber-600 dark:text-amber-400" : ""}`}>{l.text}</span>
            <span className="shrink-0 text-xs text-muted-foreground">{l.confidence}%</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Segments({ segments, model }: { segments: Array<{ start: number; end: number; text: string }>; model?: string }) {
  return (
    <div data-testid="memo-segments">
      <ol className="space-y-1 text-sm">
        {segments.map((s, i) => (
          <li key={i} className="flex flex-wrap items-baseline gap-x-2">
            <span className="shrink-0 font-mono text-xs text-muted-foreground tabular-nums">
              {clock(s.start)}–{clock(s.end)}
            </span>
            <span className="min-w-0 break-words">{s.text}</span>
          </li>
        ))}
      </ol>
      {model ? <p className="mt-2 text-xs text-muted-foreground">Transcribed by {model}.</p> : null}
    </div>
  );
}
