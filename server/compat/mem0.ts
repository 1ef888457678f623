/**
 * The Mem0 platform API (as `mem0ai`'s `MemoryClient` 3.x calls it) over a Synthex pipeline, at
 * `<app>/compat/mem0`. Memories are the records of the bound pipeline's memory step; an `add`
 * goes through live ingest (one closed session per call, scope from the entity ids) and answers
 * the memory step's decisions for it (ADD / UPDATE / DELETE / NONE). Every call goes through the
 * tRPC procedures with the key's context. What Synthex does not have answers 400 with what to use.
 */
import { randomUUID } from "node:crypto";
import { bindPipeline, CompatError, entitiesOf, limitedRoute, openCompat, scopeOf, statusOf, unloggedCaller, waitFor, type Binding, type CompatRequest, type Entities, type MemoryBinding } from "./binding";
import { derivedRoute, derivedSearchHit, isMemory, readStepsOf } from "./mem0-derived";
import { body, filterable, memoryJson, refuse, type MemoryLike } from "./mem0-shape";
import { compileFilters, entityParams } from "./filters";
import { createWebhook, deleteWebhook, getProject, listWebhooks, updateProject, updateWebhook } from "./mem0-project";
import { can } from "../auth/permissions";
import { trackBackground } from "../services/background";

const BASE = "/compat/mem0";

/** Mem0's error body (Django REST Framework's `detail`); the client shows the text. */
export function mem0Error(status: number, message: string, headers?: HeadersInit): Response {
  return Response.json({ detail: message }, { status, headers });
}

/** Options of `add` Synthex cannot honour, and what to use instead. */
const ADD_REFUSED: Record<string, string> = {
  custom_categories: "categories are not kept: a pipeline step (e.g. a classify transform) can label memories",
  custom_instructions: "extraction instructions are the pipeline's prompts: edit the facts step's prompt on a branch",
  agent_custom_instructions: "extraction instructions are the pipeline's prompts: edit the facts step's prompt on a branch",
  structured_data_schema: "structured extraction is a pipeline step: add a transform with a JSON schema",
  expiration_date: "memories do not expire here: delete them, or purge a scope",
  includes: "the pipeline's prompts decide what is extracted",
  excludes: "the pipeline's prompts decide what is extracted",
};

async function add(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  for (const [key, why] of Object.entries(ADD_REFUSED)) if (input[key] !== undefined && input[key] !== null) throw refuse(`${key}: not supported by Synthex (${why}).`);
  if (input.infer === false) {
    throw refuse("infer: false is not supported: every message goes through the pipeline's extract and consolidate steps. Send the text as a user message, or import records through /api/v1.");
  }
  const raw = typeof input.messages === "string" ? [{ role: "user", content: input.messages }] : input.messages;
  if (!Array.isArray(raw) || !raw.length) throw refuse("messages: a non-empty list of { role, content } (or a string).");
  const time = typeof input.timestamp === "number" ? new Date(input.timestamp * 1000).toISOString() : undefined;
  const metadata = input.metadata && typeof input.metadata === "object" ? (input.metadata as Record<string, unknown>) : undefined;
  const messages = raw.map((m: unknown, i) => {
    const msg = m as { role?: unknown; content?: unknown; name?: unknown };
    if (typeof msg?.content !== "string") throw refuse(`messages[${i}].content: text only (images and documents are not supported here).`);
    return { role: typeof msg.role === "string" ? msg.role : "user", content: msg.content, ...(time ? { time } : {}), ...(metadata ? { metadata } : {}) };
  });
  const entities = entityParams(input);
  const scope = scopeOf(entities);
  const sessionId = `mem0:${entities.run ?? "add"}:${randomUUID()}`.slice(0, 200);
  const ingested = await c.caller.ingest.messages({ pipelineId: b.pipeline, source: b.source, sessionId, scope, messages, close: true });
  if (!ingested.recordId) return input.async_mode === false ? { results: [] } : { message: "Nothing to process.", status: "PENDING", event_id: `${NO_RECORD}${randomUUID()}` };
  const recordId = ingested.recordId;
  if (input.async_mode === false) {
    const found = await settle(c, b, recordId, ingested.runRequested);
    if (found.pending) {
      return { results: [{ message: "Memory processing has been queued: the pipeline is still running.", status: "PENDING", event_id: recordId }] };
    }
    return { results: eventResults(found.versions) };
  }
  // Mem0 v3: the add is an event, PENDING until the pipeline has run over it (GET /v1/event/{id}/).
  processing.add(recordId);
  void trackBackground(
    settle(c, b, recordId, ingested.runRequested)
      .then(() => failed.delete(recordId))
      .catch((err: unknown) => void failed.set(recordId, statusOf(err).message))
      .finally(() => processing.delete(recordId)),
  );
  return { message: "Memory processing has been queued for background execution", status: "PENDING", event_id: recordId };
}

/**
 * An add's event is its ingest record: GET /v1/event/{id}/ derives the status and results from the
 * record's memory versions (ofSource: the caller's own reach, so another scope's event is unknown),
 * from any app server. This process also knows which of its own adds are still being settled and
 * which failed.
 */
const processing = new Set<string>();
const failed = new Map<string, string>();
const NO_RECORD = "evt-none-";

/** Waits until the pipeline has run over the add's record (starting a run if none was requested). */
async function settle(c: CompatRequest, b: Binding, recordId: string, runRequested: boolean) {
  const probe = () => ofSource(c, b, recordId);
  let found = await waitFor(probe, (v) => !v.pending);
  // A run was in progress when the session closed: this record waits for the next one.
  if (!found.pending && !runRequested) {
    await c.caller.run.start({ pipelineId: b.pipeline, options: {} }).catch((err: unknown) => {
      if (statusOf(err).status !== 409) throw err;
    });
    found = await waitFor(probe, (v) => !v.pending);
  }
  return found;
}

/**
 * The memory versions an add's record led to, and whether a run is still due. Without a memory step
 * (a derived pipeline) an add has no versions of its own: its event settles when no run is queued or running.
 */
async function ofSource(c: CompatRequest, b: Binding, recordId: string): Promise<{ pending: boolean; versions: MemoryLike[] }> {
  if (isMemory(b)) return c.caller.memory.ofSource({ pipelineId: b.pipeline, step: b.memoryStep, recordId });
  await c.caller.record.get({ id: recordId, pipelineId: b.pipelineId });
  const runs = await c.caller.run.list({ pipelineId: b.pipeline });
  return { pending: runs.some((r) => r.status === "queued" || r.status === "running"), versions: [] };
}

const eventResults = (versions: MemoryLike[]) => versions.map((v) => memoryJson(v, { event: v.event, data: { memory: v.content } }));

async function event(c: CompatRequest, b: Binding, eventId: string) {
  const notFound = () => new CompatError(404, "Event not found or you don't have permission to access it.");
  if (eventId.startsWith(NO_RECORD)) {
    return { id: eventId, event_type: "ADD", status: "SUCCEEDED", payload: null, metadata: null, results: [], created_at: null, updated_at: null, error: null };
  }
  const found = await ofSource(c, b, eventId).catch((err: unknown) => {
    const { status } = statusOf(err);
    throw status === 404 || status === 403 || status === 400 ? notFound() : err;
  });
  const error = failed.get(eventId) ?? null;
  const status = error ? "FAILED" : processing.has(eventId) || found.pending ? "PENDING" : "SUCCEEDED";
  const times = found.versions.map((v) => new Date(v.createdAt).toISOString()).sort();
  return {
    id: eventId,
    event_type: "ADD",
    status,
    payload: null,
    metadata: null,
    results: status === "SUCCEEDED" ? eventResults(found.versions) : [],
    created_at: times[0] ?? null,
    updated_at: times.at(-1) ?? null,
    error,
  };
}

async function search(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  for (const key of ["categories", "metadata", "fields"]) if (input[key] !== undefined) throw refuse(`${key}: not supported by Synthex (memories keep no categories or metadata of their own; filter by entity ids).`);
  if (typeof input.query !== "string" || !input.query.trim()) throw refuse("query: required.");
  const filter = compileFilters(input.filters);
  const topK = typeof input.top_k === "number" && input.top_k > 0 ? Math.min(100, Math.floor(input.top_k)) : 10;
  const threshold = typeof input.threshold === "number" ? input.threshold : null;
  const query = input.query;
  const ranked = async (mode: "fts" | "hybrid" | "semantic", semanticFloor?: number, caller = c.caller) => {
    const found = await caller.search.search({
      pipelineId: b.pipeline,
      query,
      step: b.memoryStep ?? readStepsOf(b),
      scope: filter.prefix,
      limit: Math.min(100, topK * 4),
      mode,
      ...(semanticFloor !== undefined ? { fusion: { semanticFloor } } : {}),
    });
    return found.hits
      .flatMap((h) => {
        const score = mode === "semantic" ? Math.max(0, h.score.semantic ?? 0) : h.score.fused;
        if (!b.memoryStep) {
          const memory = derivedSearchHit(b, h);
          return memory ? [{ score, memory }] : [];
        }
        if (h.step !== b.memoryStep) return [];
        const meta = (h.metadata as { memory?: { id?: string } }).memory;
        return [{ score, memory: { memoryId: meta?.id ?? h.id, content: h.content, scope: h.scope, createdAt: h.createdAt, updatedAt: h.createdAt } }];
      })
      .filter(({ memory }) => filter.test(filterable(memory)))
      .filter(({ score }) => threshold === null || score >= threshold)
      .slice(0, topK)
      .map(({ score, memory }) => memoryJson(memory, { score }));
  };
  const results = await ranked(input.keyword_search === true ? "fts" : "hybrid");
  if (results.length || input.filters === undefined || threshold !== null || input.keyword_search === true) return { results };
  // Mem0 answers the filtered entities' memories closest in meaning, whatever the words. Synthex's
  // search keeps only memories that share a word or pass its relevance floor; when that leaves
  // nothing (the offline embedder has little meaning to match on), the memories the filters select
  // answer by their similarity alone (score: the cosine, at least 0). A threshold turns this off.
  return { results: await ranked("semantic", -1, unloggedCaller(c)) };
}

async function list(c: CompatRequest, b: MemoryBinding, filters: unknown) {
  const filter = compileFilters(filters);
  const { memories } = await c.caller.memory.list({ pipelineId: b.pipeline, step: b.memoryStep, scope: filter.prefix });
  return memories.filter((m) => filter.test(filterable(m)));
}

async function getAll(c: CompatRequest, b: MemoryBinding, req: Request, input: Record<string, unknown>) {
  for (const key of ["categories", "keywords"]) if (input[key] !== undefined) throw refuse(`${key}: not supported by Synthex (memories keep no categories; filter by entity ids).`);
  const filters = { ...(input.filters as object | undefined), ...(input.start_date ? { created_at: { gte: input.start_date } } : {}) };
  const all = await list(c, b, Object.keys(filters).length ? filters : undefined);
  const url = new URL(req.url);
  const page = Math.max(1, Number(url.searchParams.get("page") ?? 1) || 1);
  const size = Math.min(1000, Math.max(1, Number(url.searchParams.get("page_size") ?? 100) || 100));
  const link = (p: number) => {
    const u = new URL(url);
    u.searchParams.set("page", String(p));
    u.searchParams.set("page_size", String(size));
    return u.toString();
  };
  return {
    count: all.length,
    next: page * size < all.length ? link(page + 1) : null,
    previous: page > 1 ? link(page - 1) : null,
    results: await Promise.all(all.slice((page - 1) * size, page * size).map(async (m) => memoryJson({ ...m, createdAt: await created(c, m) }))),
  };
}

/** Synthex memory ids start with `mem-`; Mem0's are UUIDs. Anything else is malformed: a 400, as Mem0 answers a non-UUID. */
const MEMORY_ID = /^(mem[-_][A-Za-z0-9_-]{0,190}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
function checkId(memoryId: string, field = "memory_id") {
  if (!MEMORY_ID.test(memoryId)) throw refuse(`${field}: "${memoryId.slice(0, 80)}" is not a valid memory id (Synthex memory ids start with mem-, as get_all and search answer them).`);
}

/** A memory's creation time: its first version's (an update is a new version; Mem0 keeps created_at). */
async function created(c: CompatRequest, m: { recordId: string; version?: number; createdAt: Date | string }): Promise<Date | string> {
  if (!m.version || m.version <= 1) return m.createdAt;
  const h = await c.caller.record.history({ id: m.recordId });
  const first = h.versions.find((v) => v.version === 1);
  if (!first) return m.createdAt;
  return (await c.caller.record.get({ id: first.recordId })).createdAt;
}

async function current(c: CompatRequest, b: MemoryBinding, memoryId: string) {
  checkId(memoryId);
  const memory = await c.caller.memory.get({ pipelineId: b.pipeline, step: b.memoryStep, memoryId });
  if (memory.status !== "active") throw new CompatError(404, `Memory ${memoryId} was deleted (restore it with POST /api/v1/records/${memory.recordId}/restore).`);
  return { ...memory, createdAt: await created(c, memory) };
}

async function update(c: CompatRequest, b: MemoryBinding, memoryId: string, input: Record<string, unknown>) {
  for (const key of ["timestamp", "expiration_date"]) {
    if (input[key] !== undefined) throw refuse(`${key}: not supported by Synthex (a memory's time comes from the facts it was made from, and memories do not expire: delete them).`);
  }
  const text = input.text;
  const metadata = input.metadata;
  if (text !== undefined && (typeof text !== "string" || !text.trim())) throw refuse("text: the memory's new text (not empty).");
  if (metadata !== undefined && (typeof metadata !== "object" || metadata === null || Array.isArray(metadata))) throw refuse("metadata: an object of key/value pairs.");
  if (text === undefined && metadata === undefined) throw refuse("text or metadata: required.");
  const memory = await current(c, b, memoryId);
  await c.caller.memory.update({
    id: memory.recordId,
    ...(typeof text === "string" ? { content: text } : {}),
    ...(metadata !== undefined ? { attributes: metadata as Record<string, unknown> } : {}),
  });
  return memoryJson(await current(c, b, memoryId));
}

async function remove(c: CompatRequest, b: MemoryBinding, memoryId: string) {
  const memory = await current(c, b, memoryId);
  await c.caller.memory.delete({ id: memory.recordId });
}

async function history(c: CompatRequest, b: MemoryBinding, memoryId: string) {
  checkId(memoryId);
  const memory = await c.caller.memory.get({ pipelineId: b.pipeline, step: b.memoryStep, memoryId });
  const h = await c.caller.record.history({ id: memory.recordId });
  const e = entitiesOf(h.scope);
  const versions = [...h.versions].reverse();
  return versions.map((v, i) => ({
    id: v.recordId,
    memory_id: h.memoryId,
    input: v.fact ? [{ role: "user", content: v.fact.content }] : [],
    old_memory: i > 0 ? versions[i - 1]!.content : null,
    new_memory: v.content,
    user_id: e.user ?? null,
    agent_id: e.agent ?? null,
    categories: [],
    event: v.event,
    reason: v.reason,
    created_at: v.at,
    updated_at: v.at,
  }));
}

const MAX_BATCH = 1000;

async function batch(c: CompatRequest, b: MemoryBinding, method: string, input: Record<string, unknown>) {
  const items = input.memories;
  if (!Array.isArray(items) || !items.length || items.length > MAX_BATCH) throw refuse(`memories: a list of 1 to ${MAX_BATCH} { memory_id${method === "PUT" ? ", text" : ""} }.`);
  const wanted = items.map((m: unknown, i) => {
    const item = m as { memory_id?: unknown; text?: unknown };
    if (typeof item?.memory_id !== "string") throw refuse(`memories[${i}].memory_id: required.`);
    checkId(item.memory_id, `memories[${i}].memory_id`);
    if (method === "PUT" && (typeof item.text !== "string" || !item.text.trim())) throw refuse(`memories[${i}].text: required.`);
    return { memoryId: item.memory_id, text: item.text as string };
  });
  // Every memory is checked before any changes: one unknown id changes nothing.
  const found = [];
  for (const w of wanted) found.push({ ...w, memory: await current(c, b, w.memoryId) });
  for (const f of found) {
    if (method === "PUT") await c.caller.memory.update({ id: f.memory.recordId, content: f.text });
    else await c.caller.memory.delete({ id: f.memory.recordId });
  }
  return { message: `Successfully ${method === "PUT" ? "updated" : "deleted"} ${found.length} memories` };
}

const KINDS = ["user", "agent", "app", "run"] as const;

/**
 * Mem0's delete_all: the named entity ids' memories. `"*"` is Mem0's explicit opt-in to bulk
 * deletion: `user_id="*"` deletes every memory that has a user, each further `"*"` adds that
 * entity type's, and all four `"*"` are the full wipe (every memory of the bound pipeline, whatever
 * its scope). Ids named alongside a `"*"` still have to match. Nothing named: refused, as Mem0 does.
 */
async function deleteAll(c: CompatRequest, b: MemoryBinding, query: Record<string, string>) {
  const wild = KINDS.filter((k) => query[`${k}_id`] === "*");
  const entities = entityParams(Object.fromEntries(Object.entries(query).filter(([, v]) => v !== "*")));
  if (!Object.keys(entities).length && !wild.length) throw refuse("Name at least one of user_id, agent_id, app_id or run_id (\"*\" for all of that type; all four \"*\" delete every memory).");
  const filter = Object.fromEntries(Object.entries(entities).map(([k, v]) => [`${k}_id`, v]));
  const named = await list(c, b, Object.keys(filter).length ? filter : undefined);
  const memories = wild.length === KINDS.length ? named : wild.length ? named.filter((m) => wild.some((k) => entitiesOf(m.scope)[k] !== undefined)) : named;
  for (const m of memories) await c.caller.memory.delete({ id: m.recordId });
  return { message: `Memories deleted successfully! (${memories.length})` };
}

async function entities(c: CompatRequest, b: MemoryBinding) {
  const { memories } = await c.caller.memory.list({ pipelineId: b.pipeline, step: b.memoryStep });
  const byEntity = new Map<string, { type: string; name: string; total: number; first: Date; last: Date }>();
  for (const m of memories) {
    for (const [type, name] of Object.entries(entitiesOf(m.scope))) {
      const key = `${type}:${name}`;
      const at = new Date(m.createdAt);
      const e = byEntity.get(key) ?? { type, name, total: 0, first: at, last: at };
      e.total += 1;
      if (at < e.first) e.first = at;
      if (at > e.last) e.last = at;
      byEntity.set(key, e);
    }
  }
  const results = [...byEntity.entries()].map(([id, e]) => ({ id, name: e.name, type: e.type, total_memories: e.total, created_at: e.first.toISOString(), updated_at: e.last.toISOString(), owner: null, metadata: null }));
  return { count: results.length, next: null, previous: null, results };
}

/** Deleting an entity erases it: every scope with that id is purged (records, what derives from them, live sessions). */
async function deleteEntity(c: CompatRequest, b: MemoryBinding, type: string, name: string) {
  if (!["user", "agent", "app", "run"].includes(type)) throw refuse(`Entity type "${type}": one of user, agent, app, run.`);
  const { memories } = await c.caller.memory.list({ pipelineId: b.pipeline, step: b.memoryStep });
  const scopes = new Set(memories.filter((m) => entitiesOf(m.scope)[type as keyof Entities] === name).map((m) => m.scope));
  if (type === "user") scopes.add(scopeOf({ user: name }));
  if (!can(c.ctx.actor.role, "records:purge")) {
    // An editor key (synthex keys create's default) deletes the entity's memories, as an editor can in
    // the app (restorable, history kept); erasing its records too (purge) needs an admin key.
    for (const m of memories) if (scopes.has(m.scope)) await c.caller.memory.delete({ id: m.recordId });
    return { message: "Entity deleted successfully." };
  }
  const covered = [...scopes].sort().filter((s, _, all) => !all.some((o) => o !== s && s.startsWith(`${o}:`)));
  for (const scope of covered) await c.caller.record.purgeScope({ pipelineId: b.pipeline, scope });
  return { message: "Entity deleted successfully." };
}

/** Mem0 endpoints Synthex answers with a refusal, and what to use instead. */
const REFUSED: Array<[RegExp, string]> = [
  [/^\/api\/v1\/orgs\/(?!organizations\/[^/]+\/projects\/[^/]+\/$)/, "Organisations and their members are Mem0's: here the API key's workspace plays that part (Settings → Members), and the project is the key's pipeline (getProject, updateProject)."],
  [/^\/v2\/profiles\/|^\/v2\/entities\/[^/]+\/[^/]+\/profile\/$/, "Mem0 profiles are not available: a scope's brief (GET /api/v1/pipelines/{pipeline}/brief?scope=user:<id>) and the pipeline's projection outputs are the per-user summary."],
  [/^\/v1\/feedback\/$/, "Feedback on memories is not stored: score a pipeline's memory with Synthex evals (synthex eval)."],
  [/^\/v1\/exports\//, "Memory exports are not available here: read records with /api/v1 (GET /records/{id}, search) or the CLI."],
];

/** The endpoints served here and their methods: another method on one of them is a 400 naming these. */
const ENDPOINTS: Array<[RegExp, string[]]> = [
  [/^\/v1\/ping\/$/, ["GET"]],
  [/^\/v3\/memories\/add\/$/, ["POST"]],
  [/^\/v3\/memories\/search\/$/, ["POST"]],
  [/^\/v3\/memories\/$/, ["POST"]],
  [/^\/v1\/memories\/$/, ["DELETE"]],
  [/^\/v1\/event\/[^/]+\/$/, ["GET"]],
  [/^\/v1\/batch\/$/, ["PUT", "DELETE"]],
  [/^\/v1\/entities\/$/, ["GET"]],
  [/^\/v[12]\/entities\/[^/]+\/[^/]+\/$/, ["DELETE"]],
  [/^\/v1\/memories\/[^/]+\/history\/$/, ["GET"]],
  [/^\/v1\/memories\/[^/]+\/$/, ["GET", "PUT", "DELETE"]],
  [/^\/api\/v1\/orgs\/organizations\/[^/]+\/projects\/[^/]+\/$/, ["GET", "PATCH"]],
  [/^\/api\/v1\/webhooks\/projects\/[^/]+\/$/, ["GET", "POST"]],
  [/^\/api\/v1\/webhooks\/[^/]+\/$/, ["PUT", "DELETE"]],
];

async function route(req: Request, c: CompatRequest): Promise<unknown> {
  const method = req.method.toUpperCase();
  const path = c.path.endsWith("/") ? c.path : `${c.path}/`;
  for (const [pattern, message] of REFUSED) if (pattern.test(path)) throw refuse(message);
  if (path === "/v1/ping/" && method === "GET") {
    const bound = await bindPipeline(req, c, "Mem0").then((b) => b.pipeline).catch(() => null);
    return { status: "ok", org_id: c.ctx.actor.workspaceId, project_id: bound ?? "unbound", user_email: null };
  }
  const url = new URL(req.url);
  let m: RegExpExecArray | null;
  // Mem0's project is the key's pipeline: a project id in the path binds it as p/<pipeline> would.
  const project = /^\/api\/v1\/(?:orgs\/organizations\/([^/]+)\/projects|webhooks\/projects)\/([^/]+)\/$/.exec(path);
  const projectId = project ? decodeURIComponent(project[2]!) : null;
  const b = await bindPipeline(req, projectId && !c.pipelineFromPath ? { ...c, pipelineFromPath: projectId } : c, "Mem0");
  if (path === "/v3/memories/add/" && method === "POST") return add(c, b, await body(req));
  if (path === "/v3/memories/search/" && method === "POST") return search(c, b, await body(req));
  if ((m = /^\/v1\/event\/([^/]+)\/$/.exec(path)) && method === "GET") return event(c, b, decodeURIComponent(m[1]!));
  // No memory step (a graph pipeline after a migration, the default template): the records it serves.
  const answered = isMemory(b) ? undefined : await derivedRoute(req, c, b, method, path, () => body(req));
  if (answered !== undefined || !isMemory(b)) return answered ?? notServed(method, path);
  if (project && project[1] !== undefined) {
    const org = decodeURIComponent(project[1]);
    if (method === "GET") return getProject(c, b, org, projectId!, url.searchParams.getAll("fields"));
    if (method === "PATCH") return updateProject(c, b, org, projectId!, await body(req));
  }
  if (project && method === "GET") return listWebhooks(c, b, projectId!);
  if (project && method === "POST") return createWebhook(c, b, projectId!, await body(req));
  if ((m = /^\/api\/v1\/webhooks\/([^/]+)\/$/.exec(path)) && !project) {
    if (method === "PUT") return updateWebhook(c, b, decodeURIComponent(m[1]!), await body(req));
    if (method === "DELETE") return deleteWebhook(c, b, decodeURIComponent(m[1]!));
  }
  if (path === "/v3/memories/" && method === "POST") return getAll(c, b, req, await body(req));
  if (path === "/v1/memories/" && method === "DELETE") return deleteAll(c, b, Object.fromEntries(url.searchParams));
  if (path === "/v1/batch/" && (method === "PUT" || method === "DELETE")) return batch(c, b, method, await body(req));
  if (path === "/v1/entities/" && method === "GET") return entities(c, b);
  if ((m = /^\/v[12]\/entities\/([^/]+)\/([^/]+)\/$/.exec(path)) && method === "DELETE") return deleteEntity(c, b, decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
  if ((m = /^\/v1\/memories\/([^/]+)\/history\/$/.exec(path)) && method === "GET") return history(c, b, decodeURIComponent(m[1]!));
  if ((m = /^\/v1\/memories\/([^/]+)\/$/.exec(path))) {
    const id = decodeURIComponent(m[1]!);
    if (method === "GET") return memoryJson(await current(c, b, id));
    if (method === "PUT") return update(c, b, id, await body(req));
    if (method === "DELETE") {
      if (url.searchParams.get("delete_linked") === "true") throw refuse("delete_linked: not supported (a memory's versions are one memory here: delete removes it, its history stays).");
      await remove(c, b, id);
      return { message: "Memory deleted successfully!" };
    }
  }
  return notServed(method, path);
}

function notServed(method: string, path: string): never {
  const allowed = ENDPOINTS.find(([pattern]) => pattern.test(path))?.[1];
  if (allowed) throw refuse(`${method} ${path} is not supported: use ${allowed.join(" or ")} (the MemoryClient's own calls).`);
  throw new CompatError(404, `No Mem0 endpoint ${method} ${path} here (Synthex serves the MemoryClient's memories, search, history, batch and entities endpoints).`);
}

/** Answers one request under /compat/mem0. */
export async function handleMem0(req: Request): Promise<Response> {
  const opened = await openCompat(req, BASE, mem0Error);
  if (opened instanceof Response) return opened;
  try {
    return Response.json(await route(req, opened));
  } catch (err) {
    const { status, message } = statusOf(err);
    return mem0Error(status, message);
  }
}

/** The route handler (app/compat/mem0/[...path]/route.ts), behind the API's body limit. */
export const mem0Route = limitedRoute(handleMem0, mem0Error);
