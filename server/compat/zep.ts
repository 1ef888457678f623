/**
 * The Zep API (as `@getzep/zep-cloud`'s `ZepClient` 3.x calls it) over a Synthex pipeline, at
 * `<app>/compat/zep`. Users, threads and standalone graphs are scopes and live sessions
 * (server/compat/zep-objects.ts); each `addMessages` call is one more session of the thread
 * (`zep-msg:<thread>:<uuid>`), closed at once so the pipeline runs on it. The context block is the
 * scope's brief (recent turns, projections) with its memories; the graph (edges, nodes, episodes,
 * summaries) is server/compat/zep-graph.ts. Every call goes through the tRPC procedures with the
 * key's context. What Synthex does not have answers 400 `{ message }` saying what to use
 * (docs/drop-in-zep.md lists them).
 */
import { randomUUID } from "node:crypto";
import { can } from "../auth/permissions";
import { ENTITY_TYPES } from "../services/graph";
import { assertMayWriteSession } from "../services/ingest";
import { bindPipeline, CompatError, limitedRoute, openCompat, scopeOf, statusOf, type Binding, type CompatRequest } from "./binding";
import { contextBlock, createTemplate, deleteTemplate, getTemplate, listTemplates, projectInfo, renderTemplate, updateTemplate } from "./zep-context";
import { addData, episodesOf, graphOf, listEdges, listNodes, memoriesIn, rankEpisodes, searchEdges, searchNodes, summariesOf, userMetadata } from "./zep-graph";
import {
  chunkPrefix,
  find,
  graphJson,
  graphScope,
  idOfMarker,
  lookup,
  memoriesOfRecords,
  refuse,
  register,
  threadChunks,
  threadJson,
  userJson,
  userScope,
  writeState,
  type Found,
  type Session,
  type State,
} from "./zep-objects";

const BASE = "/compat/zep";

/** Zep's error body (`ApiError`: `{ message }`). */
export function zepError(status: number, message: string, headers?: HeadersInit): Response {
  return Response.json({ message }, { status, headers });
}

async function body(req: Request): Promise<Record<string, unknown>> {
  const text = await req.text();
  if (!text.trim()) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new CompatError(400, "The body must be a JSON object.");
}

const str = (v: unknown, field: string): string => {
  if (typeof v !== "string" || !v.trim()) throw refuse(`${field}: required.`);
  return v;
};

const limitOf = (v: unknown, fallback: number, max: number) => (typeof v === "number" && v > 0 ? Math.min(max, Math.floor(v)) : fallback);
const numberParam = (url: URL, ...names: string[]) => {
  for (const n of names) {
    const v = Number(url.searchParams.get(n));
    if (url.searchParams.has(n) && Number.isFinite(v) && v > 0) return Math.floor(v);
  }
  return undefined;
};

// --- Users -----------------------------------------------------------------------------------------

const PROFILE = ["first_name", "last_name", "email"] as const;

function profileOf(input: Record<string, unknown>, base: State = {}): State {
  const out: State = { ...base };
  for (const k of PROFILE) {
    if (input[k] === undefined || input[k] === null) continue;
    if (typeof input[k] !== "string") throw refuse(`${k}: a string.`);
    out[k] = input[k];
  }
  if (input.metadata !== undefined && input.metadata !== null) {
    if (typeof input.metadata !== "object" || Array.isArray(input.metadata)) throw refuse("metadata: an object of keys and values.");
    out.metadata = { ...(base.metadata ?? {}), ...(input.metadata as Record<string, unknown>) };
  }
  return out;
}

async function addUser(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  const userId = str(input.user_id, "user_id");
  const found = await register(c, b, "user", userId, userScope(userId), profileOf(input));
  return userJson(found, userId);
}

async function updateUser(c: CompatRequest, b: Binding, userId: string, input: Record<string, unknown>) {
  const found = await find(c, b, "user", userId);
  const { deleted: _d, ...current } = found.state;
  void _d;
  await writeState(c, b, "user", userId, userScope(userId), profileOf(input, current));
  return userJson(await find(c, b, "user", userId), userId);
}

async function listUsers(c: CompatRequest, b: Binding, url: URL) {
  const sessions = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, idPrefix: "zep-user:", limit: 5000 });
  const users: Array<ReturnType<typeof userJson>> = [];
  for (const s of sessions) {
    const userId = idOfMarker("user", s.sessionId);
    const found = await lookup(c, b, "user", userId);
    if (found) users.push(userJson(found, userId));
  }
  const page = Math.max(1, Number(url.searchParams.get("pageNumber") ?? 1) || 1);
  const size = Math.min(1000, Math.max(1, Number(url.searchParams.get("pageSize") ?? 100) || 100));
  const rows = users.slice((page - 1) * size, page * size);
  return { users: rows, total_count: users.length, row_count: rows.length };
}

async function userThreads(c: CompatRequest, b: Binding, userId: string): Promise<Session[]> {
  const sessions = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, scope: userScope(userId), idPrefix: "zep-thread:" });
  const out: Session[] = [];
  for (const s of sessions) if (s.scope === userScope(userId) && (await lookup(c, b, "thread", idOfMarker("thread", s.sessionId)))) out.push(s);
  return out;
}

/** What an editor key's delete did: memories deleted where the pipeline has them; else (Synapsis) only hidden from Zep's API. */
function editorDeleteSays(b: Binding): string {
  return b.memoryStep
    ? "its memories are deleted (restorable in Synthex); an admin key also purges its records."
    : "it is gone from Zep's API; this pipeline has no memory step, so its entities and relations stay until an admin key purges them.";
}

/**
 * Deleting a user: an admin key purges the scope (records, what derives from them, live sessions);
 * an editor key (the default) deletes the user's memories as an editor can in the app (restorable),
 * and the user and its threads are gone from Zep's API.
 */
async function deleteUser(c: CompatRequest, b: Binding, userId: string) {
  await find(c, b, "user", userId);
  const scope = userScope(userId);
  if (can(c.ctx.actor.role, "records:purge")) {
    await c.caller.record.purgeScope({ pipelineId: b.pipeline, scope });
    return { message: `User ${userId} deleted: the scope ${scope} is purged (records, what derives from them, live sessions).` };
  }
  for (const m of await memoriesIn(c, b, scope)) if (m.scope === scope) await c.caller.memory.delete({ id: m.recordId });
  for (const t of await userThreads(c, b, userId)) await writeState(c, b, "thread", idOfMarker("thread", t.sessionId), scope, { deleted: true });
  await writeState(c, b, "user", userId, scope, { deleted: true });
  return { message: `User ${userId} deleted: ${editorDeleteSays(b)}` };
}

/** Zep's user node: the user's entity where the pipeline has one, else a node summarising its memories. */
async function userNode(c: CompatRequest, b: Binding, userId: string) {
  const found = await find(c, b, "user", userId);
  const name = [found.state.first_name, found.state.last_name].filter(Boolean).join(" ") || userId;
  const [entity] = await searchNodes(c, b, userScope(userId), name, 1);
  if (entity && entity.name.toLowerCase() === name.toLowerCase()) return { node: entity };
  const edges = await listEdges(c, b, userScope(userId), 20);
  return {
    node: { uuid: found.marker.sessionId, name, summary: edges.map((e) => e.fact).join(" ") || `${name}: no memories yet.`, labels: ["User"], created_at: found.marker.createdAt.toISOString(), attributes: { user_id: userId } },
  };
}

// --- Threads ---------------------------------------------------------------------------------------

async function findThread(c: CompatRequest, b: Binding, threadId: string): Promise<Found> {
  return find(c, b, "thread", threadId);
}

async function createThread(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  const threadId = str(input.thread_id, "thread_id");
  const userId = str(input.user_id, "user_id");
  await find(c, b, "user", userId);
  const found = await register(c, b, "thread", threadId, userScope(userId), {});
  if (found.marker.scope !== userScope(userId)) {
    throw new CompatError(409, `Thread ${threadId} belongs to scope ${found.marker.scope} (user ${threadJson(found.marker).user_id}), not ${userScope(userId)}; pass that user or use another thread id.`);
  }
  return threadJson(found.marker);
}

const NAME = "zep:name";

async function threadMessages(c: CompatRequest, b: Binding, threadId: string, thread: Found) {
  const out: Array<{ uuid: string; role: string; name?: string; content: string; created_at: string; processed: boolean; metadata: Record<string, unknown> }> = [];
  for (const chunk of await threadChunks(c, b, threadId, thread.state.since)) {
    const session = await c.caller.ingest.session({ pipelineId: b.pipeline, source: b.source, sessionId: chunk.sessionId });
    for (const m of session.messages) {
      const name = typeof m.metadata[NAME] === "string" ? m.metadata[NAME] : undefined;
      const role = typeof m.metadata["zep:role"] === "string" ? m.metadata["zep:role"] : m.role;
      out.push({ uuid: `${chunk.sessionId}#${m.position}`, role, ...(name ? { name } : {}), content: m.content, created_at: m.time.toISOString(), processed: session.recordId !== null, metadata: userMetadata(m.metadata) });
    }
  }
  return out;
}

/**
 * `addMessages` names the thread, not its user: it is a follow-up to the thread without a scope, and
 * the ingest service decides whether this caller may write it (a thread a key limited to a scope
 * can also write is refused to other callers unless they name its user, `X-Synthex-User`).
 */
async function assertMayAddTo(c: CompatRequest, b: Binding, req: Request, thread: Session, threadId: string) {
  const user = req.headers.get("x-synthex-user")?.trim();
  const target = { workspaceId: c.ctx.actor.workspaceId, pipelineId: b.pipelineId, source: b.source };
  try {
    await assertMayWriteSession(c.ctx.db, target, { sessionId: thread.sessionId, ...(user ? { scope: scopeOf({ user }) } : {}) }, { restrictions: c.ctx.actor.restrictions });
  } catch (err) {
    if (statusOf(err).status !== 409) throw err;
    const owner = threadJson(thread).user_id;
    throw new CompatError(
      409,
      user
        ? `Thread ${threadId} belongs to scope ${thread.scope} (user ${owner}), not ${scopeOf({ user })}; pass that user or use another thread id.`
        : `Thread ${threadId} belongs to scope ${thread.scope} (user ${owner}), which an API key limited to a scope can also write: pass that user (header X-Synthex-User: ${owner}) or use another thread id.`,
    );
  }
}

const ROLES = new Set(["user", "assistant", "system", "tool", "function"]);

async function addMessages(c: CompatRequest, b: Binding, req: Request, threadId: string, input: Record<string, unknown>) {
  if (Array.isArray(input.ignore_roles) && input.ignore_roles.length) {
    throw refuse("ignore_roles: not supported (every message of a thread goes to the pipeline; leave those messages out, or filter them in the facts step's prompt).");
  }
  const thread = (await findThread(c, b, threadId)).marker;
  await assertMayAddTo(c, b, req, thread, threadId);
  const raw = input.messages;
  if (!Array.isArray(raw) || !raw.length) throw refuse("messages: a non-empty list.");
  const messages = raw.map((m: unknown, i) => {
    const msg = (m ?? {}) as { role?: unknown; content?: unknown; name?: unknown; created_at?: unknown; metadata?: unknown };
    const content = str(msg.content, `messages[${i}].content`);
    if (msg.metadata !== undefined && msg.metadata !== null && (typeof msg.metadata !== "object" || Array.isArray(msg.metadata))) throw refuse(`messages[${i}].metadata: an object of keys and values.`);
    const role = typeof msg.role === "string" && ROLES.has(msg.role) ? msg.role : typeof msg.name === "string" && msg.name.trim() ? msg.name.slice(0, 64) : "user";
    const metadata: Record<string, unknown> = { ...((msg.metadata as Record<string, unknown> | undefined) ?? {}) };
    if (typeof msg.name === "string" && msg.name.trim()) metadata[NAME] = msg.name;
    if (typeof msg.role === "string") metadata["zep:role"] = msg.role;
    return { role, content, ...(typeof msg.created_at === "string" ? { time: msg.created_at } : {}), metadata };
  });
  const sessionId = `${chunkPrefix(threadId)}${randomUUID()}`;
  if (sessionId.length > 200) throw refuse("thread_id: too long (at most about 150 characters here).");
  const done = await c.caller.ingest.messages({ pipelineId: b.pipeline, source: b.source, sessionId, scope: thread.scope, title: `Thread ${threadId}`.slice(0, 200), messages, close: true });
  return {
    message_uuids: messages.map((_, i) => `${sessionId}#${i}`),
    task_id: done.recordId ?? sessionId,
    ...(input.return_context === true ? { context: await contextBlock(c, b, thread.scope) } : {}),
  };
}

/**
 * Deleting a thread: its records are purged with an admin key; an editor key (the default) deletes the
 * memories they led to (restorable). Either way the thread and its messages are gone from Zep's API.
 */
async function deleteThread(c: CompatRequest, b: Binding, threadId: string) {
  const thread = await findThread(c, b, threadId);
  const chunks = await threadChunks(c, b, threadId, thread.state.since);
  const records = chunks.map((s) => s.recordId).filter((id): id is string => id !== null);
  if (can(c.ctx.actor.role, "records:purge")) {
    for (const id of records) await c.caller.record.purge({ id });
  } else {
    for (const id of await memoriesOfRecords(c, b, records)) await c.caller.memory.delete({ id });
  }
  await writeState(c, b, "thread", threadId, thread.marker.scope, { deleted: true });
  return { message: `Thread ${threadId} deleted: ${can(c.ctx.actor.role, "records:purge") ? "its records and what derives from them are purged" : "the memories its messages led to are deleted (restorable in Synthex)"}.` };
}

async function threadSummary(c: CompatRequest, b: Binding, threadId: string) {
  const thread = await findThread(c, b, threadId);
  const [latest] = await summariesOf(c, b, thread.marker.scope, 1);
  if (latest) return { uuid: latest.uuid, thread_id: threadId, summary: latest.summary, created_at: latest.created_at, last_summarized_at: latest.created_at };
  // No summaries step: the memories the thread's messages led to, newest first.
  const chunks = await threadChunks(c, b, threadId, thread.state.since);
  const ids = new Set(await memoriesOfRecords(c, b, chunks.map((s) => s.recordId).filter((x): x is string => x !== null)));
  const mine = (await memoriesIn(c, b, thread.marker.scope)).filter((m) => ids.has(m.recordId));
  const at = (mine[0]?.updatedAt ?? thread.changedAt).toString();
  return { uuid: thread.marker.sessionId, thread_id: threadId, summary: mine.map((m) => m.content).join(" "), created_at: new Date(at).toISOString(), last_summarized_at: new Date(at).toISOString() };
}

// --- Graphs ----------------------------------------------------------------------------------------

async function createGraph(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  const graphId = str(input.graph_id, "graph_id");
  const state: State = {
    ...(typeof input.name === "string" ? { name: input.name } : {}),
    ...(typeof input.description === "string" ? { description: input.description } : {}),
  };
  return graphJson(await register(c, b, "graph", graphId, graphScope(graphId), state), graphId);
}

async function listGraphs(c: CompatRequest, b: Binding, url: URL) {
  const sessions = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, idPrefix: "zep-graph:", limit: 5000 });
  const graphs: Array<ReturnType<typeof graphJson>> = [];
  for (const s of sessions) {
    const graphId = idOfMarker("graph", s.sessionId);
    const found = await lookup(c, b, "graph", graphId);
    if (found) graphs.push(graphJson(found, graphId));
  }
  const page = Math.max(1, numberParam(url, "pageNumber", "page_number") ?? 1);
  const size = Math.min(1000, numberParam(url, "pageSize", "page_size") ?? 100);
  const rows = graphs.slice((page - 1) * size, page * size);
  return { graphs: rows, total_count: graphs.length, row_count: rows.length, page_number: page, page_size: size };
}

async function deleteGraph(c: CompatRequest, b: Binding, graphId: string) {
  await find(c, b, "graph", graphId);
  const scope = graphScope(graphId);
  if (can(c.ctx.actor.role, "records:purge")) {
    await c.caller.record.purgeScope({ pipelineId: b.pipeline, scope });
    return { message: `Graph ${graphId} deleted: the scope ${scope} is purged.` };
  }
  for (const m of await memoriesIn(c, b, scope)) if (m.scope === scope) await c.caller.memory.delete({ id: m.recordId });
  await writeState(c, b, "graph", graphId, scope, { deleted: true });
  return { message: `Graph ${graphId} deleted: ${editorDeleteSays(b)}` };
}

async function graphSearch(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  for (const key of ["search_filters", "bfs_origin_node_uuids", "center_node_uuid", "reranker", "mmr_lambda"]) {
    if (input[key] !== undefined && input[key] !== null) throw refuse(`${key}: not supported (Synthex ranks with hybrid search: semantic + BM25 fused); leave it out.`);
  }
  const { scope, since } = await graphOf(c, b, input);
  const query = str(input.query, "query");
  const kind = (input.scope as string | undefined) ?? "edges";
  const limit = limitOf(input.limit, 10, 50);
  if (kind === "edges") return { edges: await searchEdges(c, b, scope, query, limit) };
  if (kind === "nodes") return { nodes: await searchNodes(c, b, scope, query, limit) };
  if (kind === "episodes") return { episodes: rankEpisodes(await episodesOf(c, b, scope, since), query, limit) };
  throw refuse(`scope "${kind}": use edges (memories), nodes (entities) or episodes (messages and added data); observations and thread summaries are not searched here.`);
}

// --- Routing ---------------------------------------------------------------------------------------

/** Zep endpoints Synthex answers with a refusal, and what to use instead (docs/drop-in-zep.md). */
const REFUSED: Array<[RegExp, string]> = [
  [/^\/(user-summary-instructions|custom-instructions)$/, "Custom instructions are the pipeline's prompts here: edit the facts step's prompt on a branch, try it, and promote it (listing them answers none)."],
  [/^\/entity-types$/, "Entity types are not configurable through Zep's API: the pipeline's entities step decides what an entity is (listing them answers Synthex's types)."],
  [/^\/graph\/(clone|add-fact-triple|nodes|patterns|subgraph)$/, "Graph edits (fact triples, nodes, clones) and pattern detection are not available: a Synthex graph is derived from what was added (threads, graph.add); add the fact as text with graph.add."],
  [/^\/graph\/documents\//, "Documents are not kept as Zep documents: add them as text with graph.add, or import them with synthex import."],
  [/^\/graph\/(edge|node|episodes|observation)\/[^/]+$/, "Single graph items by uuid are not available here: list them (getByUserId / getByGraphId) or search (graph.search); Synthex's explorer and /api/v1/records/{id} read one record."],
  [/^\/graph\/(node|episodes)\/[^/]+\/(entity-edges|episodes|neighbors|mentions)$/, "Graph traversal by uuid is not available here: use graph.search, or Synthex's /api/v1 graph endpoints (an entity's neighbourhood)."],
  [/^\/batch/, "The Batch API is not available: add messages per thread (thread.addMessages), or import a chat export with synthex import."],
  [/^\/user-groups|^\/users\/[^/]+\/groups/, "User groups are not available: scope API keys instead (Settings → API keys, a scope prefix)."],
  [/^\/projects\/(?!info$)/, "Project settings are Zep's: here the API key's workspace and the bound pipeline play that part (projects/info answers the pipeline)."],
  [/^\/tasks\//, "Tasks are not tracked: a pipeline run processes the messages (see its status in Synthex, Runs)."],
  [/^\/messages\//, "Messages cannot be edited: a thread's messages are the sessions' record (send metadata with the message in thread.addMessages)."],
  [/^\/threads\/[^/]+\/episodes$/, "A thread's episodes are its messages here: thread.get lists them, graph.episode.getByUserId lists the user's."],
];

async function route(req: Request, c: CompatRequest): Promise<unknown> {
  const method = req.method.toUpperCase();
  const path = c.path.replace(/\/+$/, "") || "/";
  const listsNone = method === "GET" && /^\/(user-summary-instructions|custom-instructions|entity-types)$/.test(path);
  if (listsNone || path === "/graph/search" || path === "/graph" || path === "/graph/create" || path === "/graph/list-all" || path === "/graph-batch") {
    // Served below.
  } else for (const [pattern, message] of REFUSED) if (pattern.test(path)) throw refuse(message);
  const b = await bindPipeline(req, c, "Zep");
  const url = new URL(req.url);
  const id = (m: RegExpExecArray) => decodeURIComponent(m[1]!);
  let m: RegExpExecArray | null;

  // Read-only views of what Synthex decides itself: no custom instructions through Zep's API, its entity types.
  if (listsNone && path === "/entity-types") return { entity_types: ENTITY_TYPES.map((name) => ({ name, description: `Synthex entity type (the pipeline's entities step assigns it).` })), edge_types: [] };
  if (listsNone) return { instructions: [] };
  if (path === "/projects/info" && method === "GET") return projectInfo(c, b);
  if (path === "/context-templates" && method === "GET") return listTemplates(c, b);
  if (path === "/context-templates" && method === "POST") return createTemplate(c, b, await body(req));
  if ((m = /^\/context-templates\/([^/]+)$/.exec(path))) {
    if (method === "GET") return getTemplate(c, b, id(m));
    if (method === "PUT" || method === "PATCH") return updateTemplate(c, b, id(m), await body(req));
    if (method === "DELETE") return deleteTemplate(c, b, id(m));
  }
  if (path === "/users" && method === "POST") return addUser(c, b, await body(req));
  if (path === "/users-ordered" && method === "GET") return listUsers(c, b, url);
  if ((m = /^\/users\/([^/]+)$/.exec(path))) {
    if (method === "GET") return userJson(await find(c, b, "user", id(m)), id(m));
    if (method === "DELETE") return deleteUser(c, b, id(m));
    if (method === "PATCH") return updateUser(c, b, id(m), await body(req));
  }
  if ((m = /^\/users\/([^/]+)\/threads$/.exec(path)) && method === "GET") {
    await find(c, b, "user", id(m));
    return (await userThreads(c, b, id(m))).map(threadJson);
  }
  if ((m = /^\/users\/([^/]+)\/node$/.exec(path)) && method === "GET") return userNode(c, b, id(m));
  if ((m = /^\/(users|graph)\/([^/]+)\/warm$/.exec(path)) && method === "GET") {
    await find(c, b, m[1] === "users" ? "user" : "graph", decodeURIComponent(m[2]!));
    return { message: "Nothing to warm: Synthex reads the graph from its database on every call." };
  }

  if (path === "/threads" && method === "POST") return createThread(c, b, await body(req));
  if (path === "/threads" && method === "GET") {
    const sessions = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, idPrefix: "zep-thread:" });
    const live: Session[] = [];
    for (const s of sessions) if (await lookup(c, b, "thread", idOfMarker("thread", s.sessionId))) live.push(s);
    const page = Math.max(1, numberParam(url, "page_number") ?? 1);
    const size = Math.min(1000, numberParam(url, "page_size") ?? 100);
    const rows = live.slice((page - 1) * size, page * size).map(threadJson);
    return { threads: rows, total_count: live.length, response_count: rows.length };
  }
  if ((m = /^\/threads\/([^/]+)$/.exec(path)) && method === "DELETE") return deleteThread(c, b, id(m));
  if ((m = /^\/threads\/([^/]+)\/(messages|messages-batch)$/.exec(path))) {
    if (method === "POST") return addMessages(c, b, req, id(m), await body(req));
    if (method === "GET" && m[2] === "messages") {
      const thread = await findThread(c, b, id(m));
      let messages = await threadMessages(c, b, id(m), thread);
      const total = messages.length;
      const lastn = numberParam(url, "lastn");
      const cursor = numberParam(url, "cursor") ?? 0;
      const limit = numberParam(url, "limit");
      if (lastn) messages = messages.slice(-lastn);
      else messages = messages.slice(cursor, limit ? cursor + limit : undefined);
      const t = threadJson(thread.marker);
      return { messages, total_count: total, row_count: messages.length, user_id: t.user_id, thread_created_at: t.created_at };
    }
  }
  if ((m = /^\/threads\/([^/]+)\/context$/.exec(path)) && method === "GET") {
    const thread = await findThread(c, b, id(m));
    const templateId = url.searchParams.get("template_id");
    return { context: templateId ? await renderTemplate(c, b, templateId, thread.marker.scope) : await contextBlock(c, b, thread.marker.scope) };
  }
  if ((m = /^\/threads\/([^/]+)\/summary$/.exec(path)) && method === "GET") return threadSummary(c, b, id(m));

  if (path === "/graph/search" && method === "POST") return graphSearch(c, b, await body(req));
  if (path === "/graph" && method === "POST") return addData(c, b, await body(req));
  if (path === "/graph-batch" && method === "POST") {
    const input = await body(req);
    if (!Array.isArray(input.episodes) || !input.episodes.length) throw refuse("episodes: a non-empty list of { data, type }.");
    const out = [];
    for (const e of input.episodes as Array<Record<string, unknown>>) out.push(await addData(c, b, { ...e, user_id: input.user_id, graph_id: input.graph_id }));
    return out;
  }
  if (path === "/graph/create" && method === "POST") return createGraph(c, b, await body(req));
  if (path === "/graph/list-all" && method === "GET") return listGraphs(c, b, url);
  if ((m = /^\/graph\/(edge|node|episodes|observation|thread-summary)\/(user|graph)\/([^/]+)$/.exec(path))) {
    const owner = decodeURIComponent(m[3]!);
    const { scope, since } = await graphOf(c, b, m[2] === "user" ? { user_id: owner } : { graph_id: owner });
    const input = method === "POST" ? await body(req) : {};
    const limit = limitOf(input.limit, numberParam(url, "lastn", "limit") ?? 100, 1000);
    if (m[1] === "edge") return listEdges(c, b, scope, limit);
    if (m[1] === "node") return listNodes(c, b, scope, limit);
    if (m[1] === "episodes") return { episodes: (await episodesOf(c, b, scope, since)).slice(-limit) };
    if (m[1] === "thread-summary") return (await summariesOf(c, b, scope, limit)).map((s) => ({ uuid: s.uuid, summary: s.summary, created_at: s.created_at, last_summarized_at: s.created_at }));
    // Observations (Zep's derived patterns): Synthex's insights step where the pipeline has one.
    return [];
  }
  if ((m = /^\/graph\/([^/]+)$/.exec(path))) {
    const graphId = id(m);
    if (method === "GET") return graphJson(await find(c, b, "graph", graphId), graphId);
    if (method === "DELETE") return deleteGraph(c, b, graphId);
    if (method === "PATCH") {
      const found = await find(c, b, "graph", graphId);
      const input = await body(req);
      const { deleted: _d, ...current } = found.state;
      void _d;
      await writeState(c, b, "graph", graphId, graphScope(graphId), {
        ...current,
        ...(typeof input.name === "string" ? { name: input.name } : {}),
        ...(typeof input.description === "string" ? { description: input.description } : {}),
      });
      return graphJson(await find(c, b, "graph", graphId), graphId);
    }
  }
  throw new CompatError(404, `No Zep endpoint ${method} ${path} here (Synthex serves users, threads, messages, the context block, graphs and graph search; docs/drop-in-zep.md lists them).`);
}

/** Answers one request under /compat/zep. */
export async function handleZep(req: Request): Promise<Response> {
  const opened = await openCompat(req, BASE, zepError);
  if (opened instanceof Response) return opened;
  try {
    return Response.json(await route(req, opened));
  } catch (err) {
    const { status, message } = statusOf(err);
    return zepError(status, message);
  }
}

/** The route handler (app/compat/zep/[...path]/route.ts), behind the API's body limit. */
export const zepRoute = limitedRoute(handleZep, zepError);

