/**
 * The memories a consolidate step keeps, as a person or an agent sees them: a memory's history
 * (every version, what it said, when and which fact changed it), the deleted memories of a branch,
 * and restoring one. Nothing here erases: a restore is one more version of the memory.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../core/db";
import { badRequest, conflict, notFound } from "../core/errors";
import { deletedPointerStep, memoryMetaOf, type MemoryMeta } from "../engine/steps/consolidate";
import { restoreKey, reviseKey } from "../engine/keys";
import { contentFingerprint } from "../pipeline/hashing";
import { indexPipeline } from "../search/indexing";
import { commitRecords } from "../store/record-store";
import { resolveBranch } from "../store/pipelines";

/** Versions of one memory shown at most (a memory changed more often shows the newest ones). */
const MAX_VERSIONS = 500;

export interface MemoryVersion {
  recordId: string;
  version: number;
  event: MemoryMeta["event"];
  status: MemoryMeta["status"];
  content: string;
  reason: string;
  /** When it changed: the time of the fact that changed it, else when the version was stored. */
  at: string;
  /** The fact that made this version (null for a restore). */
  fact: { id: string; content: string; step: string } | null;
  /** Who restored it (RESTORE). */
  by: string | null;
}

export interface MemoryHistory {
  memoryId: string;
  pipelineId: string;
  branch: string;
  step: string;
  scope: string;
  /** On this branch: the memory is current (`active`), deleted, or not shown at all. */
  status: "active" | "deleted" | "absent";
  /** The version the branch shows (current or tombstone). */
  headRecordId: string | null;
  restorable: boolean;
  /** Newest first. */
  versions: MemoryVersion[];
}

type RecordRow = { id: string; step: string; content: string; scope: string; metadata: unknown; stepVersionHash: string; pipelineId: string; createdAt: Date };

async function memoryRecord(db: Db, workspaceId: string, recordId: string) {
  const record = await db.record.findFirst({ where: { id: recordId, workspaceId } });
  if (!record) throw notFound(`Record ${recordId} not found in this workspace.`);
  const meta = memoryMetaOf(record as { metadata: Record<string, unknown> });
  if (!meta) throw badRequest(`Record ${recordId} is not a memory: only the records of a consolidate step have a history.`);
  return { record, meta };
}

async function head(db: Db, branchId: string, step: string, memoryId: string) {
  const pointers = await db.branchPointer.findMany({ where: { branchId, groupKey: memoryId, step: { in: [step, deletedPointerStep(step)] } } });
  const active = pointers.find((p) => p.step === step);
  const deleted = pointers.find((p) => p.step !== step);
  return active ? { status: "active" as const, recordId: active.recordId } : deleted ? { status: "deleted" as const, recordId: deleted.recordId } : null;
}

/** A memory's history on a branch, from any of its versions' record ids. */
export async function memoryHistory(db: Db, workspaceId: string, recordId: string, options: { branch?: string } = {}): Promise<MemoryHistory> {
  const { record, meta } = await memoryRecord(db, workspaceId, recordId);
  const branchName = options.branch ?? "main";
  const branch = await resolveBranch(db, workspaceId, record.pipelineId, branchName);
  const current = await head(db, branch.branchId, record.step, meta.id);
  const chain: RecordRow[] = [];
  let next: string | null = current?.recordId ?? record.id;
  while (next && chain.length < MAX_VERSIONS) {
    const row: RecordRow | null = await db.record.findFirst({ where: { id: next, workspaceId } });
    if (!row) break;
    chain.push(row);
    next = memoryMetaOf(row as { metadata: Record<string, unknown> })?.previous ?? null;
  }
  const factIds = chain.map((r) => memoryMetaOf(r as { metadata: Record<string, unknown> })!.fact).filter((f): f is string => Boolean(f));
  const facts = new Map((await db.record.findMany({ where: { id: { in: factIds }, workspaceId } })).map((f) => [f.id, f]));
  const versions = chain.map((r): MemoryVersion => {
    const m = memoryMetaOf(r as { metadata: Record<string, unknown> })!;
    const f = m.fact ? facts.get(m.fact) : undefined;
    const factTime = (f?.metadata as { time?: { created_at?: string } } | undefined)?.time?.created_at;
    return {
      recordId: r.id,
      version: m.version,
      event: m.event,
      status: m.status,
      content: r.content,
      reason: m.reason,
      at: factTime ?? r.createdAt.toISOString(),
      fact: f ? { id: f.id, content: f.content, step: f.step } : null,
      by: m.by ?? null,
    };
  });
  return {
    memoryId: meta.id,
    pipelineId: record.pipelineId,
    branch: branch.branchName,
    step: record.step,
    scope: record.scope,
    status: current?.status ?? "absent",
    headRecordId: current?.recordId ?? null,
    restorable: current?.status === "deleted",
    versions,
  };
}

export interface DeletedMemory {
  recordId: string;
  memoryId: string;
  scope: string;
  content: string;
  deletedAt: string;
  reason: string;
}

/** The deleted memories of a consolidate step on a branch (their tombstones), newest first. */
export async function deletedMemories(
  db: Db,
  workspaceId: string,
  input: { pipelineId: string; branch?: string; step: string; scope?: string; limit?: number },
): Promise<DeletedMemory[]> {
  const branch = await resolveBranch(db, workspaceId, input.pipelineId, input.branch ?? "main");
  const step = branch.spec.steps.find((s) => s.name === input.step);
  if (!step || step.type !== "consolidate") {
    const names = branch.spec.steps.filter((s) => s.type === "consolidate").map((s) => s.name);
    throw badRequest(`"${input.step}" is not a consolidate step of this pipeline${names.length ? `; consolidate steps: ${names.join(", ")}` : " (it has none)"}.`);
  }
  const pointers = await db.branchPointer.findMany({ where: { branchId: branch.branchId, step: deletedPointerStep(step.name) } });
  const records = await db.record.findMany({ where: { id: { in: pointers.map((p) => p.recordId) }, workspaceId } });
  const scope = input.scope?.replace(/:+$/, "");
  return records
    .filter((r) => !scope || r.scope === scope || r.scope.startsWith(`${scope}:`))
    .map((r) => {
      const m = memoryMetaOf(r as { metadata: Record<string, unknown> })!;
      const time = (r.metadata as { time?: { created_at?: string } }).time?.created_at;
      return { recordId: r.id, memoryId: m.id, scope: r.scope, content: r.content, deletedAt: time ?? r.createdAt.toISOString(), reason: m.reason };
    })
    .sort((a, b) => b.deletedAt.localeCompare(a.deletedAt) || a.memoryId.localeCompare(b.memoryId))
    .slice(0, input.limit ?? 200);
}

/** Commits a person's version of a memory (restore, edit, deletion) on a branch and points the branch at it. */
async function commitPersonVersion(
  db: Db,
  workspaceId: string,
  branch: { branchId: string; branchName: string },
  from: { id: string; step: string; stepVersionHash: string; scope: string; pipelineId: string; metadata: unknown },
  version: { content: string; meta: MemoryMeta; key: string; operator: string; attributes?: Record<string, unknown> },
) {
  const { memory: _dropped, ...rest } = from.metadata as Record<string, unknown>;
  void _dropped;
  const deleted = version.meta.status === "deleted";
  const id = randomUUID();
  await db.$transaction(async (tx) => {
    await commitRecords(tx, branch.branchId, [
      {
        id,
        step: from.step,
        stepVersionHash: from.stepVersionHash,
        workKey: version.key,
        materializationKey: version.key,
        content: version.content,
        contentFingerprint: contentFingerprint(version.content),
        scope: from.scope,
        metadata: { ...rest, ...(version.attributes !== undefined ? { attributes: version.attributes } : {}), memory: version.meta },
        audit: { operator: version.operator },
        sources: [from.id],
        groupKey: version.meta.id,
        runId: null,
        ...(deleted ? { pointerStep: deletedPointerStep(from.step) } : {}),
      },
    ]);
    await tx.branchPointer.deleteMany({ where: { branchId: branch.branchId, step: deleted ? from.step : deletedPointerStep(from.step), groupKey: version.meta.id } });
  });
  await indexPipeline(db, from.pipelineId, branch.branchName, { workspaceId });
  return id;
}

/**
 * Restore a deleted memory on a branch: a RESTORE version (what the memory said before it was
 * deleted) becomes current and the tombstone stays in its history. Later runs keep it (the
 * consolidate step starts from the restored version) until a later fact changes the memory.
 */
export async function restoreMemory(
  db: Db,
  workspaceId: string,
  input: { recordId: string; branch?: string; userId?: string | null; actor?: string },
): Promise<MemoryHistory> {
  const { record, meta } = await memoryRecord(db, workspaceId, input.recordId);
  const branch = await resolveBranch(db, workspaceId, record.pipelineId, input.branch ?? "main");
  const current = await head(db, branch.branchId, record.step, meta.id);
  if (current?.status !== "deleted") {
    throw conflict(`Memory ${meta.id} is not deleted on branch "${branch.branchName}"${current ? " (it is current)" : " (the branch does not show it)"}: only a deleted memory can be restored.`);
  }
  const tombstone = await db.record.findUniqueOrThrow({ where: { id: current.recordId } });
  const dead = memoryMetaOf(tombstone as { metadata: Record<string, unknown> })!;
  const restored: MemoryMeta = {
    id: dead.id,
    version: dead.version + 1,
    event: "RESTORE",
    status: "active",
    previous: tombstone.id,
    fact: null,
    reason: `restored${input.actor ? ` by ${input.actor}` : ""}`,
    ...(input.userId ? { by: input.userId } : {}),
  };
  await commitPersonVersion(db, workspaceId, branch, tombstone, { content: tombstone.content, meta: restored, key: restoreKey(tombstone.step, tombstone.id), operator: "consolidate:restore" });
  return memoryHistory(db, workspaceId, tombstone.id, { branch: branch.branchName });
}

/**
 * Edit or delete a current memory on a branch (the memory API: Mem0's update and delete): one more
 * version, made by the caller instead of a fact (`manual`), which later runs keep until a later
 * fact changes the memory; a deletion leaves a tombstone that can be restored.
 */
export async function reviseMemory(
  db: Db,
  workspaceId: string,
  input: {
    recordId: string;
    branch?: string;
    /** UPDATE: new content and/or new attributes (a caller's own key/value metadata, kept on the memory's later versions). */
    change: { event: "UPDATE"; content?: string; attributes?: Record<string, unknown> } | { event: "DELETE" };
    userId?: string | null;
    actor?: string;
  },
): Promise<{ recordId: string; history: MemoryHistory }> {
  const { record, meta } = await memoryRecord(db, workspaceId, input.recordId);
  const branch = await resolveBranch(db, workspaceId, record.pipelineId, input.branch ?? "main");
  const current = await head(db, branch.branchId, record.step, meta.id);
  if (current?.status !== "active") {
    throw notFound(`Memory ${meta.id} is not current on branch "${branch.branchName}"${current ? " (it is deleted: restore it first)" : ""}.`);
  }
  const latest = await db.record.findUniqueOrThrow({ where: { id: current.recordId } });
  const was = memoryMetaOf(latest as { metadata: Record<string, unknown> })!;
  const content = input.change.event === "UPDATE" ? (input.change.content ?? latest.content) : latest.content;
  const attributes = input.change.event === "UPDATE" ? input.change.attributes : undefined;
  const next: MemoryMeta = {
    id: was.id,
    version: was.version + 1,
    event: input.change.event,
    status: input.change.event === "DELETE" ? "deleted" : "active",
    previous: latest.id,
    fact: null,
    reason: `${input.change.event === "DELETE" ? "deleted" : "edited"}${input.actor ? ` by ${input.actor}` : ""}`,
    manual: true,
    ...(input.userId ? { by: input.userId } : {}),
  };
  const key = reviseKey(latest.step, latest.id, input.change.event, attributes === undefined ? content : `${content}\n${JSON.stringify(attributes)}`);
  const id = await commitPersonVersion(db, workspaceId, branch, latest, { content, meta: next, key, operator: `consolidate:${input.change.event.toLowerCase()}-by-api`, attributes });
  return { recordId: id, history: await memoryHistory(db, workspaceId, latest.id, { branch: branch.branchName }) };
}
