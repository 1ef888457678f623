/**
 * Mem0's path on a pipeline without a memory step (issues 49, 50): after "Try another architecture"
 * promotes a graph pipeline (Synapsis), or on the default template (chat-memory), agents keep
 * calling the same Mem0 endpoint. `add` ingests as on the mem0 template (server/compat/mem0.ts);
 * reads answer the records the pipeline serves, as Mem0 memories: on a graph pipeline its
 * relations' current beliefs, else the records of its search output (what REST search answers).
 * Those records are derived by the pipeline's steps, so editing them one by one is refused with
 * what to do instead; deleting a user or all of a scope purges it (an admin key), as on any pipeline.
 */
import { z } from "zod";
import { CompatError, entitiesOf, scopeOf, type Binding, type CompatRequest, type EntityKind, type MemoryBinding } from "./binding";
import { compileFilters, entityParams } from "./filters";
import { filterable, memoryJson, refuse, type MemoryLike } from "./mem0-shape";
import { can } from "../auth/permissions";
import { effectiveScope } from "../services/api-keys";

export const isMemory = (b: Binding): b is MemoryBinding => b.memoryStep !== null && b.factStep !== null;

/** The steps Mem0 reads as memories: the memory step, else the binding's read steps. */
export const readStepsOf = (b: Binding): string[] => (b.memoryStep ? [b.memoryStep] : b.readSteps);

/** A relations record's belief ended (validTo set) is no longer current: Mem0 answers current memories only. */
const beliefEnd = z.object({ custom: z.object({ belief: z.object({ validTo: z.string().nullish() }) }) });
function isCurrent(b: Binding, r: { step: string; metadata: unknown }): boolean {
  if (r.step !== b.relationsStep) return true;
  const parsed = beliefEnd.safeParse(r.metadata);
  return parsed.success && !parsed.data.custom.belief.validTo;
}

/** A search hit of a read step as a memory (its record id is its memory id), or null when it is not one. */
export function derivedSearchHit(b: Binding, h: { id: string; step: string; content: string; scope: string; metadata: unknown; createdAt: Date | string }): MemoryLike | null {
  if (!b.readSteps.includes(h.step) || !isCurrent(b, h)) return null;
  return { memoryId: h.id, content: h.content, scope: h.scope, createdAt: h.createdAt, updatedAt: h.createdAt };
}

const MAX_PAGES = 10;

/** The read steps' current records within a scope (the key's own scope at most), as memories. */
export async function derivedList(c: CompatRequest, b: Binding, prefix: string | undefined): Promise<MemoryLike[]> {
  const scope = effectiveScope(c.ctx.actor.restrictions, prefix);
  const out: MemoryLike[] = [];
  for (const step of b.readSteps) {
    let cursor: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const found = await c.caller.record.listByStep({ pipelineId: b.pipelineId, step, ...(scope ? { scope } : {}), cursor, limit: 200 });
      for (const r of found.records) {
        if (isCurrent(b, r)) out.push({ memoryId: r.id, content: r.content, scope: r.scope, createdAt: r.createdAt, updatedAt: r.createdAt });
      }
      cursor = found.nextCursor;
      if (!cursor) break;
    }
  }
  return out;
}

const derived = (b: Binding) =>
  `Pipeline "${b.pipeline}" has no memory step: its memories are derived by its steps (${b.readSteps.join(", ")}), so they cannot be edited or deleted one by one. Edit the pipeline on a branch (e.g. its prompts) and run it, or purge a scope (delete_all or delete_users with an admin key).`;

const RECORD_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

async function getDerived(c: CompatRequest, b: Binding, memoryId: string): Promise<MemoryLike> {
  if (!RECORD_ID.test(memoryId)) throw refuse(`memory_id: "${memoryId.slice(0, 80)}" is not a valid memory id (on this pipeline a memory id is a record id, as get_all and search answer them).`);
  const notFound = () => new CompatError(404, `Memory ${memoryId} not found.`);
  const r = await c.caller.record.get({ id: memoryId, pipelineId: b.pipelineId }).catch((err: unknown) => {
    if (err instanceof Error && /not found|outside/i.test(err.message)) throw notFound();
    throw err;
  });
  if (!isCurrent(b, r) || !b.readSteps.includes(r.step)) throw notFound();
  return { memoryId: r.id, content: r.content, scope: r.scope, createdAt: r.createdAt, updatedAt: r.createdAt };
}

async function getAll(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  for (const key of ["categories", "keywords"]) if (input[key] !== undefined) throw refuse(`${key}: not supported by Synthex (memories keep no categories; filter by entity ids).`);
  const filters = { ...(input.filters as object | undefined), ...(input.start_date ? { created_at: { gte: input.start_date } } : {}) };
  const filter = compileFilters(Object.keys(filters).length ? filters : undefined);
  const all = (await derivedList(c, b, filter.prefix)).filter((m) => filter.test(filterable(m)));
  return { count: all.length, next: null, previous: null, results: all.slice(0, 1000).map((m) => memoryJson(m)) };
}

/** The scopes an admin key purges for delete_all / delete_users (each once: a scope covers those below it). */
async function purge(c: CompatRequest, b: Binding, scopes: Set<string>) {
  if (!can(c.ctx.actor.role, "records:purge")) {
    throw new CompatError(403, `${derived(b)} Purging needs an admin key (synthex keys create --role admin); your key's role is ${c.ctx.actor.role}.`);
  }
  const covered = [...scopes].sort().filter((s, _, all) => !all.some((o) => o !== s && s.startsWith(`${o}:`)));
  for (const scope of covered) await c.caller.record.purgeScope({ pipelineId: b.pipeline, scope });
  return covered.length;
}

const KINDS: EntityKind[] = ["user", "agent", "app", "run"];

async function deleteAll(c: CompatRequest, b: Binding, query: Record<string, string>) {
  const wild = KINDS.filter((k) => query[`${k}_id`] === "*");
  const entities = entityParams(Object.fromEntries(Object.entries(query).filter(([, v]) => v !== "*")));
  if (!Object.keys(entities).length && !wild.length) throw refuse("Name at least one of user_id, agent_id, app_id or run_id (\"*\" for all of that type; all four \"*\" delete every memory).");
  const scopes = new Set<string>();
  if (!wild.length) scopes.add(scopeOf(entities));
  else {
    const filter = compileFilters(Object.keys(entities).length ? Object.fromEntries(Object.entries(entities).map(([k, v]) => [`${k}_id`, v])) : undefined);
    for (const m of await derivedList(c, b, filter.prefix)) {
      const e = entitiesOf(m.scope);
      if (filter.test(filterable(m)) && (wild.length === KINDS.length || wild.some((k) => e[k] !== undefined))) scopes.add(m.scope);
    }
  }
  const purged = await purge(c, b, scopes);
  return { message: `Memories deleted successfully! (${purged} scope${purged === 1 ? "" : "s"} purged)` };
}

async function deleteEntity(c: CompatRequest, b: Binding, type: string, name: string) {
  if (!(KINDS as string[]).includes(type)) throw refuse(`Entity type "${type}": one of user, agent, app, run.`);
  const scopes = new Set((await derivedList(c, b, undefined)).filter((m) => entitiesOf(m.scope)[type as EntityKind] === name).map((m) => m.scope));
  if (type === "user") scopes.add(scopeOf({ user: name }));
  await purge(c, b, scopes);
  return { message: "Entity deleted successfully." };
}

async function entities(c: CompatRequest, b: Binding) {
  const byEntity = new Map<string, { type: string; name: string; total: number; first: Date; last: Date }>();
  for (const m of await derivedList(c, b, undefined)) {
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

/** One derived record's history: it was added by the run that derived it (its changes are new records, not versions). */
function historyOf(m: MemoryLike) {
  const e = entitiesOf(m.scope);
  const at = new Date(m.createdAt).toISOString();
  return [{ id: m.memoryId, memory_id: m.memoryId, input: [], old_memory: null, new_memory: m.content, user_id: e.user ?? null, agent_id: e.agent ?? null, categories: [], event: "ADD", reason: null, created_at: at, updated_at: at }];
}

/**
 * The Mem0 calls on a pipeline without a memory step, but `add`, `search` and events (server/compat/mem0.ts
 * answers those for both kinds of pipeline). Anything else there is: a 400 or 404 saying what to use.
 */
export async function derivedRoute(req: Request, c: CompatRequest, b: Binding, method: string, path: string, input: () => Promise<Record<string, unknown>>): Promise<unknown> {
  const url = new URL(req.url);
  let m: RegExpExecArray | null;
  if (path === "/v3/memories/" && method === "POST") return getAll(c, b, await input());
  if (path === "/v1/memories/" && method === "DELETE") return deleteAll(c, b, Object.fromEntries(url.searchParams));
  if (path === "/v1/entities/" && method === "GET") return entities(c, b);
  if ((m = /^\/v[12]\/entities\/([^/]+)\/([^/]+)\/$/.exec(path)) && method === "DELETE") return deleteEntity(c, b, decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
  if ((m = /^\/v1\/memories\/([^/]+)\/history\/$/.exec(path)) && method === "GET") return historyOf(await getDerived(c, b, decodeURIComponent(m[1]!)));
  if ((m = /^\/v1\/memories\/([^/]+)\/$/.exec(path)) && method === "GET") return memoryJson(await getDerived(c, b, decodeURIComponent(m[1]!)));
  if ((m = /^\/v1\/memories\/([^/]+)\/$/.exec(path)) && (method === "PUT" || method === "DELETE")) throw refuse(derived(b));
  if (path === "/v1/batch/" && (method === "PUT" || method === "DELETE")) throw refuse(derived(b));
  if (/^\/api\/v1\/(orgs|webhooks)\//.test(path)) {
    throw refuse(`Pipeline "${b.pipeline}" has no memory step: Mem0's project settings and webhooks map onto a memory step's prompt and outputs. Edit the pipeline and its outputs in the app or with /api/v1.`);
  }
  return undefined;
}
