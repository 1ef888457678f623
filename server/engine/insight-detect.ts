/**
 * Proactive insights over a scope's beliefs (Synapsis, seed 004 §5): new connections between
 * entities (P0), a digest per month (P1) and contradictions — two current beliefs of one slot that
 * disagree (P2). Pure functions, no model; deterministic, so an unchanged graph yields the same
 * insights and a re-run makes nothing new.
 */
import { sha256 } from "../pipeline/hashing";
import type { InsightKind } from "../pipeline/spec";
import { CO_MENTION, type BeliefMeta } from "./belief-extract";
import type { EntityMeta } from "./entity-extract";

/** The structured data of an insight record (`metadata.custom.insight`, the Synapsis contract). */
export interface InsightMeta {
  id: string;
  kind: InsightKind;
  title: string;
  entities: string[];
  beliefs: string[];
  period: string | null;
  detectedAt: string | null;
}

export interface Insight extends InsightMeta {
  /** The insight's longer text (the record's content). */
  text: string;
}

const insightId = (scope: string, kind: InsightKind, key: string) => `ins_${sha256([scope, kind, key].join("\u0000")).slice(0, 16)}`;
const day = (t: string | null) => (t ? t.slice(0, 10) : "undated");
const maxTime = (ts: Array<string | null>) => ts.filter((t): t is string => !!t).sort().at(-1) ?? null;
const edge = (b: BeliefMeta) => `${b.subjectName} — ${b.polarity === "negative" ? "not " : ""}${b.predicate} — ${b.object}`;

/** Two current beliefs of one slot with different values: their valid intervals overlap. */
export function contradictions(scope: string, beliefs: BeliefMeta[]): Insight[] {
  const slots = new Map<string, BeliefMeta[]>();
  for (const b of beliefs) {
    if (b.status !== "current" || b.predicate === CO_MENTION) continue;
    const key = b.functional ? `${b.subject}\u0000${b.predicate}` : `${b.subject}\u0000${b.predicate}\u0000${b.object.toLowerCase()}`;
    slots.set(key, [...(slots.get(key) ?? []), b]);
  }
  const out: Insight[] = [];
  for (const group of slots.values()) {
    const sorted = [...group].sort((a, b) => (a.id < b.id ? -1 : 1));
    for (let i = 0; i < sorted.length; i++) {
      for (let j = i + 1; j < sorted.length; j++) {
        const [a, b] = [sorted[i]!, sorted[j]!];
        if (a.object.toLowerCase() === b.object.toLowerCase() && a.polarity === b.polarity) continue;
        const title = `Contradiction: ${edge(a)} (${day(a.validFrom)}) vs ${edge(b)} (${day(b.validFrom)})`;
        const entities = [...new Set([a.subject, a.objectEntity, b.objectEntity].filter((e): e is string => !!e))];
        out.push({
          id: insightId(scope, "contradiction", `${a.id}\u0000${b.id}`),
          kind: "contradiction",
          title,
          text: `${title}. Both are current: neither source is later than the other, so neither supersedes the other.${a.evidence ? `\n- “${a.evidence}”` : ""}${b.evidence ? `\n- “${b.evidence}”` : ""}`,
          entities,
          beliefs: [a.id, b.id],
          period: null,
          detectedAt: maxTime([a.validFrom, b.validFrom]),
        });
      }
    }
  }
  return out;
}

/** The first belief that links each pair of entities (a belief with an object entity, co-mentions included). */
export function connections(scope: string, beliefs: BeliefMeta[]): Insight[] {
  const first = new Map<string, BeliefMeta>();
  // Earliest first; at the same time a stated relation beats a co-mention; then by id.
  const rank = (b: BeliefMeta) => `${b.validFrom ?? ""}\u0000${b.predicate === CO_MENTION ? 1 : 0}\u0000${b.id}`;
  for (const b of [...beliefs].sort((x, y) => (rank(x) < rank(y) ? -1 : 1))) {
    if (!b.objectEntity || b.objectEntity === b.subject) continue;
    const pair = [b.subject, b.objectEntity].sort().join("\u0000");
    if (!first.has(pair)) first.set(pair, b);
  }
  return [...first.entries()].map(([pair, b]) => {
    const title = `New connection: ${b.subjectName} ↔ ${b.object} (${b.predicate}, ${day(b.validFrom)})`;
    return {
      id: insightId(scope, "connection", pair),
      kind: "connection",
      title,
      text: `${title}. First linked by: ${edge(b)}${b.evidence ? ` — “${b.evidence}”` : ""}`,
      entities: pair.split("\u0000"),
      beliefs: [b.id],
      period: null,
      detectedAt: b.validFrom,
    };
  });
}

/** One digest per month: mentions by entity, new beliefs, changed (superseded) beliefs. */
export function digests(scope: string, beliefs: BeliefMeta[], entities: EntityMeta[]): Insight[] {
  const months = new Map<string, { mentions: Map<string, number>; added: BeliefMeta[]; changed: BeliefMeta[]; last: string | null }>();
  const month = (m: string) => {
    let d = months.get(m);
    if (!d) months.set(m, (d = { mentions: new Map(), added: [], changed: [], last: null }));
    return d;
  };
  const names = new Map<string, string>();
  for (const e of entities) {
    names.set(e.id, e.name);
    for (const [m, n] of Object.entries(e.months ?? {})) month(m).mentions.set(e.id, n);
  }
  for (const b of beliefs) {
    names.set(b.subject, b.subjectName);
    if (b.objectEntity) names.set(b.objectEntity, b.object);
    if (b.validFrom) {
      const d = month(b.validFrom.slice(0, 7));
      d.last = maxTime([d.last, b.validFrom]);
      if (b.predicate !== CO_MENTION) d.added.push(b);
      // Without entity records, mentions are the sources of the beliefs about each entity.
      if (!entities.length) for (const id of [b.subject, b.objectEntity]) if (id) d.mentions.set(id, (d.mentions.get(id) ?? 0) + b.sources.length);
    }
    if (b.status === "superseded" && b.validTo) {
      const d = month(b.validTo.slice(0, 7));
      d.changed.push(b);
      d.last = maxTime([d.last, b.validTo]);
    }
  }
  const out: Insight[] = [];
  for (const [period, d] of [...months.entries()].sort()) {
    const top = [...d.mentions.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 5);
    const mentionText = top.map(([id, n]) => `${names.get(id) ?? id} ${n}×`).join(", ");
    const title = `Digest ${period}: ${mentionText || "no mentions"}; ${d.added.length} new belief${d.added.length === 1 ? "" : "s"}, ${d.changed.length} changed`;
    const lines = [
      title,
      ...d.changed.slice(0, 10).map((b) => `- changed: ${edge(b)} (until ${day(b.validTo)})`),
      ...d.added.slice(0, 10).map((b) => `- new: ${edge(b)} (${day(b.validFrom)})`),
    ];
    out.push({
      id: insightId(scope, "digest", period),
      kind: "digest",
      title,
      text: lines.join("\n"),
      entities: top.map(([id]) => id),
      beliefs: [...d.changed, ...d.added].map((b) => b.id).slice(0, 50),
      period,
      detectedAt: d.last ?? `${period}-01T00:00:00.000Z`,
    });
  }
  return out;
}

/** Every insight of a scope, of the kinds asked for, sorted by id. */
export function detectInsights(
  scope: string,
  beliefs: BeliefMeta[],
  entities: EntityMeta[],
  kinds: readonly InsightKind[] = ["connection", "digest", "contradiction"],
): Insight[] {
  const out: Insight[] = [];
  if (kinds.includes("contradiction")) out.push(...contradictions(scope, beliefs));
  if (kinds.includes("connection")) out.push(...connections(scope, beliefs));
  if (kinds.includes("digest")) out.push(...digests(scope, beliefs, entities));
  return out.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** Newest first (undated last), for the feed. */
export function newestFirst(insights: Insight[]): Insight[] {
  return [...insights].sort((a, b) => ((b.detectedAt ?? "") < (a.detectedAt ?? "") ? -1 : (b.detectedAt ?? "") > (a.detectedAt ?? "") ? 1 : a.id < b.id ? -1 : 1));
}
