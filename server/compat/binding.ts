/**
 * What the Mem0 and Zep compat APIs share: the API key (the clients' own `Authorization: Token …`
 * and `Api-Key …` headers, authenticated by the same `createContext` as /api/v1, rate-limited the
 * same way), the tRPC caller every operation goes through (so role, read-only, pipeline and scope
 * restrictions and audit apply unchanged), the pipeline an endpoint is bound to, and the mapping
 * of the clients' entity ids onto Synthex scopes.
 *
 * No session cookie is read here: a compat request is authenticated by its key alone, so a
 * browser's cookies give it nothing and cross-site request forgery does not arise.
 */
import { TRPCError } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { createCaller } from "../api/root";
import { createContext, type Context } from "../api/trpc";
import { DomainError } from "../core/errors";
import { apiRateLimit } from "../http/api-rate-limit";
import { apiBodyLimit, BodyTooLargeError, withBodyLimit, type BodyLimit } from "../http/body-limit";
import { getDb } from "../store/db";

export type Caller = ReturnType<typeof createCaller>;

/**
 * The pipeline a compat endpoint serves: its name, the source messages go into, its memory step
 * (none on a graph pipeline such as Synapsis, which Zep's path serves from its entities and relations).
 */
export interface Binding {
  pipeline: string;
  pipelineId: string;
  source: string;
  memoryStep: string | null;
  factStep: string | null;
  /** Steps a graph search reads for nodes (entities) and edges between them (relations: beliefs naming their entities). */
  entitiesStep: string | null;
  relationsStep: string | null;
  /**
   * Without a memory step, the steps Mem0's path reads as memories: the relations step on a graph
   * pipeline (its current beliefs), else the steps the pipeline's search outputs serve.
   */
  readSteps: string[];
}

/** A binding with a memory step: what Mem0's path needs (its memories are that step's records). */
export type MemoryBinding = Binding & { memoryStep: string; factStep: string };

export interface CompatRequest {
  caller: Caller;
  ctx: Context & { actor: Extract<NonNullable<Context["actor"]>, { kind: "apiKey" }> };
  /** The path under the client's base URL, without the `p/<pipeline>` binding prefix. */
  path: string;
  pipelineFromPath: string | null;
}

/** A failure the client sees in its own error shape: status and message. */
export class CompatError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Any error as status + message (internal errors are logged, never described). */
export function statusOf(err: unknown): { status: number; message: string } {
  if (err instanceof CompatError) return { status: err.status, message: err.message };
  if (err instanceof DomainError) return { status: getHTTPStatusCodeFromError(new TRPCError({ code: err.code, message: err.message })), message: err.message };
  if (err instanceof TRPCError && err.code !== "INTERNAL_SERVER_ERROR") return { status: getHTTPStatusCodeFromError(err), message: err.message };
  console.error("[synthex compat] request failed", err instanceof TRPCError ? (err.cause ?? err) : err);
  return { status: 500, message: "Internal error." };
}

/** `Token sx_…` (Mem0), `Api-Key sx_…` (Zep) or `Bearer sx_…`. */
export function keyOf(authorization: string | null): string | null {
  return authorization?.match(/^(?:Token|Api-Key|Bearer)\s+(\S+)\s*$/i)?.[1] ?? null;
}

/**
 * Authenticates the request's API key as /api/v1 does and counts it against the key's rate
 * limits; answers the error response (in the client's shape) when it cannot go on.
 * `p/<pipeline>/…` at the start of the path binds the request to that pipeline.
 */
export async function openCompat(req: Request, base: string, errorResponse: (status: number, message: string, headers?: HeadersInit) => Response): Promise<CompatRequest | Response> {
  const key = keyOf(req.headers.get("authorization"));
  if (!key) return errorResponse(401, "Send a Synthex API key (sx_…, Settings → API keys) as the client's API key. Session cookies are not accepted here.");
  let ctx: Context;
  try {
    ctx = await createContext({ db: await getDb(), authorization: `Bearer ${key}` });
    ctx.surface = "compat";
  } catch (err) {
    const { status, message } = statusOf(err);
    return errorResponse(status, message);
  }
  if (ctx.actor?.kind !== "apiKey") return errorResponse(401, "The API key is unknown or has been revoked.");
  const limited = await apiRateLimit(ctx.actor);
  if (limited) {
    const body = (await limited.json()) as { error: { message: string } };
    return errorResponse(429, body.error.message, { "retry-after": limited.headers.get("retry-after") ?? "60" });
  }
  let path = new URL(req.url).pathname.slice(base.length) || "/";
  let pipelineFromPath: string | null = null;
  const bound = /^\/p\/([^/]+)(\/.*)?$/.exec(path);
  if (bound) {
    pipelineFromPath = decodeURIComponent(bound[1]!);
    path = bound[2] ?? "/";
  }
  // Counted once for this request above: the procedures it calls (and an add's polling) must not count again.
  const counted: Context = { ...ctx, apiRateCounted: true };
  return { caller: createCaller(counted), ctx: counted as CompatRequest["ctx"], path, pipelineFromPath };
}

/** A caller for a second search answering the same compat call (a fallback): not logged again, the call's first search was. */
export function unloggedCaller(c: CompatRequest): Caller {
  return createCaller({ ...c.ctx, unlogged: true });
}

/**
 * The pipeline a compat request works on: `p/<pipeline>` in the base URL, else the `X-Synthex-Pipeline`
 * header, else the key's only pipeline (a key limited to one pipeline in Settings → API keys),
 * else the workspace's only pipeline. Anything else is refused with what to do.
 */
export async function bindPipeline(req: Request, compat: CompatRequest, client: "Mem0" | "Zep"): Promise<Binding> {
  const asked = compat.pipelineFromPath ?? req.headers.get("x-synthex-pipeline")?.trim() ?? null;
  let name = asked;
  if (!name) {
    const { pipelineIds } = compat.ctx.actor.restrictions;
    const pipelines = await compat.caller.pipeline.list({});
    if (pipelineIds.length === 1) name = pipelines.find((p) => p.id === pipelineIds[0])?.name ?? pipelineIds[0]!;
    else if (pipelines.length === 1) name = pipelines[0]!.name;
    else {
      throw new CompatError(
        400,
        `This ${client} endpoint is not bound to a pipeline: use an API key limited to one pipeline (Settings → API keys), or put the pipeline in the base URL (…/compat/${client.toLowerCase()}/p/<pipeline>), or send X-Synthex-Pipeline: <pipeline>. Pipelines: ${pipelines.map((p) => p.name).join(", ") || "none"}.`,
      );
    }
  }
  const { pipeline, version } = await compat.caller.pipeline.get({ pipelineId: name });
  const spec = version.spec;
  const consolidate = spec.steps.filter((s) => s.type === "consolidate");
  const memory = consolidate.find((s) => s.name === "memories") ?? (consolidate.length === 1 ? consolidate[0] : undefined);
  const entities = spec.steps.find((s) => s.name === "entities" || s.type === "entities");
  const relations = spec.steps.find((s) => s.type === "relations");
  const searchSteps = [...new Set(spec.outputs.filter((o) => o.surface === "search").flatMap((o) => (Array.isArray(o.from) ? o.from : [o.from])))];
  const readSteps = memory ? [] : relations ? [relations.name] : searchSteps;
  // Mem0's path serves a pipeline without a memory step from what it serves: its relations (a graph) or its search output.
  if (!memory && !(client === "Zep" && entities && relations) && !(client === "Mem0" && readSteps.length)) {
    const graph =
      client === "Zep"
        ? ", or an entities and a relations step (e.g. the synapsis template): Zep's nodes are the entities and its edges the relations"
        : ", a relations step or a search output (Mem0 then serves those records)";
    throw new CompatError(400, `Pipeline "${name}" has no memory step (a consolidate step, e.g. the mem0 template's "memories")${graph}: ${client} memories are the records of that step.`);
  }
  const source = spec.sources[0];
  if (!source) throw new CompatError(400, `Pipeline "${name}" has no source to ingest messages into.`);
  const from = memory ? (memory as { from: string | string[] }).from : null;
  return {
    pipeline: name,
    pipelineId: pipeline.id,
    source: source.name,
    memoryStep: memory?.name ?? null,
    factStep: from === null ? null : Array.isArray(from) ? from[0]! : from,
    entitiesStep: entities?.name ?? null,
    relationsStep: relations?.name ?? null,
    readSteps,
  };
}

// --- Entity ids ↔ scopes -------------------------------------------------------------------------

export const ENTITY_KINDS = ["user", "agent", "app", "run"] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];
export type Entities = Partial<Record<EntityKind, string>>;

export const encodeId = (id: string) => id.replace(/%/g, "%25").replace(/:/g, "%3A");
const decodeId = (id: string) => id.replace(/%3A/gi, ":").replace(/%25/g, "%");

/**
 * The scope of a memory written with these entity ids: `user:<id>`, then `agent:<id>`, `app:<id>`,
 * `run:<id>` for those present, in that order (`user:alice:agent:support`). A key limited to
 * `user:alice` reaches everything of alice's. `:` inside an id is written `%3A`.
 */
export function scopeOf(entities: Entities): string {
  const parts = ENTITY_KINDS.filter((k) => entities[k]).map((k) => `${k}:${encodeId(entities[k]!)}`);
  if (!parts.length) throw new CompatError(400, "Name at least one of user_id, agent_id, app_id or run_id.");
  const scope = parts.join(":");
  if (scope.length > 256) throw new CompatError(400, "The entity ids are too long: their scope is over 256 characters.");
  return scope;
}

/** The entity ids of a scope written by `scopeOf` (other scopes: none). */
export function entitiesOf(scope: string): Entities {
  const parts = scope.split(":");
  if (parts.length % 2) return {};
  const out: Entities = {};
  for (let i = 0; i < parts.length; i += 2) {
    const kind = parts[i] as EntityKind;
    if (!ENTITY_KINDS.includes(kind) || out[kind] !== undefined) return {};
    out[kind] = decodeId(parts[i + 1]!);
  }
  return out;
}

/** The longest scope prefix every memory with these ids lies under (entities are written in a fixed order). */
export function prefixOf(entities: Entities): string | undefined {
  const parts: string[] = [];
  for (const k of ENTITY_KINDS) {
    if (!entities[k]) break;
    parts.push(`${k}:${encodeId(entities[k]!)}`);
  }
  return parts.length ? parts.join(":") : undefined;
}

/** Polls until `done` says so or the wait (SYNTHEX_COMPAT_WAIT_MS, default 30 s) is over. */
export async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const raw = Number(process.env.SYNTHEX_COMPAT_WAIT_MS ?? 30_000);
  const deadline = Date.now() + (Number.isFinite(raw) && raw >= 0 ? raw : 30_000);
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 150));
    value = await probe();
  }
  return value;
}

/** A compat handler behind the API's body limit (SYNTHEX_MAX_BODY_BYTES), refusing in the client's error shape. */
export function limitedRoute(handler: (req: Request) => Promise<Response>, errorResponse: (status: number, message: string) => Response) {
  const tooLarge = (limit: BodyLimit) => errorResponse(413, new BodyTooLargeError(limit).message);
  return withBodyLimit(handler, apiBodyLimit, (url, init) => new Request(url, init), tooLarge);
}
