/**
 * The audit log (AuditEvent rows): who did what in a workspace, when, to what. Procedures declare
 * `meta.audit` and the workspace middleware records an entry after they succeed (server/api/trpc.ts);
 * services that must write the entry in their own transaction (purge) call `recordAudit(tx, …)`.
 * Entries are append-only.
 */
import { z } from "zod";
import type { Db, DbTx } from "../core/db";
import { Prisma } from "../generated/prisma/client";
import type { SpecDiff } from "../pipeline/diff";

export interface AuditInput {
  workspaceId: string;
  /** Who acted: `user:<id>`, `apiKey:<id>` (as `actorRef` in server/api/trpc.ts names them) or `system`. */
  actor: string;
  /** Dotted verb: `branch.promote`, `apiKey.create`, `member.changeRole` … (purges are `purge`). */
  action: string;
  /** What was acted on, e.g. `pipeline:memory/branch:tuned`, `apiKey:ck…`. */
  target: string;
  /** Non-secret facts worth keeping (counts, the new role, the model …). Never secrets. */
  summary?: Record<string, unknown>;
}

/** Field names whose values never reach the log, however a caller builds `summary`. */
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

/** A readable name of the actor now (the user or key may be deleted later; the entry keeps it). */
export async function actorLabel(db: Db | DbTx, actor: string): Promise<string> {
  const [kind, id = ""] = actor.split(/:(.*)/s);
  if (kind === "user") return (await db.user.findUnique({ where: { id }, select: { email: true } }))?.email ?? "";
  if (kind === "apiKey") {
    const key = await db.apiKey.findUnique({ where: { id }, select: { name: true, prefix: true } });
    return key ? `API key ${key.name} (${key.prefix}…)` : "API key";
  }
  return kind === "system" ? "Synthex" : "";
}

/** Appends one entry (inside the caller's transaction when given one). */
export async function recordAudit(db: Db | DbTx, input: AuditInput) {
  return db.auditEvent.create({
    data: {
      workspaceId: input.workspaceId,
      actor: input.actor,
      actorLabel: await actorLabel(db, input.actor),
      action: input.action,
      target: input.target.slice(0, 500),
      summary: scrub(input.summary ?? {}) as Prisma.InputJsonValue,
    },
  });
}

const savedSpecOutputs = z.object({ outputs: z.array(z.looseObject({ name: z.string(), webhook: z.object({ url: z.string() }).optional() })).catch([]) });

/** The host of a URL, never its credentials, path or query (a webhook URL may carry a token there). */
function urlHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "(not a URL)";
  }
}

/**
 * What an admin wants to see of a spec save: which nodes changed and why (kinds, not prompts), and
 * where each output's webhook posts (`{ output: host }`), so a new external receiver stands out.
 */
export function specSaveSummary(spec: unknown, diff: SpecDiff | undefined): Record<string, unknown> {
  const parsed = savedSpecOutputs.safeParse(spec);
  const webhooks = Object.fromEntries((parsed.success ? parsed.data.outputs : []).flatMap((o) => (o.webhook ? [[o.name, urlHost(o.webhook.url)]] : [])));
  const changes = diff
    ? [...diff.sources, ...diff.steps, ...diff.outputs]
        .filter((n) => n.status !== "unchanged")
        .map((n) => `${n.kind}:${n.name} ${n.status}${n.reasons.length ? ` (${n.reasons.map((r) => r.kind).join(", ")})` : ""}`)
    : [];
  return { webhooks, changes };
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
  targetLabel: z.string().meta({ description: "The target in words (names, not ids), e.g. \"pipeline memory · branch main\"; the id stays in target." }),
  summary: z.record(z.string(), z.unknown()),
  createdAt: z.date(),
});
export const auditPageSchema = z.object({ entries: z.array(auditEntrySchema), nextCursor: z.string().nullable() });

const ids = (targets: string[], kind: string) => [...new Set(targets.flatMap((t) => t.split("/")).filter((p) => p.startsWith(`${kind}:`)).map((p) => p.slice(kind.length + 1)))];

/**
 * Targets in words: each `kind:id` part named as the workspace knows it now (a pipeline by its
 * name, a run by its pipeline, a member or user by email, a key by name, a record by its step); what is gone stays an id.
 */
async function targetLabels(db: Db, workspaceId: string, targets: string[]): Promise<Map<string, string>> {
  const [pipelines, runs, members, users, keys, records] = await Promise.all([
    db.pipeline.findMany({ where: { workspaceId, id: { in: ids(targets, "pipeline") } }, select: { id: true, name: true } }),
    db.run.findMany({ where: { workspaceId, id: { in: ids(targets, "run") } }, select: { id: true, pipeline: { select: { name: true } } } }),
    db.membership.findMany({ where: { workspaceId, id: { in: ids(targets, "member") } }, select: { id: true, user: { select: { email: true } } } }),
    db.user.findMany({ where: { id: { in: ids(targets, "user") }, memberships: { some: { workspaceId } } }, select: { id: true, email: true } }),
    db.apiKey.findMany({ where: { workspaceId, id: { in: ids(targets, "apiKey") } }, select: { id: true, name: true } }),
    db.record.findMany({ where: { workspaceId, id: { in: ids(targets, "record") } }, select: { id: true, step: true } }),
  ]);
  const names = new Map<string, string>([
    ...pipelines.map((p) => [`pipeline:${p.id}`, `pipeline ${p.name}`] as const),
    ...runs.map((r) => [`run:${r.id}`, `run ${r.id.slice(-8)} of ${r.pipeline.name}`] as const),
    ...members.map((m) => [`member:${m.id}`, `member ${m.user.email}`] as const),
    ...users.map((u) => [`user:${u.id}`, u.email] as const),
    ...keys.map((k) => [`apiKey:${k.id}`, `API key ${k.name}`] as const),
    ...records.map((r) => [`record:${r.id}`, `${r.step} record ${r.id.slice(-8)}`] as const),
  ]);
  const label = (target: string) =>
    target
      .split("/")
      .map((part) => names.get(part) ?? part.replace(/^(branch|source|provider|model):/, "$1 "))
      .join(" · ");
  return new Map(targets.map((t) => [t, label(t)]));
}

/** Newest first, a page at a time. */
export async function listAudit(db: Db, workspaceId: string, input: z.input<typeof listAuditInput>): Promise<z.infer<typeof auditPageSchema>> {
  const { action, cursor, limit } = listAuditInput.parse(input);
  const rows = await db.auditEvent.findMany({
    where: { workspaceId, ...(action ? { action: { startsWith: action } } : {}) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit + 1,
    ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
    select: { id: true, actor: true, actorLabel: true, action: true, target: true, summary: true, createdAt: true },
  });
  const page = rows.slice(0, limit);
  const labels = await targetLabels(db, workspaceId, page.map((r) => r.target));
  return {
    entries: page.map((r) => ({ ...r, targetLabel: labels.get(r.target) ?? r.target, summary: (r.summary ?? {}) as Record<string, unknown> })),
    nextCursor: rows.length > limit ? page[page.length - 1]!.id : null,
  };
}
