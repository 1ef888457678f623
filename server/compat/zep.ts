/**
 * The Zep API (as `@getzep/zep-cloud`'s `ZepClient` 3.x calls it) over a Synthex pipeline, at
 * `<app>/compat/zep`. A Zep user is the scope `user:<id>` (registered by an empty live session
 * `zep-user:<id>`), a thread is a live session `zep-thread:<id>` of that scope, and each
 * `addMessages` call is one more session of the thread (`zep-msg:<thread>:<uuid>`), closed at
 * once so the pipeline runs on it. The context block is the scope's brief (recent turns,
 * projections) with its memories; graph search reads the memory step (edges), the entities step
 * (nodes) and the source's conversations (episodes). Every call goes through the tRPC procedures
 * with the key's context. What Synthex does not have answers 400 `{ message }` saying what to use.
 */
import { randomUUID } from "node:crypto";
import { assertMayWriteSession } from "../services/ingest";
import { bindPipeline, CompatError, encodeId, limitedRoute, openCompat, scopeOf, statusOf, type Binding, type CompatRequest } from "./binding";

const BASE = "/compat/zep";

/** Zep's error body (`ApiError`: `{ message }`). */
export function zepError(status: number, message: string, headers?: HeadersInit): Response {
  return Response.json({ message }, { status, headers });
}

const refuse = (message: string) => new CompatError(400, message);

const userSession = (userId: string) => `zep-user:${encodeId(userId)}`;
const threadSession = (threadId: string) => `zep-thread:${encodeId(threadId)}`;
const chunkPrefix = (threadId: string) => `zep-msg:${encodeId(threadId)}:`;

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

type Session = Awaited<ReturnType<CompatRequest["caller"]["memory"]["sessions"]>>[number];

function userJson(s: Session, userId: string) {
  let profile: Record<string, unknown> = {};
  try {
    profile = s.title ? (JSON.parse(s.title) as Record<string, unknown>) : {};
  } catch {
    profile = {};
  }
  return { uuid: s.sessionId, user_id: userId, created_at: s.createdAt.toISOString(), updated_at: s.lastMessageAt.toISOString(), ...profile };
}

async function findUser(c: CompatRequest, b: Binding, userId: string) {
  const [found] = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, scope: scopeOf({ user: userId }), idPrefix: userSession(userId), limit: 5 });
  if (!found || found.sessionId !== userSession(userId)) throw new CompatError(404, `User "${userId}" not found.`);
  return found;
}

async function addUser(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  const userId = str(input.user_id, "user_id");
  if (input.metadata !== undefined) throw refuse("metadata: not kept on users here (a Synthex scope has no metadata): keep it in your app, or send it as message metadata.");
  const profile = Object.fromEntries(["first_name", "last_name", "email", "time_zone"].filter((k) => typeof input[k] === "string").map((k) => [k, input[k]]));
  const title = JSON.stringify(profile);
  if (title.length > 200) throw refuse("first_name, last_name, email and time_zone together are over 200 characters.");
  await c.caller.ingest
    .messages({ pipelineId: b.pipeline, source: b.source, sessionId: userSession(userId), scope: scopeOf({ user: userId }), title, messages: [] })
    .catch(async (err: unknown) => {
      // Registered before (its marker session has closed since): the user exists. Any other conflict
      // (its id taken in another scope) is the caller's to see.
      if (statusOf(err).status !== 409 || !(await findUser(c, b, userId).then(() => true, () => false))) throw err;
    });
  return userJson(await findUser(c, b, userId), userId);
}

async function listUsers(c: CompatRequest, b: Binding, url: URL) {
  const sessions = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, idPrefix: "zep-user:", limit: 5000 });
  const users = sessions.map((s) => userJson(s, decodeURIComponent(s.sessionId.slice("zep-user:".length))));
  const page = Math.max(1, Number(url.searchParams.get("pageNumber") ?? 1) || 1);
  const size = Math.min(1000, Math.max(1, Number(url.searchParams.get("pageSize") ?? 100) || 100));
  const rows = users.slice((page - 1) * size, page * size);
  return { users: rows, total_count: users.length, row_count: rows.length };
}

function threadJson(s: Session) {
  const threadId = decodeURIComponent(s.sessionId.slice("zep-thread:".length));
  const userId = decodeURIComponent(s.scope.replace(/^user:/, "").split(":")[0]!);
  return { uuid: s.sessionId, thread_id: threadId, user_id: userId, created_at: s.createdAt.toISOString() };
}

async function findThread(c: CompatRequest, b: Binding, threadId: string) {
  const found = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, idPrefix: threadSession(threadId), limit: 5 });
  const thread = found.find((s) => s.sessionId === threadSession(threadId));
  if (!thread) throw new CompatError(404, `Thread "${threadId}" not found.`);
  return thread;
}

async function createThread(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  const threadId = str(input.thread_id, "thread_id");
  const userId = str(input.user_id, "user_id");
  await findUser(c, b, userId);
  const scope = scopeOf({ user: userId });
  await c.caller.ingest
    .messages({ pipelineId: b.pipeline, source: b.source, sessionId: threadSession(threadId), scope, title: `Thread ${threadId}`.slice(0, 200), messages: [] })
    .catch(async (err: unknown) => {
      if (statusOf(err).status !== 409) throw err;
      // Created before for this user (its marker session has closed since): the same thread. A thread
      // of another user is never handed back as this one (its messages would go to that user).
      const existing = await findThread(c, b, threadId).catch(() => null);
      if (existing?.scope === scope) return;
      if (existing) throw new CompatError(409, `Thread ${threadId} belongs to scope ${existing.scope} (user ${threadJson(existing).user_id}), not ${scope}; pass that user or use another thread id.`);
      throw err;
    });
  return threadJson(await findThread(c, b, threadId));
}

async function threadMessages(c: CompatRequest, b: Binding, threadId: string) {
  const chunks = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, idPrefix: chunkPrefix(threadId), limit: 5000 });
  const out: Array<{ uuid: string; role: string; content: string; created_at: string; processed: boolean }> = [];
  for (const chunk of [...chunks].reverse()) {
    const session = await c.caller.ingest.session({ pipelineId: b.pipeline, source: b.source, sessionId: chunk.sessionId });
    for (const m of session.messages) {
      out.push({ uuid: `${chunk.sessionId}#${m.position}`, role: m.role, content: m.content, created_at: m.time.toISOString(), processed: session.recordId !== null });
    }
  }
  return out;
}

/** The context block: the scope's memories (newest first) and its recent turns, in Zep's tagged layout. */
async function contextBlock(c: CompatRequest, b: Binding, scope: string) {
  const [{ memories }, brief] = await Promise.all([
    c.caller.memory.list({ pipelineId: b.pipeline, step: b.memoryStep, scope }),
    c.caller.search.brief({ pipelineId: b.pipeline, scope, turns: 10 }),
  ]);
  const facts = memories.slice(0, 40).map((m) => `  - ${m.content} (${new Date(m.updatedAt).toISOString().slice(0, 10)})`);
  const summaries = brief.projections.map((p) => JSON.stringify(p)).filter((p) => p.length < 4000);
  const turns = brief.recentTurns.map((t) => `  ${t.role}: ${t.content}`);
  return [
    "FACTS represent memories about the user (Synthex: the pipeline's memory step for this scope); RECENT_MESSAGES are the latest turns.",
    "<FACTS>",
    ...facts,
    "</FACTS>",
    ...(summaries.length ? ["<SUMMARY>", ...summaries, "</SUMMARY>"] : []),
    "<RECENT_MESSAGES>",
    ...turns,
    "</RECENT_MESSAGES>",
  ].join("\n");
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

async function addMessages(c: CompatRequest, b: Binding, req: Request, threadId: string, input: Record<string, unknown>) {
  if (Array.isArray(input.ignore_roles) && input.ignore_roles.length) {
    throw refuse("ignore_roles: not supported (every message of a thread goes to the pipeline; leave those messages out, or filter them in the facts step's prompt).");
  }
  const thread = await findThread(c, b, threadId);
  await assertMayAddTo(c, b, req, thread, threadId);
  const raw = input.messages;
  if (!Array.isArray(raw) || !raw.length) throw refuse("messages: a non-empty list.");
  const messages = raw.map((m: unknown, i) => {
    const msg = m as { role?: unknown; content?: unknown; name?: unknown; created_at?: unknown; metadata?: unknown };
    const content = str(msg?.content, `messages[${i}].content`);
    const role = typeof msg.role === "string" && msg.role !== "norole" ? msg.role : typeof msg.name === "string" ? msg.name : "user";
    return {
      role,
      content,
      ...(typeof msg.created_at === "string" ? { time: msg.created_at } : {}),
      ...(msg.metadata && typeof msg.metadata === "object" ? { metadata: msg.metadata as Record<string, unknown> } : {}),
    };
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

async function deleteThread(c: CompatRequest, b: Binding, threadId: string) {
  const thread = await findThread(c, b, threadId);
  const chunks = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, idPrefix: chunkPrefix(threadId), limit: 5000 });
  for (const chunk of chunks) if (chunk.recordId) await c.caller.record.purge({ id: chunk.recordId });
  // The thread's marker and any open chunk have no record: closing them leaves nothing to purge.
  for (const s of [thread, ...chunks.filter((x) => !x.recordId)]) {
    if (s.status === "open") await c.caller.ingest.messages({ pipelineId: b.pipeline, source: b.source, sessionId: s.sessionId, scope: s.scope, close: true });
  }
  return { message: `Thread ${threadId} deleted: its records and what derives from them are purged.` };
}

async function graphSearch(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  if (input.graph_id !== undefined) throw refuse("graph_id: standalone graphs are not available here: search a user's memory with user_id (a Synthex scope), or another pipeline with …/compat/zep/p/<pipeline>.");
  for (const key of ["search_filters", "bfs_origin_node_uuids", "center_node_uuid", "reranker", "mmr_lambda"]) {
    if (input[key] !== undefined) throw refuse(`${key}: not supported (Synthex ranks with hybrid search: semantic + BM25 fused).`);
  }
  const userId = str(input.user_id, "user_id");
  const query = str(input.query, "query");
  const scope = (input.scope as string | undefined) ?? "edges";
  const limit = typeof input.limit === "number" && input.limit > 0 ? Math.min(50, Math.floor(input.limit)) : 10;
  const step = scope === "edges" ? b.memoryStep : scope === "nodes" ? b.entitiesStep : scope === "episodes" ? b.source : null;
  if (!step) {
    if (scope === "nodes") return { nodes: [] };
    throw refuse(`scope "${scope}": use edges (memories), nodes (entities) or episodes (conversations).`);
  }
  const found = await c.caller.search.search({ pipelineId: b.pipeline, query, step, scope: scopeOf({ user: userId }), limit });
  const hits = found.hits.filter((h) => h.step === step);
  if (scope === "edges") {
    return {
      edges: hits.map((h) => ({
        uuid: ((h.metadata as { memory?: { id?: string } }).memory?.id ?? h.id),
        fact: h.content,
        name: "MEMORY",
        created_at: h.createdAt.toISOString(),
        source_node_uuid: "",
        target_node_uuid: "",
        episodes: [],
        score: h.score.fused,
        attributes: { record_id: h.id, scope: h.scope },
      })),
    };
  }
  if (scope === "nodes") {
    return { nodes: hits.map((h) => ({ uuid: h.id, name: h.content.slice(0, 200), summary: h.content, labels: ["Entity"], created_at: h.createdAt.toISOString(), score: h.score.fused })) };
  }
  return { episodes: hits.map((h) => ({ uuid: h.id, content: h.content, created_at: h.createdAt.toISOString(), source: "message", score: h.score.fused })) };
}

/** Zep endpoints Synthex answers with a refusal, and what to use instead. */
const REFUSED: Array<[RegExp, string]> = [
  [/^\/(user-summary-instructions|custom-instructions)$/, "Custom instructions are the pipeline's prompts here: edit the facts step's prompt on a branch, try it, and promote it."],
  [/^\/entity-types$/, "Entity types are not configurable through Zep's API: the pipeline's entities step decides what an entity is."],
  [/^\/(graph\/create|graph\/list-all|graph\/clone|graph\/add-fact-triple|graph\/nodes|graph\/patterns|graph\/subgraph|graph-batch)$|^\/graph\/(?!search$)[^/]+(\/warm)?$/, "Standalone graphs and graph edits are not available here: a Synthex pipeline's graph is derived from what its users say (threads and messages); use a pipeline per graph (…/compat/zep/p/<pipeline>)."],
  [/^\/graph\/(node|edge|episodes?|observation|thread-summary|document-summary|documents)\//, "Reading or editing single graph items is not available here: use graph.search, or the Synthex explorer and /api/v1/records/{id}."],
  [/^\/batch/, "The Batch API is not available: add messages per thread (thread.addMessages), or import a chat export with synthex import."],
  [/^\/context-templates/, "Context templates are not available: the context block is the scope's brief (Synthex projection outputs shape it)."],
  [/^\/user-groups|^\/users\/[^/]+\/groups/, "User groups are not available: scope API keys instead (Settings → API keys, a scope prefix)."],
  [/^\/projects/, "Projects are Zep's: here the API key's workspace and the bound pipeline play that part."],
  [/^\/tasks\//, "Tasks are not tracked: a pipeline run processes the messages (see its status in Synthex, Runs)."],
  [/^\/messages\//, "Messages cannot be edited: a thread's messages are the sessions' record."],
  [/^\/users\/[^/]+\/(node|warm)$/, "Zep's user node is not available: the user's memories are graph.search results (edges) and the context block."],
  [/^\/threads\/[^/]+\/(summary|episodes|messages-batch)$/, "Not available here: thread.get lists the messages, thread.getUserContext gives the context block."],
];

async function route(req: Request, c: CompatRequest): Promise<unknown> {
  const method = req.method.toUpperCase();
  const path = c.path.replace(/\/+$/, "") || "/";
  for (const [pattern, message] of REFUSED) if (pattern.test(path)) throw refuse(message);
  const b = await bindPipeline(req, c, "Zep");
  const url = new URL(req.url);
  let m: RegExpExecArray | null;
  if (path === "/users" && method === "POST") return addUser(c, b, await body(req));
  if (path === "/users-ordered" && method === "GET") return listUsers(c, b, url);
  if ((m = /^\/users\/([^/]+)$/.exec(path))) {
    const userId = decodeURIComponent(m[1]!);
    if (method === "GET") return userJson(await findUser(c, b, userId), userId);
    if (method === "DELETE") {
      await findUser(c, b, userId);
      await c.caller.record.purgeScope({ pipelineId: b.pipeline, scope: scopeOf({ user: userId }) });
      return { message: `User ${userId} deleted: the scope ${scopeOf({ user: userId })} is purged (records, what derives from them, live sessions).` };
    }
    if (method === "PATCH") throw refuse("Updating a user is not available here: the user is a Synthex scope (user:<id>); its name and email are set when it is added.");
  }
  if ((m = /^\/users\/([^/]+)\/threads$/.exec(path)) && method === "GET") {
    const userId = decodeURIComponent(m[1]!);
    await findUser(c, b, userId);
    const sessions = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, scope: scopeOf({ user: userId }), idPrefix: "zep-thread:" });
    return sessions.map(threadJson);
  }
  if (path === "/threads" && method === "POST") return createThread(c, b, await body(req));
  if (path === "/threads" && method === "GET") {
    const sessions = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, idPrefix: "zep-thread:" });
    const page = Math.max(1, Number(url.searchParams.get("page_number") ?? 1) || 1);
    const size = Math.min(1000, Math.max(1, Number(url.searchParams.get("page_size") ?? 100) || 100));
    const rows = sessions.slice((page - 1) * size, page * size).map(threadJson);
    return { threads: rows, total_count: sessions.length, response_count: rows.length };
  }
  if ((m = /^\/threads\/([^/]+)$/.exec(path)) && method === "DELETE") return deleteThread(c, b, decodeURIComponent(m[1]!));
  if ((m = /^\/threads\/([^/]+)\/messages$/.exec(path))) {
    const threadId = decodeURIComponent(m[1]!);
    if (method === "POST") return addMessages(c, b, req, threadId, await body(req));
    if (method === "GET") {
      const thread = await findThread(c, b, threadId);
      let messages = await threadMessages(c, b, threadId);
      const lastn = Number(url.searchParams.get("lastn") ?? url.searchParams.get("limit") ?? 0);
      if (lastn > 0) messages = messages.slice(-lastn);
      const t = threadJson(thread);
      return { messages, total_count: messages.length, row_count: messages.length, user_id: t.user_id, thread_created_at: t.created_at };
    }
  }
  if ((m = /^\/threads\/([^/]+)\/context$/.exec(path)) && method === "GET") {
    if (url.searchParams.get("template_id")) throw refuse("template_id: context templates are not available; the context block is the scope's brief.");
    const thread = await findThread(c, b, decodeURIComponent(m[1]!));
    return { context: await contextBlock(c, b, thread.scope) };
  }
  if (path === "/graph/search" && method === "POST") return graphSearch(c, b, await body(req));
  if (path === "/graph" && method === "POST") {
    const input = await body(req);
    if (input.graph_id !== undefined) throw refuse("graph_id: standalone graphs are not available here: add data to a user (user_id).");
    const userId = str(input.user_id, "user_id");
    await findUser(c, b, userId);
    const data = str(input.data, "data");
    const sessionId = `zep-data:${encodeId(userId)}:${randomUUID()}`;
    const done = await c.caller.ingest.messages({ pipelineId: b.pipeline, source: b.source, sessionId, scope: scopeOf({ user: userId }), title: "Zep graph.add", messages: [{ role: "data", content: data }], close: true });
    return { uuid: done.recordId ?? sessionId, content: data, created_at: new Date().toISOString(), source: input.type ?? "text", processed: false };
  }
  throw new CompatError(404, `No Zep endpoint ${method} ${path} here (Synthex serves users, threads, messages, the context block and graph search).`);
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
