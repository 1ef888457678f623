/**
 * The memories a consolidate step keeps, as a person or an agent sees them: a memory's history
 * (every version, what it said, when and which fact changed it), the deleted memories of a branch,
 * and restoring one. Nothing here erases: a restore is one more version of the memory.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../core/db";
import { badRequest, conflict, notFound } from "../core/errors";
import { deletedPointerStep, memoryMetaOf, type MemoryMeta } from "../engine/steps/consolidate";
import { restoreKey } from "../engine/keys";
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
  const key = restoreKey(tombstone.step, tombstone.id);
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
  const { memory: _dropped, ...rest } = tombstone.metadata as Record<string, unknown>;
  void _dropped;
  await db.$transaction(async (tx) => {
    await commitRecords(tx, branch.branchId, [
      {
        id: randomUUID(),
        step: tombstone.step,
        stepVersionHash: tombstone.stepVersionHash,
        workKey: key,
        materializationKey: key,
        content: tombstone.content,
        contentFingerprint: contentFingerprint(tombstone.content),
        scope: tombstone.scope,
        metadata: { ...rest, memory: restored },
        audit: { operator: "consolidate:restore" },
        sources: [tombstone.id],
        groupKey: dead.id,
        runId: null,
      },
    ]);
    await tx.branchPointer.deleteMany({ where: { branchId: branch.branchId, step: deletedPointerStep(tombstone.step), groupKey: dead.id } });
  });
  await indexPipeline(db, record.pipelineId, branch.branchName, { workspaceId });
  return memoryHistory(db, workspaceId, tombstone.id, { branch: branch.branchName });
}
