/**
 * Zep's users, threads and graphs over a pipeline's live sessions (server/compat/zep.ts routes them).
 *
 * - A user is the scope `user:<id>`, registered by an empty session `zep-user:<id>`; a graph (Zep's
 *   standalone graph) the scope `graph:<id>`, registered by `zep-graph:<id>`; a thread is the
 *   session `zep-thread:<id>` of its user's scope.
 * - What changes later (a user's names and metadata, a graph's name, a deletion an editor key makes)
 *   is a state: an empty session `zep-state:<kind>:<id>:<time>` whose title is the object's state as
 *   JSON; the newest one holds. An admin key's delete purges the scope (records, what derives from
 *   them, every session); an editor key's (the default) deletes the memories, as an editor can in the
 *   app (restorable), and leaves a deleted state.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { CompatError, encodeId, scopeOf, statusOf, type Binding, type CompatRequest } from "./binding";

export const refuse = (message: string) => new CompatError(400, message);

export type Session = Awaited<ReturnType<CompatRequest["caller"]["memory"]["sessions"]>>[number];
export type Kind = "user" | "thread" | "graph" | "template";

const MARKER: Record<Kind, string> = { user: "zep-user:", thread: "zep-thread:", graph: "zep-graph:", template: "zep-template:" };
export const markerId = (kind: Kind, id: string) => `${MARKER[kind]}${encodeId(id)}`;
export const idOfMarker = (kind: Kind, sessionId: string) => decodeURIComponent(sessionId.slice(MARKER[kind].length));
export const graphScope = (graphId: string) => `graph:${encodeId(graphId)}`;
export const userScope = (userId: string) => scopeOf({ user: userId });
/** Where context templates live (one set per pipeline). */
export const TEMPLATES_SCOPE = "zep-templates";
export const chunkPrefix = (threadId: string) => `zep-msg:${encodeId(threadId)}:`;
const statePrefix = (kind: Kind, id: string) => `zep-state:${kind}:${encodeId(id)}:`;

/** A state (the title of a `zep-state` session): JSON, at most 200 characters (a session title's limit). */
const stateSchema = z.object({
  deleted: z.boolean().optional(),
  /** Messages of chunks older than this are not the object's any more (it was deleted and made again). */
  since: z.string().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  email: z.string().optional(),
  name: z.string().optional(),
  description: z.string().optional(),
  /** A context template's text. */
  template: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type State = z.infer<typeof stateSchema>;

export function parseState(title: string | null | undefined): State {
  try {
    return stateSchema.catch({}).parse(title ? JSON.parse(title) : {});
  } catch {
    return {};
  }
}

export function stateTitle(state: State, what: string): string {
  const title = JSON.stringify(state);
  if (title.length > 200) throw refuse(`${what} as JSON are ${title.length} characters; at most 200 are kept here (keep larger metadata in your app, or send it as message metadata).`);
  return title;
}

export interface Found {
  marker: Session;
  state: State;
  /** When the newest state was written (the marker's time without one). */
  changedAt: Date;
}

/**
 * The scope an object lives in where its id says it (users, graphs, templates): a lookup names it, so a
 * key limited to another scope is refused as such (403) whether the object exists or not.
 */
function scopeOfObject(kind: Kind, id: string): string | undefined {
  return kind === "user" ? userScope(id) : kind === "graph" ? graphScope(id) : kind === "template" ? TEMPLATES_SCOPE : undefined;
}

async function latestState(c: CompatRequest, b: Binding, kind: Kind, id: string): Promise<Session | undefined> {
  const [latest] = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, scope: scopeOfObject(kind, id), idPrefix: statePrefix(kind, id), limit: 1 });
  return latest;
}

export async function writeState(c: CompatRequest, b: Binding, kind: Kind, id: string, scope: string, state: State): Promise<void> {
  const sessionId = `${statePrefix(kind, id)}${new Date().toISOString()}:${randomUUID().slice(0, 8)}`;
  await c.caller.ingest.messages({ pipelineId: b.pipeline, source: b.source, sessionId, scope, title: stateTitle(state, { user: "The user's names, email and metadata", thread: "The thread's state", graph: "The graph's name and description", template: "The context template" }[kind]), messages: [] });
}

/** The object's marker and newest state; `null` when there is none or it was deleted. */
export async function lookup(c: CompatRequest, b: Binding, kind: Kind, id: string): Promise<Found | null> {
  const found = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, scope: scopeOfObject(kind, id), idPrefix: markerId(kind, id), limit: 5 });
  const marker = found.find((s) => s.sessionId === markerId(kind, id));
  if (!marker) return null;
  const latest = await latestState(c, b, kind, id);
  const state = latest ? parseState(latest.title) : parseState(marker.title);
  if (state.deleted) return null;
  return { marker, state, changedAt: latest?.createdAt ?? marker.createdAt };
}

export async function find(c: CompatRequest, b: Binding, kind: Kind, id: string): Promise<Found> {
  const found = await lookup(c, b, kind, id);
  if (!found) throw new CompatError(404, `${{ user: "User", thread: "Thread", graph: "Graph", template: "Context template" }[kind]} "${id}" not found.`);
  return found;
}

/**
 * Registers the object (its marker, with `state` as its title), or makes it again when it was
 * deleted by an editor key (a new state). An existing one is answered as it is.
 */
export async function register(c: CompatRequest, b: Binding, kind: Kind, id: string, scope: string, state: State): Promise<Found> {
  const existing = await lookup(c, b, kind, id);
  if (existing) return existing;
  const title = stateTitle(state, { user: "The user's names, email and metadata", thread: "The thread's state", graph: "The graph's name and description", template: "The context template" }[kind]);
  const [marker] = (await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, idPrefix: markerId(kind, id), limit: 5 })).filter((s) => s.sessionId === markerId(kind, id));
  if (!marker) {
    try {
      await c.caller.ingest.messages({ pipelineId: b.pipeline, source: b.source, sessionId: markerId(kind, id), scope, title, messages: [] });
    } catch (err) {
      // The id is taken in a scope this key does not reach (or by a concurrent call elsewhere).
      if (statusOf(err).status === 409) throw new CompatError(409, `${kind} id "${id}" is taken in a scope this key does not reach: use another id.`);
      throw err;
    }
    return find(c, b, kind, id);
  }
  // Deleted by an editor key: made again (a new state; its old messages are not its any more).
  if (marker.scope !== scope) throw new CompatError(409, `${kind} ${id} belongs to scope ${marker.scope}, not ${scope}; use another ${kind} id.`);
  await writeState(c, b, kind, id, scope, { ...state, since: new Date().toISOString() });
  return find(c, b, kind, id);
}


export function userJson(f: Found, userId: string) {
  const { first_name, last_name, email, metadata } = f.state;
  return {
    uuid: f.marker.sessionId,
    user_id: userId,
    created_at: f.marker.createdAt.toISOString(),
    updated_at: f.changedAt.toISOString(),
    ...(first_name !== undefined ? { first_name } : {}),
    ...(last_name !== undefined ? { last_name } : {}),
    ...(email !== undefined ? { email } : {}),
    metadata: metadata ?? {},
  };
}

export function threadJson(s: Session) {
  const threadId = idOfMarker("thread", s.sessionId);
  const userId = decodeURIComponent(s.scope.replace(/^user:/, "").split(":")[0]!);
  return { uuid: s.sessionId, thread_id: threadId, user_id: userId, created_at: s.createdAt.toISOString() };
}

export function graphJson(f: Found, graphId: string) {
  return {
    uuid: f.marker.sessionId,
    graph_id: graphId,
    name: f.state.name ?? graphId,
    ...(f.state.description !== undefined ? { description: f.state.description } : {}),
    created_at: f.marker.createdAt.toISOString(),
  };
}

/** The chunks (one per addMessages call) of a thread since it was last made, oldest first. */
export async function threadChunks(c: CompatRequest, b: Binding, threadId: string, since?: string): Promise<Session[]> {
  const chunks = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, idPrefix: chunkPrefix(threadId), limit: 5000 });
  const from = since ? new Date(since) : null;
  return chunks.filter((s) => !from || s.createdAt >= from).reverse();
}

/** The memories derived from these records (through the memory step), current ones only. */
export async function memoriesOfRecords(c: CompatRequest, b: Binding, recordIds: string[]): Promise<string[]> {
  if (!b.memoryStep) return [];
  const out = new Set<string>();
  for (const recordId of recordIds) {
    const { versions } = await c.caller.memory.ofSource({ pipelineId: b.pipeline, step: b.memoryStep, recordId });
    for (const v of versions) out.add(v.memoryId);
  }
  if (!out.size) return [];
  const { memories } = await c.caller.memory.list({ pipelineId: b.pipeline, step: b.memoryStep });
  return memories.filter((m) => out.has(m.memoryId)).map((m) => m.recordId);
}
