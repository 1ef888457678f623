/**
 * The memories of a pipeline as a memory API lists them (the Mem0 and Zep compat layers): the
 * current versions of a consolidate step's memories on a branch, and the versions that one source
 * record (an ingested conversation) led to, with their decisions (ADD / UPDATE / DELETE / NONE).
 */
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { memoryMetaOf, type MemoryMeta } from "../engine/steps/consolidate";
import type { PipelineSpec } from "../pipeline/spec";
import { resolveBranch } from "../store/pipelines";
import { scopeWithin } from "./api-keys";

/** Memories listed at most per call (pages are cut from them). */
const MAX_MEMORIES = 10_000;

export interface MemoryItem {
  recordId: string;
  memoryId: string;
  content: string;
  scope: string;
  pipelineId: string;
  event: MemoryMeta["event"];
  version: number;
  /** When this version was stored (createdAt = updatedAt: versions are records of their own). */
  createdAt: Date;
  updatedAt: Date;
  metadata: Record<string, unknown>;
}

/** The consolidate step a memory API reads: the one named, else `memories`, else the only one. */
export function memoryStepOf(spec: Pick<PipelineSpec, "steps">, name?: string): { name: string; from: string } {
  const steps = spec.steps.filter((s) => s.type === "consolidate") as Array<{ name: string; from: string | string[] }>;
  const names = steps.map((s) => s.name).join(", ") || "none";
  const step = name ? steps.find((s) => s.name === name) : (steps.find((s) => s.name === "memories") ?? (steps.length === 1 ? steps[0] : undefined));
  if (!step) {
    throw badRequest(
      name
        ? `"${name}" is not a consolidate step of this pipeline (consolidate steps: ${names}).`
        : `This pipeline has no single memory step (consolidate steps: ${names}): name one, or use the mem0 template.`,
    );
  }
  return { name: step.name, from: Array.isArray(step.from) ? step.from[0]! : step.from };
}

type Row = { id: string; content: string; scope: string; pipelineId: string; metadata: unknown; createdAt: Date };

function item(r: Row): MemoryItem {
  const meta = memoryMetaOf(r as { metadata: Record<string, unknown> })!;
  const { memory: _m, ...metadata } = (r.metadata ?? {}) as Record<string, unknown>;
  void _m;
  return { recordId: r.id, memoryId: meta.id, content: r.content, scope: r.scope, pipelineId: r.pipelineId, event: meta.event, version: meta.version, createdAt: r.createdAt, updatedAt: r.createdAt, metadata };
}

/** The current memories of a step on a branch, newest first; with `scope`, only that scope and below. */
export async function listMemories(db: Db, input: { workspaceId: string; pipelineId: string; branch?: string; step: string; scope?: string }): Promise<MemoryItem[]> {
  const branch = await resolveBranch(db, input.workspaceId, input.pipelineId, input.branch ?? "main");
  const pointers = await db.branchPointer.findMany({ where: { branchId: branch.branchId, step: input.step }, select: { recordId: true }, take: MAX_MEMORIES });
  const scope = input.scope?.replace(/:+$/, "");
  const rows = await db.record.findMany({
    where: { id: { in: pointers.map((p) => p.recordId) }, workspaceId: input.workspaceId, ...(scope ? { OR: [{ scope }, { scope: { startsWith: `${scope}:` } }] } : {}) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  });
  return rows.filter((r) => memoryMetaOf(r as { metadata: Record<string, unknown> }) && (!scope || scopeWithin(r.scope, scope))).map((r) => item(r));
}

/**
 * The memory versions a source record led to through the step's facts (every decision, NONE
 * included), oldest first; `pending` while a run of the pipeline is queued or running.
 */
export async function memoryVersionsOfSource(db: Db, input: { workspaceId: string; pipelineId: string; step: { name: string; from: string }; recordId: string }) {
  const factEdges = await db.recordEdge.findMany({ where: { parentId: input.recordId, workspaceId: input.workspaceId }, select: { childId: true } });
  const facts = await db.record.findMany({ where: { id: { in: factEdges.map((e) => e.childId) }, step: input.step.from, pipelineId: input.pipelineId }, select: { id: true } });
  const versionEdges = await db.recordEdge.findMany({ where: { parentId: { in: facts.map((f) => f.id) }, workspaceId: input.workspaceId }, select: { childId: true } });
  const rows = await db.record.findMany({
    where: { id: { in: versionEdges.map((e) => e.childId) }, step: input.step.name, pipelineId: input.pipelineId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  const versions = rows.filter((r) => {
    const meta = memoryMetaOf(r as { metadata: Record<string, unknown> });
    return meta && meta.fact && facts.some((f) => f.id === meta.fact);
  });
  const active = await db.run.count({ where: { pipelineId: input.pipelineId, status: { in: ["queued", "running"] } } });
  return { pending: active > 0, facts: facts.length, versions: versions.map((r) => item(r)) };
}

/** A memory by its id (`mem-…`, the same across versions): the version the branch shows, current or deleted. */
export async function getMemory(db: Db, input: { workspaceId: string; pipelineId: string; branch?: string; step: string; memoryId: string }) {
  const branch = await resolveBranch(db, input.workspaceId, input.pipelineId, input.branch ?? "main");
  const pointers = await db.branchPointer.findMany({ where: { branchId: branch.branchId, groupKey: input.memoryId, step: { in: [input.step, `${input.step}#deleted`] } } });
  const pointer = pointers.find((p) => p.step === input.step) ?? pointers[0];
  if (!pointer) throw notFound(`Memory "${input.memoryId}" not found.`);
  const row = await db.record.findFirst({ where: { id: pointer.recordId, workspaceId: input.workspaceId } });
  if (!row || !memoryMetaOf(row as { metadata: Record<string, unknown> })) throw notFound(`Memory "${input.memoryId}" not found.`);
  return { ...item(row), status: pointer.step === input.step ? ("active" as const) : ("deleted" as const) };
}

/** The live sessions of a source (open or closed), newest first; with `scope`, that scope and below; with `idPrefix`, only those ids. */
export async function listSessions(db: Db, input: { workspaceId: string; pipelineId: string; source: string; scope?: string; idPrefix?: string; limit?: number }) {
  const scope = input.scope?.replace(/:+$/, "");
  const rows = await db.ingestSession.findMany({
    where: {
      workspaceId: input.workspaceId,
      pipelineId: input.pipelineId,
      source: input.source,
      ...(input.idPrefix ? { sessionId: { startsWith: input.idPrefix } } : {}),
      ...(scope ? { OR: [{ scope }, { scope: { startsWith: `${scope}:` } }] } : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: Math.min(input.limit ?? 1000, 5000),
    select: { sessionId: true, scope: true, title: true, status: true, messageCount: true, createdAt: true, lastMessageAt: true, closedAt: true, recordId: true },
  });
  return rows;
}
