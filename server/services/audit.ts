/**
 * The audit log: who did what in a workspace, when, to what. Procedures declare `meta.audit` and
 * the workspace middleware records an entry after they succeed (server/api/trpc.ts); code outside a
 * procedure (the CLI, background work) calls `recordAudit` itself. Entries are append-only.
 */
import { z } from "zod";
import type { Db, DbTx } from "../core/db";
import { Prisma } from "../generated/prisma/client";

/** Who acted: a signed-in person, an API key, or Synthex itself (`system`). */
export type AuditActor = { kind: "user"; userId: string; email?: string } | { kind: "apiKey"; apiKeyId: string } | { kind: "system"; label?: string };

export interface AuditInput {
  workspaceId: string;
  actor: AuditActor;
  /** Dotted verb: `branch.promote`, `apiKey.create`, `member.changeRole`, `record.purge` … */
  action: string;
  /** What was acted on, e.g. `pipeline:memory/branch:tuned`, `apiKey:ck…`. */
  target: string;
  /** Non-secret facts worth keeping (counts, the new role, the model …). Never secrets. */
  details?: Record<string, unknown>;
}

/** Field names whose values never reach the log, however a caller builds `details`. */
const SECRET_FIELD = /(secret|password|token|apikey|api_key|authorization|keyhash)/i;

function scrub(value: unknown, depth = 0): unknown {
  if (depth > 4) return "…";
  if (typeof value === "string") return value.length > 500 ? `${value.slice(0, 500)}…` : value;
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => scrub(v, depth + 1));
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_FIELD.test(k) ? "[redacted]" : scrub(v, depth + 1);
    return out;
  }
  return value;
}

function actorRef(actor: AuditActor): string {
  if (actor.kind === "user") return `user:${actor.userId}`;
  if (actor.kind === "apiKey") return `apikey:${actor.apiKeyId}`;
  return "system";
}

/** A readable name of the actor now (the user or key may be deleted later; the entry keeps it). */
async function actorLabel(db: Db | DbTx, actor: AuditActor): Promise<string> {
  if (actor.kind === "user") {
    if (actor.email) return actor.email;
    const user = await db.user.findUnique({ where: { id: actor.userId }, select: { email: true } });
    return user?.email ?? "";
  }
  if (actor.kind === "apiKey") {
    const key = await db.apiKey.findUnique({ where: { id: actor.apiKeyId }, select: { name: true, prefix: true } });
    return key ? `API key ${key.name} (${key.prefix}…)` : "API key";
  }
  return actor.label ?? "Synthex";
}

/** Appends one entry (inside the caller's transaction when given one). */
export async function recordAudit(db: Db | DbTx, input: AuditInput) {
  return db.auditEntry.create({
    data: {
      workspaceId: input.workspaceId,
      actor: actorRef(input.actor),
      actorLabel: await actorLabel(db, input.actor),
      action: input.action,
      target: input.target.slice(0, 500),
      details: scrub(input.details ?? {}) as Prisma.InputJsonValue,
    },
  });
}

export const listAuditInput = z.object({
  /** Only actions starting with this, e.g. `apiKey.` or `branch.promote`. */
  action: z.string().max(100).optional().meta({ description: "Only actions starting with this, e.g. apiKey. or branch.promote" }),
  cursor: z.string().max(200).nullish().meta({ description: "nextCursor of the previous page" }),
  limit: z.number().int().min(1).max(200).default(50),
});

export const auditEntrySchema = z.object({
  id: z.string(),
  actor: z.string(),
  actorLabel: z.string(),
  action: z.string(),
  target: z.string(),
  details: z.record(z.string(), z.unknown()),
  createdAt: z.date(),
});
export const auditPageSchema = z.object({ entries: z.array(auditEntrySchema), nextCursor: z.string().nullable() });

/** Newest first, a page at a time. */
export async function listAudit(db: Db, workspaceId: string, input: z.input<typeof listAuditInput>): Promise<z.infer<typeof auditPageSchema>> {
  const { action, cursor, limit } = listAuditInput.parse(input);
  const rows = await db.auditEntry.findMany({
    where: { workspaceId, ...(action ? { action: { startsWith: action } } : {}) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit + 1,
    ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
    select: { id: true, actor: true, actorLabel: true, action: true, target: true, details: true, createdAt: true },
  });
  const page = rows.slice(0, limit);
  return {
    entries: page.map((r) => ({ ...r, details: (r.details ?? {}) as Record<string, unknown> })),
    nextCursor: rows.length > limit ? page[page.length - 1]!.id : null,
  };
}
