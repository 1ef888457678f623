"use client";
/**
 * Shapes of the search and record procedures, taken from the router (never redeclared), and
 * small display helpers.
 */
import type { RouterOutputs } from "@/lib/trpc";

export type SearchResult = RouterOutputs["search"]["search"];
export type SearchHit = SearchResult["hits"][number];
export type RecordSummary = RouterOutputs["record"]["sources"][number];
export type RecordDetail = RouterOutputs["record"]["get"];
export type LineageResult = RouterOutputs["record"]["lineage"];

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

export function recordLabel(r: { id: string; metadata: Record<string, unknown> | null }): string {
  const m = r.metadata ?? {};
  // A PDF page is labelled with its page: "Lease · p. 2".
  const page = (m.position as { page?: unknown } | undefined)?.page;
  const title = metaString(m, "chat.title");
  if (title && typeof page === "number") return `${title} · p. ${page}`;
  return (
    title ??
    metaString(m, "time.period") ??
    metaString(m, "title") ??
    metaString(m, "source.path") ??
    r.id.slice(0, 10)
  );
}
