/**
 * From retrieved records to the benchmark sessions and turns they hold, through provenance: each
 * record's lineage is walked up to source records (one per benchmark session, tagged with
 * `custom.eval.{sample,session}`). A source record holds every turn of its session; a derived
 * record holds the turns whose text it still contains (a window, a chunk, an extractive
 * summary). A derived record that quotes none of its sessions' turns (an abstractive summary)
 * is counted as holding all of them, as the baseline counts a whole session.
 */
import type { Db } from "../core/db";
import type { TracedHit } from "./metrics";
import { estimateContextTokens } from "./metrics";
import { lineageRecordsOfSteps, lineageSourceTurns } from "../store/provenance-reads";
import type { Session } from "./types";

export interface SourceSession {
  sample: string;
  session: string;
}

export interface HitRecord {
  id: string;
  step: string;
  content: string;
}

const normalize = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();

/** Pieces of a turn whose presence in a record means the record holds that turn. */
function turnPieces(text: string): string[] {
  const norm = normalize(text);
  const sentences = norm.split(/(?<=[.!?])\s+/).filter((s) => s.length >= 12);
  return sentences.length ? sentences : [norm];
}

export class ProvenanceTracer {
  private readonly leavesOf = new Map<string, string[]>();
  private readonly sessionOfSource = new Map<string, SourceSession | null>();
  private readonly pieces = new Map<string, string[]>();
  /** top id → "sample\u0000session" → the turn numbers its lineage records came from. */
  private readonly sourceTurnsOf = new Map<string, Map<string, number[]>>();

  constructor(
    private readonly db: Db,
    private readonly workspaceId: string,
    private readonly sourceSteps: string[],
    /** sample → session id → session */
    private readonly sessions: Map<string, Map<string, Session>>,
  ) {}

  /** Loads the source records each id reaches (cached across questions). */
  async load(ids: string[]): Promise<void> {
    const missing = [...new Set(ids)].filter((id) => !this.leavesOf.has(id));
    if (!missing.length) return;
    const rows = await lineageRecordsOfSteps(this.db, this.workspaceId, missing, this.sourceSteps);
    for (const id of missing) this.leavesOf.set(id, []);
    for (const r of await lineageSourceTurns(this.db, this.workspaceId, missing, this.sourceSteps)) {
      const meta = r.evalMeta;
      if (!meta || typeof meta.sample !== "string" || typeof meta.session !== "string") continue;
      const bySession = this.sourceTurnsOf.get(r.top) ?? new Map<string, number[]>();
      const key = `${meta.sample}\u0000${meta.session}`;
      bySession.set(key, [...(bySession.get(key) ?? []), ...r.turns]);
      this.sourceTurnsOf.set(r.top, bySession);
    }
    for (const r of rows) {
      this.leavesOf.get(r.top)!.push(r.id);
      if (!this.sessionOfSource.has(r.id)) {
        const meta = r.evalMeta;
        this.sessionOfSource.set(r.id, meta && typeof meta.sample === "string" && typeof meta.session === "string" ? { sample: meta.sample, session: meta.session } : null);
      }
    }
  }

  private turnPieces(sample: string, session: Session): Array<{ id: string; pieces: string[] }> {
    return session.turns.map((t) => {
      const key = `${sample}\u0000${t.id}`;
      let p = this.pieces.get(key);
      if (!p) {
        p = turnPieces(t.text);
        this.pieces.set(key, p);
      }
      return { id: t.id, pieces: p };
    });
  }

  /** A loaded record as the metrics see it. */
  trace(hit: HitRecord): TracedHit {
    const leaves = this.leavesOf.get(hit.id) ?? [];
    const located = leaves.map((l) => this.sessionOfSource.get(l)).filter((s): s is SourceSession => !!s);
    const isSource = this.sourceSteps.includes(hit.step);
    const turns: string[] = [];
    const sessions: string[] = [];
    const content = isSource ? "" : normalize(hit.content);
    const unmatched: Session[] = [];
    let quoted = 0;
    for (const loc of located) {
      const session = this.sessions.get(loc.sample)?.get(loc.session);
      if (!session) continue;
      if (!sessions.includes(loc.session)) sessions.push(loc.session);
      if (isSource) {
        for (const t of session.turns) turns.push(t.id);
        continue;
      }
      let found = 0;
      for (const t of this.turnPieces(loc.sample, session)) {
        if (t.pieces.some((p) => content.includes(p))) {
          turns.push(t.id);
          found++;
        }
      }
      quoted += found;
      if (!found) unmatched.push(session);
    }
    // Abstractive: nothing quoted from any session → the record stands for the turns its lineage
    // came from (`custom.turns` of a record made from a session: a fact of one turn), else for its
    // whole sessions.
    if (!isSource && quoted === 0) {
      for (const loc of located) {
        const session = this.sessions.get(loc.sample)?.get(loc.session);
        if (!session || !unmatched.includes(session)) continue;
        const numbers = this.sourceTurnsOf.get(hit.id)?.get(`${loc.sample}\u0000${loc.session}`);
        const known = numbers?.map((n) => session.turns[n - 1]?.id).filter((id): id is string => !!id) ?? [];
        for (const id of known.length ? known : session.turns.map((t) => t.id)) turns.push(id);
      }
    }
    return { id: hit.id, sessions, turns: [...new Set(turns)], tokens: estimateContextTokens(hit.content), reachesSource: leaves.length > 0, content: hit.content };
  }
}
