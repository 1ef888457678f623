/**
 * Shadow traffic (issue 37): a branch set to receive a copy of the live searches, asks, briefs and
 * walks served on main, for a period. The copy is taken after the real answer is built
 * (`shadowServed` returns at once and does its work on a later tick) and answered by one background
 * worker from a bounded queue: when the queue is full the copy is dropped and counted, never
 * waited for, so the real response is neither slowed nor changed. The worker answers a copy only
 * when no live request is in flight in this process (services/live-requests.ts) and yields between
 * copies, so live requests do not queue behind shadow work for the database or the CPU; under
 * steady load copies wait, and past the queue or 30 s of waiting are dropped and counted. Each answer is stored beside what main served
 * (ids and latency); eval/shadow-report.ts turns them into replay's report.
 *
 * An ask's copy runs the branch's evidence retrieval with the offline answer (no model spend).
 */
import type { Db } from "../core/db";
import { badRequest, DomainError, notFound } from "../core/errors";
import { search } from "../search/search";
import { walk } from "../search/walk";
import {
  activeShadows,
  addShadowDrops,
  countOpenShadows,
  createShadow,
  findShadow,
  insertShadowResult,
  listShadows,
  openShadowOn,
  stopShadowRow,
  updateShadowPeriod,
  type ShadowRow,
} from "../store/shadow";
import { effectiveScope, type KeyRestrictions } from "./api-keys";
import { ask } from "./ask";
import { processState } from "../core/process-state";
import { requestCacheMs, TtlCache } from "../core/ttl-cache";
import { settleBackgroundWork, trackBackground } from "./background";
import { brief } from "./brief";
import { liveRequestsInFlight, whenNoLiveRequest } from "./live-requests";
import { servedHits, type QueryKind } from "./query-log";
import { maySeeRecord, visibleOnly } from "./record-visibility";

export type { ShadowRow };

/** Copies waiting at most (per process); past it a copy is dropped and counted. */
export const SHADOW_QUEUE_MAX = Math.max(1, Number(process.env.SYNTHEX_SHADOW_QUEUE) || 64);
/** A copy that waited longer than this is dropped (its comparison would say more about the queue than the branch). */
const MAX_WAIT_MS = 30_000;
/** Results kept per shadow; a shadow that reaches it stops ("full"). */
export const SHADOW_MAX_RESULTS = 10_000;
/** Shadows open at once per pipeline (each one adds its own background work per live query). */
export const SHADOW_MAX_OPEN = 3;
export const SHADOW_DEFAULT_MINUTES = 24 * 60;
export const SHADOW_MAX_MINUTES = 30 * 24 * 60;

// ---------------------------------------------------------------------------------------------
// Setting a shadow

export interface ShadowPeriod {
  /** Start (default now). */
  startsAt?: Date;
  /** End; or `minutes` from the start (default 24 h). */
  endsAt?: Date;
  minutes?: number;
}

function periodOf(p: ShadowPeriod, now = new Date()): { startsAt: Date; endsAt: Date } {
  const startsAt = p.startsAt ?? now;
  if (Number.isNaN(startsAt.getTime())) throw badRequest("startsAt: not a date.");
  if (p.endsAt && p.minutes !== undefined) throw badRequest("Give either endsAt or minutes, not both.");
  if (p.minutes !== undefined && (!Number.isInteger(p.minutes) || p.minutes < 1 || p.minutes > SHADOW_MAX_MINUTES)) {
    throw badRequest(`minutes: a whole number of minutes from 1 to ${SHADOW_MAX_MINUTES} (30 days).`);
  }
  const endsAt = p.endsAt ?? new Date(startsAt.getTime() + (p.minutes ?? SHADOW_DEFAULT_MINUTES) * 60_000);
  if (Number.isNaN(endsAt.getTime())) throw badRequest("endsAt: not a date.");
  if (endsAt <= now) throw badRequest("endsAt: already past; a shadow must end in the future.");
  if (endsAt <= startsAt) throw badRequest("endsAt: must be after the start.");
  if (endsAt.getTime() - startsAt.getTime() > SHADOW_MAX_MINUTES * 60_000) throw badRequest("The period is longer than 30 days.");
  return { startsAt, endsAt };
}

/**
 * Active shadows are read per served call on main: cached per pipeline with the request path's bound
 * (SYNTHEX_AUTH_CACHE_MS, at most 1 s; a start or stop made here is seen at once).
 */
const activeCache = processState("shadow.activeCache", () => new TtlCache<ShadowRow[]>(requestCacheMs()));
const forget = (pipelineId: string) => activeCache.delete(pipelineId);

/**
 * Set `branch` to shadow main for a period. A branch already shadowing gets the new period (its
 * results so far are kept); otherwise a new shadow starts with empty counters.
 */
export async function startShadow(db: Db, input: { workspaceId: string; pipelineId: string; branch: string; actor: string } & ShadowPeriod): Promise<ShadowRow> {
  if (input.branch === "main") throw badRequest("branch: main serves the live queries; shadow them on another branch.");
  const period = periodOf(input);
  const open = await openShadowOn(db, input.workspaceId, input.pipelineId, input.branch);
  let row: ShadowRow;
  if (open) row = await updateShadowPeriod(db, open.id, period);
  else {
    if ((await countOpenShadows(db, input.workspaceId, input.pipelineId)) >= SHADOW_MAX_OPEN) {
      throw badRequest(`This pipeline already has ${SHADOW_MAX_OPEN} shadows open: stop one first.`);
    }
    row = await createShadow(db, { workspaceId: input.workspaceId, pipelineId: input.pipelineId, branch: input.branch, createdBy: input.actor, ...period });
  }
  forget(input.pipelineId);
  return row;
}

/** Stop the open shadow of `branch` (404 when it has none). Results stay for the report. */
export async function stopShadow(db: Db, input: { workspaceId: string; pipelineId: string; branch: string }): Promise<ShadowRow> {
  const open = await openShadowOn(db, input.workspaceId, input.pipelineId, input.branch);
  if (!open) throw notFound(`Branch "${input.branch}" is not shadowing main.`);
  const stopped = await stopShadowRow(db, input.workspaceId, open.id, "stopped");
  forget(input.pipelineId);
  return stopped ?? open;
}

export async function shadowsOf(db: Db, workspaceId: string, pipelineId: string, branch?: string): Promise<ShadowRow[]> {
  return listShadows(db, workspaceId, pipelineId, branch);
}

/** The shadow a report is about: by id, else the latest of `branch`. */
export async function pickShadow(db: Db, workspaceId: string, pipelineId: string, sel: { id?: string; branch: string }): Promise<ShadowRow | null> {
  if (sel.id) return findShadow(db, workspaceId, pipelineId, sel.id);
  return (await listShadows(db, workspaceId, pipelineId, sel.branch, 1))[0] ?? null;
}

// ---------------------------------------------------------------------------------------------
// Taking copies

export interface ServedCall {
  workspaceId: string;
  pipelineId: string;
  /** The branch that served the call: only main's calls are copied. */
  branch: string;
  restrictions: KeyRestrictions | null;
  kind: QueryKind;
  input: Record<string, unknown>;
  output: unknown;
  latencyMs: number;
}

interface Copy {
  shadow: Pick<ShadowRow, "id" | "workspaceId" | "pipelineId" | "branch">;
  call: Omit<ServedCall, "output">;
  query: string;
  scope: string | undefined;
  k: number;
  main: { ids: string[]; latencyMs: number };
  cited: string[];
  queuedAt: number;
}

// One queue, worker and set of counters per process, whichever module copy served the call
// (server/core/process-state.ts: Next's routes and the direct /api/v1 path load this file apart).
const queue = processState("shadow.queue", () => [] as Copy[]);
/** Drops not yet added to their shadow's row (written with the worker's next pass, or a second later). */
const pendingDrops = processState("shadow.pendingDrops", () => new Map<string, number>());
/** The worker draining the queue; the database copies are answered on (the process's one), for `settleShadow`; the drops' timer. */
const drainer = processState("shadow.drainer", () => ({ worker: null as Promise<void> | null, lastDb: null as Db | null, dropFlush: null as NodeJS.Timeout | null }));
const stats = processState("shadow.stats", () => ({ taken: 0, dropped: 0, answered: 0, failed: 0 }));

/** Counters of this process (the bench prints them). */
export function shadowStats() {
  return { ...stats, queued: queue.length };
}

function active(db: Db, pipelineId: string): Promise<ShadowRow[]> {
  return activeCache.get(pipelineId, () => activeShadows(db, pipelineId));
}

const depthOf = (kind: QueryKind, input: Record<string, unknown>, served: number) =>
  Math.min(50, Math.max(1, kind === "ask" ? Number(input.k) || served : kind === "brief" ? served : Number(input.limit) || served));

/**
 * Hand a served call to the branches shadowing main. Returns at once; nothing here can throw into
 * or wait in the caller. With no shadow on (the cached answer) it costs a map lookup on a later tick.
 */
export function shadowServed(db: Db, call: ServedCall): void {
  if (call.branch !== "main") return;
  drainer.lastDb = db;
  // Shadows active when the call was served (the copy may be taken a while later).
  const servedAt = Date.now();
  const work = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
    const shadows = (await active(db, call.pipelineId)).filter((s) => s.workspaceId === call.workspaceId && s.startsAt.getTime() <= servedAt && s.endsAt.getTime() > servedAt);
    if (!shadows.length) return;
    const served = servedHits(call.kind, call.output);
    const mainIds = served.hits.map((h) => h.id);
    const query = typeof call.input.query === "string" ? call.input.query : typeof call.input.question === "string" ? call.input.question : "";
    const scope = effectiveScope(call.restrictions, call.input.scope as string | undefined);
    const rest: Copy["call"] = { workspaceId: call.workspaceId, pipelineId: call.pipelineId, branch: call.branch, restrictions: call.restrictions, kind: call.kind, input: call.input, latencyMs: call.latencyMs };
    for (const s of shadows) {
      stats.taken++;
      if (queue.length >= SHADOW_QUEUE_MAX) {
        drop(db, s.id);
        continue;
      }
      queue.push({
        shadow: { id: s.id, workspaceId: s.workspaceId, pipelineId: s.pipelineId, branch: s.branch },
        call: rest,
        query,
        scope,
        k: depthOf(call.kind, call.input, mainIds.length),
        main: { ids: mainIds, latencyMs: call.latencyMs },
        cited: served.cited,
        queuedAt: Date.now(),
      });
    }
    kick(db);
  });
  trackBackground(work).catch((err: unknown) => console.warn(`[synthex shadow] copy not taken: ${(err as Error).message}`));
}

function drop(db: Db, shadowId: string) {
  stats.dropped++;
  pendingDrops.set(shadowId, (pendingDrops.get(shadowId) ?? 0) + 1);
  if (!drainer.dropFlush) {
    drainer.dropFlush = setTimeout(() => {
      drainer.dropFlush = null;
      void trackBackground(flushDrops(db)).catch(() => {});
    }, 1000);
    drainer.dropFlush.unref?.();
  }
}

async function flushDrops(db: Db) {
  for (const [id, n] of [...pendingDrops]) {
    pendingDrops.delete(id);
    await addShadowDrops(db, id, n).catch((err: unknown) => console.warn(`[synthex shadow] drops not counted: ${(err as Error).message}`));
  }
}

function kick(db: Db) {
  if (drainer.worker) return;
  drainer.worker = trackBackground(drain(db)).finally(() => {
    drainer.worker = null;
    if (queue.length) kick(db);
  });
}

const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function drain(db: Db) {
  for (;;) {
    // Only when no live request is in flight, still none a turn later (one arriving now is counted first).
    do {
      await whenNoLiveRequest();
      await yieldTurn();
    } while (liveRequestsInFlight() > 0);
    if (!queue.length) break;
    const copy = queue.shift()!;
    if (Date.now() - copy.queuedAt > MAX_WAIT_MS) {
      drop(db, copy.shadow.id);
      continue;
    }
    await answer(db, copy).catch((err: unknown) => console.warn(`[synthex shadow] result not kept: ${(err as Error).message}`));
  }
  await flushDrops(db);
}

/** The same procedure main served, on the shadow branch, as the same caller would see it. */
async function onBranch(db: Db, copy: Copy): Promise<unknown> {
  const { kind, input, restrictions } = copy.call;
  const base = { workspaceId: copy.shadow.workspaceId, pipelineId: copy.shadow.pipelineId, branch: copy.shadow.branch };
  if (kind === "search") {
    const found = await search(db, { ...(input as unknown as Parameters<typeof search>[1]), ...base, scope: copy.scope, snippets: false });
    return { ...found, hits: visibleOnly(restrictions, found.hits) };
  }
  if (kind === "ask") {
    // The evidence retrieval of the branch; the answer is the offline one (no model is called).
    return ask(db, { ...(input as unknown as Parameters<typeof ask>[1]), ...base, scope: copy.scope, restrictions, model: undefined, criticModel: undefined });
  }
  if (kind === "walk") {
    return walk(db, { ...(input as unknown as Parameters<typeof walk>[1]), ...base, scope: copy.scope, visible: (r) => maySeeRecord(restrictions, r) });
  }
  return brief(db, { ...(input as unknown as Parameters<typeof brief>[1]), ...base, scope: copy.scope ?? "", restrictions });
}

async function answer(db: Db, copy: Copy) {
  const started = performance.now();
  let ids: string[] = [];
  let error: string | null = null;
  try {
    const output = await onBranch(db, copy);
    ids = servedHits(copy.call.kind, output).hits.map((h) => h.id);
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
    // The branch is gone: the shadow ends (its results so far stay).
    if (err instanceof DomainError && err.code === "NOT_FOUND" && /branch/i.test(error)) {
      await stopShadowRow(db, copy.shadow.workspaceId, copy.shadow.id, `branch gone: ${error.slice(0, 200)}`);
      forget(copy.shadow.pipelineId);
    }
  }
  const latencyMs = Math.round((performance.now() - started) * 10) / 10;
  const total = await insertShadowResult(db, {
    workspaceId: copy.shadow.workspaceId,
    pipelineId: copy.shadow.pipelineId,
    shadowId: copy.shadow.id,
    kind: copy.call.kind,
    query: copy.query.slice(0, 4000),
    scope: copy.scope ?? null,
    k: copy.k,
    main: copy.main,
    branch: { ids, latencyMs },
    cited: copy.cited,
    error,
  });
  if (error) stats.failed++;
  else stats.answered++;
  if (total >= SHADOW_MAX_RESULTS) {
    await stopShadowRow(db, copy.shadow.workspaceId, copy.shadow.id, `full: ${SHADOW_MAX_RESULTS} results`);
    forget(copy.shadow.pipelineId);
  }
}

/** Wait until every copy taken so far is answered or dropped, and its counters are written (tests, benches). */
export async function settleShadow(): Promise<void> {
  do {
    await settleBackgroundWork();
    if (drainer.worker) await drainer.worker;
  } while (drainer.worker || queue.length);
  if (drainer.lastDb && pendingDrops.size) await flushDrops(drainer.lastDb);
}
