/**
 * Live ingestion: an agent pushes the messages of a conversation as they happen. Each call commits
 * its messages before anything else (a run that fails, or never starts, loses nothing); a session
 * closes on an explicit `close` or after an idle gap (Synapse's 30 minutes by default,
 * SYNTHEX_SESSION_IDLE_MINUTES), and then becomes one conversation record of the source — the same
 * shape an imported chat export has — and an incremental run is requested.
 */
import { z } from "zod";
import type { Db } from "../core/db";
import { conflict, DomainError, forbidden, notFound } from "../core/errors";
import type { SourceItem } from "../core/source-item";
import { toJsonColumn } from "../core/json";
import { processState } from "../core/process-state";
import type { IngestSession } from "../generated/prisma/client";
import { conversationScopes, findSessionOwner, writingScopePrefixes } from "../store/ingest-owners";
import { effectiveScope, scopeWithin, type KeyRestrictions } from "./api-keys";
import { trackBackground } from "./background";
import { notifySourceAppended } from "./executor";
import { appendSourceRecords } from "./pipelines";
import { cachedBranch } from "./request-context";
import { startRun } from "./runs";

export const MAX_MESSAGES_PER_CALL = 1000;
const MAX_MESSAGE_CHARS = 100_000;

/** A message's own key/values (the JSON column), as the caller sent them. */
const messageMetadataSchema = z.record(z.string(), z.unknown());

export const ingestMessageSchema = z.object({
  role: z.string().trim().min(1).max(64).meta({ description: "Who spoke: user, assistant, a tool or a person's name." }),
  content: z.string().max(MAX_MESSAGE_CHARS, `A message is at most ${MAX_MESSAGE_CHARS} characters.`),
  time: z.iso.datetime({ offset: true }).optional().meta({ description: "When it was said (ISO 8601); default: when it arrived." }),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const ingestInputSchema = z.object({
  sessionId: z.string().trim().min(1).max(200).meta({ description: "The conversation these messages belong to (the caller's id)." }),
  scope: z.string().trim().max(256).optional().meta({ description: "Scope of the session's record, e.g. acme:user-42." }),
  title: z.string().trim().max(200).optional(),
  messages: z
    .array(ingestMessageSchema)
    .max(MAX_MESSAGES_PER_CALL, `At most ${MAX_MESSAGES_PER_CALL} messages per call: send the rest in further calls.`)
    .default([]),
  close: z.boolean().default(false).meta({ description: "Close the session now: it becomes a source record and a run is requested." }),
});
export type IngestInput = z.input<typeof ingestInputSchema>;

export interface IngestTarget {
  workspaceId: string;
  pipelineId: string;
  source: string;
}

export function sessionIdleMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SYNTHEX_SESSION_IDLE_MINUTES?.trim();
  const minutes = raw ? Number(raw) : 30;
  if (!Number.isFinite(minutes) || minutes <= 0) throw new Error(`SYNTHEX_SESSION_IDLE_MINUTES must be a positive number (got "${raw}").`);
  return minutes * 60_000;
}

async function requireSource(db: Db, target: IngestTarget) {
  // The spec of main, cached for at most a second (request-context.ts): a new spec version is seen within that bound.
  const { spec } = await cachedBranch(db, target.pipelineId, "main");
  const def = spec.sources.find((s) => s.name === target.source);
  if (!def) throw notFound(`Source "${target.source}" is not in this pipeline. Sources: ${spec.sources.map((s) => s.name).join(", ") || "none"}.`);
  return { def, sources: spec.sources.map((s) => s.name) };
}

/** Who is writing: the API key's restrictions, or null (a person, a key without limits, Synthex itself). */
export interface IngestCaller {
  restrictions: KeyRestrictions | null;
}

const belongsTo = (sessionId: string, scope: string) =>
  conflict(`Session "${sessionId}" belongs to scope "${scope}"; pass that scope or use another sessionId.`);

/**
 * An id belongs to the scope that made it: the scope this call writes in, decided before anything is
 * stored. Every surface (REST, MCP, tRPC, the Mem0 and Zep endpoints) comes through here.
 *
 * - A key limited to a scope writes only in it: a scope outside it is refused (403) before the id
 *   is looked up, and an id that any conversation outside its scope already uses — a live session
 *   of any source, or a source record carrying it as `chat.conversation_id` (a merge by
 *   conversation id would join that copy to the key's) — is refused with one answer (403) that
 *   names no scope and quotes nothing. Without a scope it writes in its prefix (a new session) or
 *   in the session's own scope (one inside its prefix).
 * - Any other caller naming a scope that is not the existing session's gets 409 naming the
 *   session's scope, never a silent append.
 * - A call without a scope to an existing session with a scope of its own (not the source's
 *   default) is a follow-up that names nothing: accepted from a caller allowed every scope only
 *   when no key limited to a scope could have opened that session (no writing key of the
 *   workspace, revoked or not, has a prefix covering its scope); otherwise 409 — restate the scope.
 *   So an agent that names the scope on the first call and omits it later keeps working, and a
 *   session a limited key opened first under an id the app uses is never filled by the app's
 *   unscoped calls.
 */
async function sessionScope(
  db: Db,
  target: IngestTarget,
  source: { defaultScope: string; sources: string[] },
  input: { sessionId: string; scope?: string },
  caller: IngestCaller,
): Promise<string> {
  const r = caller.restrictions;
  const prefix = r?.scopePrefix ?? null;
  // A scope outside the key's prefix is refused whether or not the id exists.
  const named = prefix ? (input.scope === undefined ? undefined : effectiveScope(r, input.scope)) : input.scope;
  const existing = await findSessionOwner(db, { ...target, sessionId: input.sessionId });
  const own = existing && existing.workspaceId === target.workspaceId ? existing : null;
  if (prefix) {
    const scopes = await conversationScopes(db, { workspaceId: target.workspaceId, pipelineId: target.pipelineId, sessionId: input.sessionId }, source.sources);
    if (scopes.some((s) => !scopeWithin(s, prefix))) {
      throw forbidden(`sessionId: "${input.sessionId}" is a conversation outside this API key's scope "${prefix}"; send these messages under another sessionId.`);
    }
  }
  if (!own) return named ?? prefix ?? source.defaultScope;
  if (named !== undefined) {
    if (named !== own.scope) throw belongsTo(input.sessionId, own.scope);
    return own.scope;
  }
  // A follow-up without a scope.
  if (prefix || own.scope === source.defaultScope) return own.scope;
  const prefixes = await writingScopePrefixes(db, target);
  if (prefixes.some((p) => scopeWithin(own.scope, p))) {
    throw conflict(
      `Session "${input.sessionId}" belongs to scope "${own.scope}", which an API key limited to a scope can also write: pass that scope (scope: "${own.scope}") on every call, or use another sessionId.`,
    );
  }
  return own.scope;
}

/**
 * Appends messages to a session (opening it on first use); closes it when asked. One short
 * transaction: the session row is upserted with its count raised (its row lock orders concurrent
 * calls of one session, so positions never collide), then the messages are inserted at the
 * positions it reserved. A closed session or another scope rolls it back. Idle sessions are closed
 * by the sweeper beside the app (`npm start`, `npm run worker`), not on the request's path.
 */
/**
 * May this caller add to the existing session `sessionId`, naming `scope` or not? The decision
 * `ingestMessages` makes, for a surface that writes a session's messages elsewhere (a Zep thread's
 * `addMessages` is one more session of the thread: it writes the thread without naming its user).
 * Answers the session's scope, or throws what `ingestMessages` would.
 */
export async function assertMayWriteSession(db: Db, target: IngestTarget, input: { sessionId: string; scope?: string }, caller: IngestCaller): Promise<string> {
  const { def, sources } = await requireSource(db, target);
  return sessionScope(db, target, { defaultScope: def.scope ?? "", sources }, input, caller);
}

export async function ingestMessages(db: Db, target: IngestTarget, raw: IngestInput, now = new Date(), caller: IngestCaller = { restrictions: null }) {
  const input = ingestInputSchema.parse(raw);
  const { def, sources } = await requireSource(db, target);
  const scope = await sessionScope(db, target, { defaultScope: def.scope ?? "", sources }, input, caller);
  const n = input.messages.length;
  const session = await db.$transaction(async (tx) => {
    const row = await tx.ingestSession.upsert({
      where: { pipelineId_source_sessionId: { pipelineId: target.pipelineId, source: target.source, sessionId: input.sessionId } },
      create: {
        workspaceId: target.workspaceId,
        pipelineId: target.pipelineId,
        source: target.source,
        sessionId: input.sessionId,
        scope,
        title: input.title ?? null,
        lastMessageAt: now,
        messageCount: n,
      },
      update: { messageCount: { increment: n }, lastMessageAt: now },
    });
    // Opened meanwhile by another call in another scope: nothing of this call is kept.
    if (row.scope !== scope) throw belongsTo(input.sessionId, row.scope);
    if (row.status !== "open") {
      throw conflict(`Session "${input.sessionId}" is closed (it became record ${row.recordId ?? "?"}): send later messages under a new sessionId.`);
    }
    if (n) {
      const first = row.messageCount - n;
      await tx.ingestMessage.createMany({
        data: input.messages.map((m, i) => ({
          workspaceId: target.workspaceId,
          sessionId: row.id,
          position: first + i,
          role: m.role,
          content: m.content,
          time: m.time ? new Date(m.time) : now,
          metadata: toJsonColumn(m.metadata ?? {}),
        })),
      });
    }
    // A title given later than the first call names a session that had none.
    return input.title && !row.title ? tx.ingestSession.update({ where: { id: row.id }, data: { title: input.title } }) : row;
  });
  const closed = input.close ? await closeSession(db, session, now) : null;
  return {
    sessionId: input.sessionId,
    accepted: n,
    messageCount: session.messageCount,
    status: closed ? ("closed" as const) : ("open" as const),
    recordId: closed?.recordId ?? null,
    runRequested: closed?.runRequested ?? false,
  };
}

function conversationItem(session: IngestSession, messages: Array<{ role: string; content: string; time: Date }>): SourceItem {
  const first = messages[0]?.time ?? session.createdAt;
  const last = messages[messages.length - 1]?.time ?? session.lastMessageAt;
  const title = session.title ?? `Session ${session.sessionId}`;
  const header = `# ${title}\n${first.toISOString().slice(0, 10)}`;
  const roles = [...new Set(messages.map((m) => m.role))];
  return {
    externalId: session.sessionId,
    content: [header, ...messages.map((m) => `${m.role}: ${m.content.trim()}`)].join("\n\n"),
    scope: session.scope,
    metadata: {
      time: { created_at: first.toISOString(), updated_at: last.toISOString() },
      chat: { conversation_id: session.sessionId, title, author: roles.join(", "), roles, message_count: messages.length },
      source: { type: "api" },
    },
  };
}

/**
 * Turns an open session into its conversation record, then asks for an incremental run. The
 * record is committed first; a run that cannot be requested is logged, never an ingest failure.
 */
export async function closeSession(db: Db, session: IngestSession, now = new Date()) {
  const messages = await db.ingestMessage.findMany({ where: { sessionId: session.id }, orderBy: { position: "asc" }, select: { role: true, content: true, time: true } });
  let recordId: string | null = null;
  if (messages.length) {
    await appendSourceRecords(db, session.pipelineId, session.source, [conversationItem(session, messages)]);
    const record = await db.record.findFirst({
      where: { pipelineId: session.pipelineId, step: session.source, workspaceId: session.workspaceId, metadata: { path: ["chat", "conversation_id"], equals: session.sessionId } },
      orderBy: { createdAt: "desc" },
      select: { id: true },
    });
    recordId = record?.id ?? null;
  }
  const { count } = await db.ingestSession.updateMany({ where: { id: session.id, status: "open" }, data: { status: "closed", closedAt: now, recordId } });
  const runRequested = count > 0 && messages.length > 0 ? await requestIncrementalRun(db, session, "ingest: a session closed", `session ${session.sessionId} closed`) : false;
  return { recordId, runRequested };
}

/**
 * Inngest: the debounced `source.appended`. Local: a run of main, unless one is already queued or
 * running (then false: the records wait for the next run). `what` names the change in the log.
 */
export async function requestIncrementalRun(db: Db, target: { workspaceId: string; pipelineId: string }, auditTrigger: string, what: string): Promise<boolean> {
  try {
    const sent = await notifySourceAppended({ workspaceId: target.workspaceId, pipelineId: target.pipelineId, branch: "main" });
    if (sent.sent) return true;
    await startRun(db, { workspaceId: target.workspaceId, pipelineId: target.pipelineId, branch: "main", triggeredBy: "ingest", auditTrigger });
    return true;
  } catch (err) {
    // A run in progress may have read its sources before this record came: one follow-up run starts when it ends.
    if (isConflict(err)) {
      runAfterActiveRun(db, target, auditTrigger, what);
      return true;
    }
    console.error(`[synthex ingest] ${what}; the run was not requested: ${(err as Error).message}`);
    return false;
  }
}

const isConflict = (err: unknown) => err instanceof DomainError && err.code === "CONFLICT";

/** Pipelines of this process waiting for their run in progress to end, to run once more. */
const followUps = processState("ingest.followUps", () => new Set<string>());
const FOLLOW_UP_POLL_MS = 1000;
const FOLLOW_UP_MAX_WAIT_MS = 15 * 60_000;

/**
 * Starts the incremental run as soon as main's run in progress ends (one waiter per pipeline in
 * this process: what arrives meanwhile is read by that one run). Without it, a message closed
 * during a run would wait for the next message or `synthex run`.
 */
function runAfterActiveRun(db: Db, target: { workspaceId: string; pipelineId: string }, auditTrigger: string, what: string) {
  if (followUps.has(target.pipelineId)) return;
  followUps.add(target.pipelineId);
  const wait = async () => {
    const until = Date.now() + FOLLOW_UP_MAX_WAIT_MS;
    while (Date.now() < until) {
      await new Promise((r) => setTimeout(r, FOLLOW_UP_POLL_MS));
      try {
        await startRun(db, { workspaceId: target.workspaceId, pipelineId: target.pipelineId, branch: "main", triggeredBy: "ingest", auditTrigger });
        return;
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
    }
    throw new Error(`a run was still in progress after ${FOLLOW_UP_MAX_WAIT_MS / 60_000} minutes`);
  };
  void trackBackground(
    wait()
      .catch((err: unknown) => console.error(`[synthex ingest] ${what}; the follow-up run was not started: ${(err as Error).message}`))
      .finally(() => followUps.delete(target.pipelineId)),
  );
}

/** Closes every open session idle for longer than the gap (optionally of one pipeline). */
export async function closeIdleSessions(db: Db, options: { pipelineId?: string; now?: Date; idleMs?: number } = {}) {
  const now = options.now ?? new Date();
  const cutoff = new Date(now.getTime() - (options.idleMs ?? sessionIdleMs()));
  const idle = await db.ingestSession.findMany({
    where: { status: "open", lastMessageAt: { lt: cutoff }, ...(options.pipelineId ? { pipelineId: options.pipelineId } : {}) },
    take: 100,
  });
  for (const session of idle) await closeSession(db, session, now);
  return { closed: idle.length };
}

/**
 * A session's state and its messages so far (for an agent or the UI). A session outside the
 * caller's scope answers exactly like one that does not exist.
 */
export async function getSession(db: Db, target: IngestTarget, sessionId: string, caller: IngestCaller = { restrictions: null }) {
  const session = await db.ingestSession.findUnique({
    where: { pipelineId_source_sessionId: { pipelineId: target.pipelineId, source: target.source, sessionId } },
    include: { messages: { orderBy: { position: "asc" }, take: 1000, select: { role: true, content: true, time: true, position: true, metadata: true } } },
  });
  const prefix = caller.restrictions?.scopePrefix;
  if (!session || session.workspaceId !== target.workspaceId || (prefix && !scopeWithin(session.scope, prefix))) {
    throw notFound(`Session "${sessionId}" not found in source "${target.source}".`);
  }
  return { ...session, messages: session.messages.map((m) => ({ ...m, metadata: messageMetadataSchema.catch({}).parse(m.metadata) })) };
}

/** Closes idle sessions every minute from the long-lived process beside the app (`npm start`). */
export function startIdleSessionSweeper(db: Db, everyMs = 60_000): () => void {
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    closeIdleSessions(db)
      .catch((err) => console.error("[synthex ingest] idle sweep failed:", (err as Error).message))
      .finally(() => (sweeping = false));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
