"use client";
/**
 * Client-side shapes and helpers for the search and record procedures (they follow
 * `server/search/search.ts` and `server/search/provenance.ts`).
 */

export interface RecordSummary {
  id: string;
  step: string;
  scope: string;
  content: string;
  metadata: Record<string, unknown>;
  createdAt: Date | string;
  sourceCount: number;
  onBranch?: boolean | null;
  depth?: number;
}

export interface SearchHit extends RecordSummary {
  altitude?: number;
  snippet?: string;
  highlights?: Array<[number, number]>;
  score?: { fts: number | null; semantic: number | null; fused: number };
  lowerHits?: Array<{ id: string; step: string; altitude: number }>;
}

export interface SearchResult {
  mode?: string;
  steps?: string[];
  hits: SearchHit[];
  notice?: string;
}

export interface RecordDetail extends RecordSummary {
  pipelineId: string;
  stepVersionHash: string;
  materializationKey: string;
  contentFingerprint: string;
  audit: Record<string, unknown> | null;
  runId: string | null;
  childCount: number;
  embeddings?: Array<{ model: string; dimensions: number }>;
}

export interface LineageResult {
  root: string;
  nodes: Array<{ id: string; step: string; scope: string; preview: string; depth: number; onBranch: boolean | null }>;
  edges: Array<{ parent: string; child: string; position: number }>;
  truncated: boolean;
}

/** Normalizes whichever result shape the search procedure returns. */
export function toSearchResult(data: unknown): SearchResult {
  if (!data) return { hits: [] };
  if (Array.isArray(data)) return { hits: data as SearchHit[] };
  const d = data as { hits?: SearchHit[]; results?: SearchHit[] };
  return { ...(data as object), hits: d.hits ?? d.results ?? [] } as SearchResult;
}

export function toRecords(data: unknown): RecordSummary[] {
  if (!data) return [];
  if (Array.isArray(data)) return data as RecordSummary[];
  const d = data as { records?: RecordSummary[]; leaves?: RecordSummary[]; sources?: RecordSummary[] };
  return d.records ?? d.leaves ?? d.sources ?? [];
}

/** A window of `text` around the first occurrence of any query word, for previews. */
export function excerpt(text: string, query: string | undefined, length = 220): string {
  const clean = text.replace(/\s+/g, " ").trim();
  if (clean.length <= length) return clean;
  const words = (query ?? "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 2);
  const lower = clean.toLowerCase();
  const phrase = (query ?? "").toLowerCase().trim();
  let at = phrase ? lower.indexOf(phrase) : -1;
  for (const w of words) {
    if (at >= 0) break;
    at = lower.indexOf(w);
  }
  if (at < 0) return `${clean.slice(0, length)}…`;
  const start = Math.max(0, at - Math.floor(length / 3));
  return `${start > 0 ? "…" : ""}${clean.slice(start, start + length)}${start + length < clean.length ? "…" : ""}`;
}

export function metaString(meta: Record<string, unknown>, path: string): string | undefined {
  let cur: unknown = meta;
  for (const k of path.split(".")) cur = cur && typeof cur === "object" ? (cur as Record<string, unknown>)[k] : undefined;
  return cur == null ? undefined : String(cur);
}

export function recordLabel(r: RecordSummary): string {
  const m = r.metadata ?? {};
  return (
    metaString(m, "chat.title") ??
    metaString(m, "time.period") ??
    metaString(m, "title") ??
    metaString(m, "source.path") ??
    r.id.slice(0, 10)
  );
}
