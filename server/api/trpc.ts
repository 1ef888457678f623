import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { z, ZodError } from "zod";
import { can, isReadPermission, type Permission, type Role } from "../auth/permissions";
import { assertPipelineAllowed, authenticateApiKey, isRestricted, type KeyRestrictions } from "../services/api-keys";
import { recordAudit } from "../services/audit";
import { beginLiveRequest } from "../services/live-requests";
import { consumeApiRate } from "../http/api-rate-limit";
import type { Db } from "../core/db";
import { DomainError } from "../core/errors";
import { pipelineNotFound } from "../store/pipelines";
import { cachedBranch, cachedPipeline, clearRequestCaches, workspaceAndRole } from "../services/request-context";

export type Actor =
  | { kind: "user"; userId: string; email: string }
  /** `role`: the key's role capped at its creator's current role (checked per request); `createdById`: the member it belongs to. */
  | { kind: "apiKey"; apiKeyId: string; workspaceId: string; role: Role; createdById: string; restrictions: KeyRestrictions };

export interface Context {
  db: Db;
  actor: Actor | null;
  /** Set by an entry point that counted this request against the key's rate limits itself (REST, MCP). */
  apiRateCounted?: boolean;
  /** The caller's address (server/http/client-address.ts), for per-address limits of public procedures. */
  clientAddress?: string;
  /** Which entry point served the call, for the query log (default "trpc"): set by REST, MCP and the compatibility APIs. */
  surface?: "rest" | "mcp" | "trpc" | "compat";
  /** Set by a compatibility endpoint for a second search answering the same call: the call is logged once, by its first search. */
  unlogged?: boolean;
}

/**
 * One context for people (next-auth session) and agents (Bearer API key).
 * The caller resolves the session; this resolves the key so both paths end identical.
 */
export async function createContext(opts: {
  db: Db;
  session?: { userId: string; email: string } | null;
  authorization?: string | null;
}): Promise<Context> {
  const bearer = opts.authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  if (bearer) {
    const key = await authenticateApiKey(opts.db, bearer);
    if (!key) throw new TRPCError({ code: "UNAUTHORIZED", message: "The API key is unknown or has been revoked." });
    return { db: opts.db, actor: { kind: "apiKey", apiKeyId: key.id, workspaceId: key.workspaceId, role: key.role, createdById: key.createdById, restrictions: key.restrictions } };
  }
  if (opts.session) return { db: opts.db, actor: { kind: "user", ...opts.session } };
  return { db: opts.db, actor: null };
}

/** Who acted, as audit and idempotency rows name them. */
export function actorRef(actor: Actor): string {
  return actor.kind === "apiKey" ? `apiKey:${actor.apiKeyId}` : `user:${actor.userId}`;
}

/** How a procedure is also served over REST (`/api/v1`, see server/api/rest.ts). */
export interface RestRoute {
  method: "GET" | "POST" | "DELETE";
  /** Under /api/v1, with `{name}` path parameters taken from the procedure's input. */
  path: `/${string}`;
  summary: string;
  tag: string;
}

/** Who may call a procedure, declared when it is built (the isolation matrix reads it). */
export type Access = "public" | "user" | "authed" | "workspace";

/** An audit entry a procedure leaves when it succeeds (see server/services/audit.ts). */
export interface AuditSpec {
  /** Dotted verb, e.g. `branch.promote`. */
  action: string;
  /** What was acted on, from the procedure's input and output (and the actor, `user:<id>` / `apiKey:<id>`). */
  target: (input: Record<string, unknown>, output: unknown, actor: string) => string;
  /** Non-secret facts for the entry (secret-looking fields are redacted anyway). Never record content. */
  summary?: (input: Record<string, unknown>, output: unknown) => Record<string, unknown>;
  /** The workspace of the entry, for procedures outside a workspace (userProcedure): from input or output. */
  workspaceId?: (input: Record<string, unknown>, output: unknown) => string;
}

/**
 * What a mutation declares about the audit log (server/api/audit-coverage.test.ts requires one):
 * an entry the middleware writes after success (`AuditSpec`), an entry the named service writes
 * itself (`writtenBy`: e.g. in the transaction of a purge), or none, with the reason.
 */
export type AuditDeclaration = AuditSpec | { action: string; writtenBy: string } | { none: string };

export interface ProcedureMeta {
  rest?: RestRoute | RestRoute[];
  /** Set by the procedure builders below, never by hand. */
  access?: Access;
  audit?: AuditDeclaration;
  /**
   * The procedure honours an API key's pipeline list and scope prefix (it checks the pipeline,
   * record or run it touches, and narrows or checks the scope). Keys with such restrictions are
   * refused by every procedure without it, so a new procedure is closed to them until it says so.
   */
  keyRestrictions?: "enforced";
  /** Set by workspaceProcedure: the permission the procedure checks (tests enumerate it). */
  permission?: Permission;
}

/**
 * The schema, validating synchronously when it can. tRPC validates every input and output with
 * `parseAsync`, and zod 4 compiles an object schema into one checking function (its JIT) only for
 * synchronous parses: asynchronously each field is checked by the generic walk, with its promises.
 * This gives the schema a `parseAsync` that runs `parse` and falls back to zod's own `parseAsync`
 * only when the schema holds an async refinement or transform (zod then throws `$ZodAsyncError`
 * before anything is returned). Same values, same ZodError and issues, same schema object (the
 * REST adapter and the OpenAPI document read it); a REST search's answer (about 13 KB) is checked
 * in ~60 instead of ~100 µs.
 */
export function syncFirst<S extends z.ZodType>(schema: S): S {
  const parseAsync = schema.parseAsync.bind(schema);
  const parse = schema.parse.bind(schema);
  Object.defineProperty(schema, "parseAsync", {
    configurable: true,
    value: (data: unknown, params?: Parameters<S["parse"]>[1]) => {
      try {
        return Promise.resolve(parse(data, params));
      } catch (err) {
        return err instanceof z.core.$ZodAsyncError ? parseAsync(data, params) : Promise.reject(err);
      }
    },
  });
  return schema;
}

/** tRPC's message for an output that fails `.output(schema)` (its output middleware, code INTERNAL_SERVER_ERROR). */
const OUTPUT_INVALID = "Output validation failed";

const t = initTRPC.context<Context>().meta<ProcedureMeta>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    return {
      ...shape,
      data: { ...shape.data, zodError: error.cause instanceof ZodError ? z.flattenError(error.cause) : null },
    };
  },
});

/**
 * Domain errors become tRPC errors with the same message; anything else stays an internal error.
 * An output that fails the procedure's own schema is the server's bug: a 500, logged with the
 * procedure and the failing path (the caller only learns "Internal error"), never a 400.
 */
const domainErrors = t.middleware(async ({ next, path }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof DomainError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: cause.code, message: cause.message, cause });
  }
  if (!result.ok && result.error.code === "INTERNAL_SERVER_ERROR" && result.error.message === OUTPUT_INVALID) {
    const issues = result.error.cause instanceof ZodError ? result.error.cause.issues : [];
    console.error(`[synthex] ${path}: output failed its schema: ${issues.map((i) => `${i.path.join(".") || "output"}: ${i.message}`).join("; ") || String(result.error.cause)}`);
    return result;
  }
  if (!result.ok && result.error.cause instanceof ZodError) {
    const issue = result.error.cause.issues[0];
    throw new TRPCError({
      code: "BAD_REQUEST",
      message: issue ? `${issue.path.join(".") || "input"}: ${issue.message}` : "Invalid input.",
      cause: result.error.cause,
    });
  }
  return result;
});

/** Every call with an API key counts against its rate limits, each call of a tRPC batch too (server/http/api-rate-limit.ts). */
const apiRateLimit = t.middleware(async ({ ctx, next }) => {
  if (ctx.actor?.kind === "apiKey" && !ctx.apiRateCounted) {
    const limited = await consumeApiRate(ctx.actor);
    if (limited) throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: limited.message, cause: limited });
  }
  return next();
});

/** Counts the call as a live request while it runs: shadow traffic waits until none is in flight (services/live-requests.ts). */
const liveRequest = t.middleware(async ({ next }) => {
  const end = beginLiveRequest();
  try {
    return await next();
  } finally {
    end();
  }
});

export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure.meta({ access: "public" }).use(liveRequest).use(apiRateLimit).use(domainErrors);

export const authedProcedure = publicProcedure.meta({ access: "authed" }).use(({ ctx, next }) => {
  if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in or send an API key." });
  return next({ ctx: { ...ctx, actor: ctx.actor } });
});

/** The entry of a procedure declaring an `AuditSpec`, after it succeeded (nothing for the other declarations). */
async function writeAudit(db: Db, actor: Actor, audit: AuditDeclaration | undefined, workspaceId: string | null, getRawInput: () => Promise<unknown>, output: unknown) {
  if (!audit || !("target" in audit)) return;
  const raw = ((await getRawInput()) ?? {}) as Record<string, unknown>;
  const workspace = audit.workspaceId?.(raw, output) ?? workspaceId;
  if (!workspace) throw new Error(`The audit entry ${audit.action} names no workspace.`);
  const who = actorRef(actor);
  await recordAudit(db, { workspaceId: workspace, actor: who, action: audit.action, target: audit.target(raw, output, who), summary: audit.summary?.(raw, output) });
}

/** A signed-in person (API keys cannot manage accounts or create workspaces). */
export const userProcedure = authedProcedure.meta({ access: "user" }).use(async ({ ctx, next, meta, getRawInput }) => {
  if (ctx.actor.kind !== "user") throw new TRPCError({ code: "FORBIDDEN", message: "This action needs a signed-in user." });
  const result = await next({ ctx: { ...ctx, user: ctx.actor } });
  if (result.ok) await writeAudit(ctx.db, ctx.actor, meta?.audit, null, getRawInput, result.data);
  if (result.ok && meta?.audit && !("none" in meta.audit)) clearRequestCaches();
  return result;
});

/** The actor's role in a workspace: an API key's own role in its workspace, a user's membership role; else null. */
export async function roleIn(db: Db, actor: Actor, workspaceId: string): Promise<Role | null> {
  if (actor.kind === "apiKey") return actor.workspaceId === workspaceId ? actor.role : null;
  const membership = await db.membership.findUnique({ where: { workspaceId_userId: { workspaceId, userId: actor.userId } } });
  return (membership?.role as Role | undefined) ?? null;
}

/**
 * The permission is part of the procedure's definition, so no handler can forget it.
 * Input carries `workspaceId` (an API key may leave it out: its own workspace); the workspace and the caller's role land in the context.
 */
export function workspaceProcedure(permission: Permission) {
  return authedProcedure.meta({ access: "workspace", permission }).input(workspaceInput).use(async ({ ctx, input, next, meta, path, getRawInput }) => {
    // An API key belongs to one workspace: it need not say which.
    const workspaceId = input.workspaceId ?? (ctx.actor.kind === "apiKey" ? ctx.actor.workspaceId : null);
    if (!workspaceId) throw new TRPCError({ code: "BAD_REQUEST", message: "workspaceId: required when signed in as a person (an API key implies its workspace)." });
    // Cached for at most a second (server/services/request-context.ts): a removal ends it within that bound.
    const cached = await workspaceAndRole(ctx.db, workspaceId, ctx.actor.kind === "user" ? ctx.actor.userId : null);
    const workspace = cached.workspace;
    const role = !workspace ? null : ctx.actor.kind === "apiKey" ? (ctx.actor.workspaceId === workspaceId ? ctx.actor.role : null) : (cached.role as Role | null);
    // Same answer for "does not exist" and "not yours": ids of other teams are not probeable.
    if (!workspace || !role) throw new TRPCError({ code: "NOT_FOUND", message: "Workspace not found, or you are not a member of it." });
    if (!can(role, permission)) {
      throw new TRPCError({ code: "FORBIDDEN", message: `Your role (${role}) does not allow ${permission}.` });
    }
    const restrictions = ctx.actor.kind === "apiKey" ? ctx.actor.restrictions : null;
    if (restrictions?.readOnly && !isReadPermission(permission)) {
      throw new TRPCError({ code: "FORBIDDEN", message: `This API key is read-only: ${path} needs ${permission}.` });
    }
    if (restrictions && isRestricted(restrictions) && meta?.keyRestrictions !== "enforced") {
      throw new TRPCError({ code: "FORBIDDEN", message: `This API key is limited to some pipelines or a scope: ${path} is not available to it.` });
    }
    const userId = ctx.actor.kind === "user" ? ctx.actor.userId : null;
    // Null for people and unrestricted keys' pipelines; handlers pass it to the checks of api-keys.ts.
    const result = await next({ ctx: { ...ctx, workspace, role, userId, restrictions } });
    if (result.ok) await writeAudit(ctx.db, ctx.actor, meta?.audit, workspace.id, getRawInput, result.data);
    // An audited change (a key, a member, a spec …) ends this process's cached lookups at once.
    if (result.ok && meta?.audit && !("none" in meta.audit)) clearRequestCaches();
    return result;
  });
}

const workspaceInput = syncFirst(
  z.object({
    workspaceId: z.string().min(1).optional().meta({ description: "The workspace; optional with an API key (its own workspace)." }),
  }),
);

/**
 * A workspace procedure on one pipeline: input carries `pipelineId` (id or name) and `branch`
 * (default "main"); the pipeline, the branch, its head version and the parsed spec are loaded once
 * and put in the context, so handlers never look them up again.
 */
export function pipelineProcedure(permission: Permission) {
  return workspaceProcedure(permission)
    .input(syncFirst(z.object({ pipelineId: z.string().min(1).max(200), branch: z.string().min(1).max(200).default("main") })))
    .use(async ({ ctx, input, next }) => {
      const pipeline = await cachedPipeline(ctx.db, ctx.workspace.id, input.pipelineId);
      assertPipelineAllowed(ctx.restrictions, pipeline.id, () => pipelineNotFound(input.pipelineId));
      const { branch, version, spec } = await cachedBranch(ctx.db, pipeline.id, input.branch);
      return next({ ctx: { ...ctx, pipeline, branch, version, spec } });
    });
}
