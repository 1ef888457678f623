import { z } from "zod";
import type { Prisma } from "../generated/prisma/client";
import { sourceKey } from "../engine/keys";
import type { NewRecord } from "../engine/types";
import { OutboundUrlError } from "../http/outbound";
import { contentFingerprint, specHash, stepVersionHashes } from "../pipeline/hashing";
import { diffSpecs } from "../pipeline/diff";
import { parseSpec, type PipelineSpec } from "../pipeline/spec";
import { TEMPLATES, offlineStandInOf } from "../pipeline/templates";
import { GOOD_FOR } from "../pipeline/templates/good-for";

/** Templates live in server/pipeline/templates; re-exported for callers that build a pipeline from one. */
export { templateSpec } from "../pipeline/templates";
import { pointerCountsByStepVersion } from "../store/branch-pointers";
import { findBranch, findPipeline, findVersion, recordCountsByPipeline, storedSpec } from "../store/pipelines";
import { commitRecords } from "../store/record-store";
import { inlineDiff } from "../text/content-diff";
import { randomUUID } from "node:crypto";
import type { Db } from "../core/db";
import { badRequest, conflict, notFound } from "../core/errors";
import { toJsonColumn } from "../core/json";
import type { SourceItem } from "../core/source-item";
import { assertWebhookUrls } from "./webhooks";
import { clearRequestCaches } from "./request-context";

export const pipelineNameSchema = z
  .string()
  .trim()
  .min(1, "Pipeline name is required.")
  .max(64)
  .regex(/^[a-z0-9][a-z0-9_-]*$/i, "Use letters, digits, - and _ in pipeline names.");

export const branchNameSchema = z
  .string()
  .trim()
  .min(1, "Branch name is required.")
  .max(64)
  .regex(/^[a-z0-9][a-z0-9_./-]*$/i, "Use letters, digits, -, _, . and / in branch names.");

/** Refuses an invalid spec with every problem and its path. */
export function requireValidSpec(input: unknown): PipelineSpec {
  const parsed = parseSpec(input);
  if (!parsed.ok) {
    const lines = parsed.problems.map((p) => `${p.path.join(".") || "spec"}: ${p.message}`);
    throw badRequest(`The pipeline spec is invalid:\n${lines.join("\n")}`);
  }
  return parsed.spec;
}

/** Webhook URLs must be allowed outbound URLs (https, public addresses) when saved. */
async function requireAllowedWebhooks(spec: PipelineSpec) {
  try {
    await assertWebhookUrls(spec);
  } catch (err) {
    if (err instanceof OutboundUrlError) throw badRequest(`The pipeline spec is invalid:\n${err.message}`);
    throw err;
  }
}

export async function createPipeline(
  db: Db,
  workspaceId: string,
  input: { name: string; agent?: string; description?: string; spec: unknown; layout?: unknown; authorId?: string | null; protectedMain?: boolean },
) {
  const name = pipelineNameSchema.parse(input.name);
  const spec = requireValidSpec(input.spec);
  await requireAllowedWebhooks(spec);
  return db.$transaction(async (tx) => {
    if (await tx.pipeline.findUnique({ where: { workspaceId_name: { workspaceId, name } } })) {
      throw conflict(`A pipeline named "${name}" already exists in this workspace.`);
    }
    const pipeline = await tx.pipeline.create({
      // New pipelines protect main: editors save on branches, admins and owners promote.
      data: { workspaceId, name, agent: input.agent ?? "", description: input.description ?? "", protectedMain: input.protectedMain ?? true },
    });
    const version = await tx.pipelineVersion.create({
      data: {
        workspaceId,
        pipelineId: pipeline.id,
        hash: specHash(spec),
        spec: toJsonColumn(spec),
        layout: (input.layout ?? undefined) as Prisma.InputJsonValue | undefined,
        message: "Initial version",
        authorId: input.authorId ?? null,
      },
    });
    const main = await tx.branch.create({ data: { workspaceId, pipelineId: pipeline.id, name: "main", versionId: version.id } });
    return { pipeline, version, branch: main, spec };
  });
}

/** A pipeline of the workspace by id or name (the repository in server/store/pipelines.ts). */
export const getPipeline = findPipeline;

/** A branch with its head version and parsed spec. */
export const getBranch = findBranch;

/** Every save is a new immutable version; the branch moves to it. */
export async function saveVersion(
  db: Db,
  pipelineId: string,
  input: { spec: unknown; layout?: unknown; message?: string; authorId?: string | null; branch?: string },
) {
  const spec = requireValidSpec(input.spec);
  await requireAllowedWebhooks(spec);
  const { branch, version: head } = await getBranch(db, pipelineId, input.branch ?? "main");
  const version = await db.pipelineVersion.create({
    data: {
      workspaceId: branch.workspaceId,
      pipelineId,
      hash: specHash(spec),
      spec: toJsonColumn(spec),
      layout: (input.layout ?? undefined) as Prisma.InputJsonValue | undefined,
      message: input.message?.trim() || "Update pipeline",
      authorId: input.authorId ?? null,
      parentId: head.id,
    },
  });
  await db.branch.update({ where: { id: branch.id }, data: { versionId: version.id } });
  clearRequestCaches();
  return { version, diff: diffSpecs(storedSpec(head), spec) };
}

/** The diff (with reasons) saving `next` over `current` would make; refuses an invalid spec. */
export function previewVersion(current: PipelineSpec, next: unknown) {
  const spec = requireValidSpec(next);
  return { diff: diffSpecs(current, spec), hash: specHash(spec), unchanged: specHash(spec) === specHash(current) };
}

/** The diff between two versions, with the text diff of every step prompt that differs. */
export async function diffVersions(db: Db, pipelineId: string, fromVersionId: string, toVersionId: string) {
  const [a, b] = await Promise.all([findVersion(db, pipelineId, fromVersionId), findVersion(db, pipelineId, toVersionId)]);
  return { ...diffSpecs(a.spec, b.spec), prompts: promptChanges(a.spec, b.spec) };
}

const promptOf = (spec: PipelineSpec, name: string): string | null => {
  const step = spec.steps.find((s) => s.name === name) as { prompt?: unknown } | undefined;
  return typeof step?.prompt === "string" ? step.prompt : null;
};

/** Steps (of either version, in the newer's order) whose prompt text differs, with an inline diff. */
export function promptChanges(a: PipelineSpec, b: PipelineSpec) {
  const names = [...new Set([...b.steps.map((s) => s.name), ...a.steps.map((s) => s.name)])];
  return names.flatMap((step) => {
    const before = promptOf(a, step);
    const after = promptOf(b, step);
    if (before === after) return [];
    return [{ step, before, after, ...inlineDiff(before ?? "", after ?? "") }];
  });
}

/**
 * Rollback: saves an older version's spec and layout again as the branch's newest version (its
 * history stays whole). The caller checks who may save on the branch; the router audits it.
 */
export async function restoreVersion(db: Db, pipelineId: string, input: { versionId: string; branch: string; authorId?: string | null }) {
  const { version: old, spec } = await findVersion(db, pipelineId, input.versionId);
  const { version: head } = await getBranch(db, pipelineId, input.branch);
  if (head.id === old.id) throw badRequest(`Version ${old.hash.slice(0, 8)} is already the current version of ${input.branch}: nothing to restore.`);
  const saved = await saveVersion(db, pipelineId, {
    spec,
    layout: old.layout ?? undefined,
    message: `Restore ${old.hash.slice(0, 8)}${old.message ? ` (${old.message})`.slice(0, 400) : ""}`,
    authorId: input.authorId ?? null,
    branch: input.branch,
  });
  return { ...saved, restoredFrom: { id: old.id, hash: old.hash, message: old.message } };
}

/**
 * Raw records enter every branch of the pipeline (the raw data never moves; only the lens changes).
 * Idempotent: the same item twice adds nothing; a changed item replaces its pointer.
 */
export async function appendSourceRecords(db: Db, pipelineId: string, source: string, items: SourceItem[]) {
  const { spec } = await getBranch(db, pipelineId, "main");
  const def = spec.sources.find((s) => s.name === source);
  if (!def) throw notFound(`Source "${source}" is not in this pipeline. Sources: ${spec.sources.map((s) => s.name).join(", ")}`);
  const svh = stepVersionHashes(spec)[source]!;
  const branches = await db.branch.findMany({ where: { pipelineId }, select: { id: true } });
  let added = 0;
  for (let i = 0; i < items.length; i += 500) {
    const chunk = items.slice(i, i + 500);
    const records: NewRecord[] = chunk.map((item) => {
      const fp = contentFingerprint(item.content);
      const scope = item.scope ?? def.scope ?? "";
      // An item filed under a scope other than the source's is keyed by it too, so the same
      // conversation moved to another scope replaces its record instead of staying where it was.
      const key = sourceKey(source, svh, item.externalId, fp, scope === (def.scope ?? "") ? undefined : scope);
      return {
        id: randomUUID(),
        step: source,
        stepVersionHash: svh,
        workKey: key,
        materializationKey: key,
        content: item.content,
        contentFingerprint: fp,
        scope,
        metadata: { ...item.metadata, source: { type: def.format, ...(item.metadata?.source as object) } },
        audit: null,
        sources: [],
        groupKey: item.externalId,
      };
    });
    await db.$transaction(async (tx) => {
      const before = await tx.record.count({ where: { pipelineId, step: source } });
      for (const b of branches) await commitRecords(tx, b.id, records);
      added += (await tx.record.count({ where: { pipelineId, step: source } })) - before;
    }, { timeout: 120_000 });
  }
  return { received: items.length, added };
}

/** The template gallery, in order: what each architecture is and how many steps and outputs it has. */
export function listTemplates() {
  return TEMPLATES.map((t) => {
    const spec = t.spec();
    return {
      id: t.id,
      title: t.title,
      /** What the template is good for, in plain words (the card's first line). */
      goodFor: GOOD_FOR[t.id] ?? null,
      description: t.description,
      seed: t.seed ?? null,
      badge: t.badge ?? null,
      /** How the offline path stands in for an LLM step ({ note, detail }; null: it does not). */
      offlineStandIn: offlineStandInOf(t),
      /** The source format the template is made for (New pipeline preselects it). */
      sourceFormat: spec.sources[0]?.format ?? null,
      steps: spec.steps.length,
      outputs: spec.outputs.length,
      /** Every node the canvas draws: sources, steps, outputs. */
      nodes: [...spec.sources, ...spec.steps, ...spec.outputs].map((n) => n.name),
      evaluable: Boolean(t.eval),
    };
  });
}

export async function listPipelines(db: Db, workspaceId: string) {
  const pipelines = await db.pipeline.findMany({ where: { workspaceId, evalOfId: null }, orderBy: { createdAt: "desc" } });
  const counts = await recordCountsByPipeline(db, workspaceId);
  const lastRuns = await db.run.findMany({
    where: { workspaceId },
    orderBy: { createdAt: "desc" },
    distinct: ["pipelineId"],
    select: { pipelineId: true, status: true, createdAt: true, id: true },
  });
  return pipelines.map((p) => ({
    ...p,
    records: counts.find((c) => c.pipelineId === p.id)?.n ?? 0,
    lastRun: lastRuns.find((r) => r.pipelineId === p.id) ?? null,
  }));
}

/**
 * Per step on a branch: how many records it shows, and how many were made by an older version of
 * the step (stale: the step or something upstream changed since).
 */
export async function stepStatus(db: Db, pipelineId: string, branchName = "main") {
  const { branch, spec } = await getBranch(db, pipelineId, branchName);
  const hashes = stepVersionHashes(spec);
  const rows = await pointerCountsByStepVersion(db, branch.id);
  const names = [...spec.sources.map((s) => s.name), ...spec.steps.map((s) => s.name)];
  return names.map((name) => {
    const mine = rows.filter((r) => r.step === name);
    const records = mine.reduce((a, r) => a + r.n, 0);
    const current = mine.filter((r) => r.svh === hashes[name]).reduce((a, r) => a + r.n, 0);
    return { name, records, stale: records - current, stepVersionHash: hashes[name]! };
  });
}

export async function listVersions(db: Db, pipelineId: string) {
  return db.pipelineVersion.findMany({
    where: { pipelineId },
    orderBy: { createdAt: "desc" },
    select: { id: true, hash: true, message: true, authorId: true, createdAt: true, parentId: true },
  });
}
