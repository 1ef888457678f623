/**
 * Branches: try another prompt, model or architecture without touching main, then promote the
 * winner. A branch is a spec version plus a set of pointers into the shared record store, so
 * creating one copies pointers (no record is computed or copied), a run on it reuses every record
 * any branch made, a diff compares pointer sets, promotion upserts pointers into main by
 * materialization key, and deleting one drops pointers — records go only through an explicit `gc`.
 */
import { can, type Role } from "../auth/permissions";
import type { Db } from "../core/db";
import { badRequest, conflict, forbidden, notFound } from "../core/errors";
import { toJsonColumn } from "../core/json";
import { diffSpecs, type NodeDiff } from "../pipeline/diff";
import { specHash, stepVersionHashes } from "../pipeline/hashing";
import { mergeSpecs } from "../pipeline/merge";
import {
  comparePointers,
  analyzeBranchCopy,
  copyBranchSearchIndex,
  readFromOneSnapshot,
  deleteBranchRows,
  deleteRecords,
  differingPairs,
  replaceStepPointers,
  unreachedRecords,
  type GcCounts,
} from "../store/branches";
import { indexPipeline } from "../search/indexing";
import { copyBranchPointers } from "../store/branch-pointers";
import { findBranch, findVersion } from "../store/pipelines";
import { contentDiff } from "../text/content-diff";
import { branchNameSchema, requireValidSpec, stepStatus } from "./pipelines";
import { planPipeline } from "./runs";
import { clearRequestCaches } from "./request-context";

export const MAIN = "main";
const ACTIVE_RUN = ["queued", "running"];

type PipelineRow = { id: string; workspaceId: string; name: string; protectedMain: boolean };

/**
 * Protected main: editors save on branches; saving on or promoting into main needs
 * `branches:admin` (admins and owners). Unprotected, `pipelines:write` is enough.
 */
export function assertMayWriteBranch(pipeline: PipelineRow, branch: string, role: Role, action: "save on" | "promote into") {
  if (branch !== MAIN || !pipeline.protectedMain || can(role, "branches:admin")) return;
  throw forbidden(
    `Main is protected on pipeline "${pipeline.name}": your role (${role}) cannot ${action} it. Save on a branch and ask an admin or owner to promote it.`,
  );
}

/** Deleting records (gc without a dry run) is for admins and owners. */
export function assertMayCollectGarbage(role: Role) {
  if (!can(role, "branches:admin")) throw forbidden(`Your role (${role}) may preview gc (dry run) but not delete records: ask an admin or owner.`);
}

export async function listBranches(db: Db, pipelineId: string) {
  const branches = await db.branch.findMany({ where: { pipelineId }, orderBy: { createdAt: "asc" } });
  const versions = await db.pipelineVersion.findMany({
    where: { id: { in: branches.map((b) => b.versionId) } },
    select: { id: true, hash: true, message: true, createdAt: true },
  });
  const pointers = await db.branchPointer.groupBy({ by: ["branchId"], where: { branchId: { in: branches.map((b) => b.id) } }, _count: true });
  const runs = await db.run.findMany({
    where: { pipelineId },
    orderBy: { createdAt: "desc" },
    distinct: ["branchId"],
    select: { id: true, branchId: true, status: true, createdAt: true },
  });
  return branches.map((b) => ({
    id: b.id,
    name: b.name,
    description: b.description,
    isMain: b.name === MAIN,
    createdAt: b.createdAt,
    createdById: b.createdById,
    version: versions.find((v) => v.id === b.versionId) ?? null,
    baseVersionId: b.baseVersionId,
    pointers: pointers.find((p) => p.branchId === b.id)?._count ?? 0,
    lastRun: runs.find((r) => r.branchId === b.id) ?? null,
  }));
}

/** `from`: a branch name, else a version id (or a hash prefix of at least 7 characters) of this pipeline. */
async function resolveOrigin(db: Db, pipelineId: string, from: string) {
  const branch = await db.branch.findUnique({ where: { pipelineId_name: { pipelineId, name: from } } });
  if (branch) return { kind: "branch" as const, label: branch.name, versionId: branch.versionId, pointersOf: branch };
  const version =
    (await db.pipelineVersion.findFirst({ where: { pipelineId, id: from } })) ??
    (from.length >= 7 && /^[0-9a-f]+$/i.test(from)
      ? await db.pipelineVersion.findFirst({ where: { pipelineId, hash: { startsWith: from.toLowerCase() } }, orderBy: { createdAt: "desc" } })
      : null);
  if (!version) throw notFound(`"${from.slice(0, 100)}" is neither a branch nor a saved version of this pipeline.`);
  // The records of a version are wherever a branch showed it: that branch's pointers, else main's
  // (the raw records are on every branch; a run then reuses whatever the store already holds).
  const holder =
    (await db.branch.findFirst({ where: { pipelineId, versionId: version.id }, orderBy: { createdAt: "asc" } })) ??
    (await db.branch.findUniqueOrThrow({ where: { pipelineId_name: { pipelineId, name: MAIN } } }));
  return { kind: "version" as const, label: `version ${version.hash.slice(0, 8)}`, versionId: version.id, pointersOf: holder };
}

/** Copy-on-write: one INSERT…SELECT of pointers; no record is computed or copied. */
export async function createBranch(
  db: Db,
  pipelineId: string,
  input: { name: string; from?: string; description?: string; createdById?: string | null },
) {
  const parsed = branchNameSchema.safeParse(input.name);
  if (!parsed.success) throw badRequest(`Invalid branch name "${input.name.slice(0, 100)}": ${parsed.error.issues[0]?.message}`);
  const name = parsed.data;
  const origin = await resolveOrigin(db, pipelineId, input.from?.trim() || MAIN);
  const started = performance.now();
  const result = await db.$transaction(
    async (tx) => {
      // One snapshot for every copy below: an index pass of the origin committing between the copy of
      // its search documents and of its postings would leave the branch postings without their
      // documents, and the branch's first index pass would then add them twice.
      await readFromOneSnapshot(tx);
      if (await tx.branch.findUnique({ where: { pipelineId_name: { pipelineId, name } } })) {
        throw conflict(`Branch "${name}" already exists on this pipeline.`);
      }
      const branch = await tx.branch.create({
        data: {
          workspaceId: origin.pointersOf.workspaceId,
          pipelineId,
          name,
          versionId: origin.versionId,
          baseVersionId: origin.versionId,
          description: input.description?.trim() ?? "",
          createdById: input.createdById ?? null,
        },
      });
      const pointers = await copyBranchPointers(tx, origin.pointersOf.id, branch.id);
      await copyBranchSearchIndex(tx, origin.pointersOf.id, branch.id);
      return { branch, pointers };
    },
    { timeout: 300_000 },
  );
  // After the commit (ANALYZE sees only committed rows): the new branch's reads get main's plans.
  await analyzeBranchCopy(db);
  const ms = Math.round(performance.now() - started);
  return {
    branch: result.branch,
    from: { kind: origin.kind, name: origin.label, pointersFrom: origin.pointersOf.name },
    recordsComputed: 0,
    recordsShared: result.pointers,
    ms,
    message: `Created branch "${name}" from ${origin.label}: 0 records computed, ${result.pointers.toLocaleString("en-US")} records shared with ${origin.pointersOf.name}.`,
  };
}

export interface StepComparison extends Pick<NodeDiff, "status" | "reasons" | "rerun" | "type"> {
  name: string;
  onlyA: number;
  onlyB: number;
  shared: number;
  differingGroups: number;
}

/** B against A (A is the baseline, usually main): per step why it differs and how the records overlap. */
export async function diffBranches(db: Db, pipelineId: string, aName: string, bName: string) {
  if (aName === bName) throw badRequest(`Pick two different branches to compare (both are "${aName}").`);
  const [a, b] = await Promise.all([findBranch(db, pipelineId, aName), findBranch(db, pipelineId, bName)]);
  const spec = diffSpecs(a.spec, b.spec);
  const counts = new Map((await comparePointers(db, a.branch.id, b.branch.id)).map((c) => [c.step, c]));
  const nodes = [...spec.sources, ...spec.steps];
  const steps: StepComparison[] = nodes.map((n) => {
    const c = counts.get(n.name);
    return {
      name: n.name,
      type: n.type,
      status: n.status,
      reasons: n.reasons,
      rerun: n.rerun,
      onlyA: c?.onlyA ?? 0,
      onlyB: c?.onlyB ?? 0,
      shared: c?.shared ?? 0,
      differingGroups: c?.differingGroups ?? 0,
    };
  });
  const total = (f: (s: StepComparison) => number) => steps.reduce((n, s) => n + f(s), 0);
  return {
    a: { name: a.branch.name, versionId: a.version.id, hash: a.version.hash },
    b: { name: b.branch.name, versionId: b.version.id, hash: b.version.hash },
    spec,
    steps,
    totals: { onlyA: total((s) => s.onlyA), onlyB: total((s) => s.onlyB), shared: total((s) => s.shared) },
  };
}

/** Records of one step that the two branches make differently from the same inputs, with a content diff each. */
export async function recordPairs(
  db: Db,
  pipelineId: string,
  input: { a: string; b: string; step: string; cursor?: string | null; limit?: number; groupKey?: string },
) {
  const [a, b] = await Promise.all([findBranch(db, pipelineId, input.a), findBranch(db, pipelineId, input.b)]);
  const limit = input.limit ?? 20;
  const rows = await differingPairs(db, a.branch.id, b.branch.id, input.step, { afterGroupKey: input.cursor, limit: limit + 1, groupKey: input.groupKey });
  const page = rows.slice(0, limit);
  return {
    pairs: page.map((r) => ({
      groupKey: r.groupKey,
      a: { id: r.aId!, content: r.aContent ?? "", scope: r.aScope ?? "" },
      b: { id: r.bId!, content: r.bContent ?? "", scope: r.bScope ?? "" },
      diff: contentDiff(r.aContent ?? "", r.bContent ?? ""),
    })),
    nextCursor: rows.length > limit ? page.at(-1)!.groupKey : null,
  };
}

/** Why a branch cannot be promoted yet (a run in progress, stale records, pending work), or null. */
async function notPromotable(db: Db, pipelineId: string, branch: { id: string; name: string }, mainId: string) {
  const running = await db.run.findFirst({ where: { branchId: { in: [branch.id, mainId] }, status: { in: ACTIVE_RUN } } });
  if (running) {
    const on = running.branchId === branch.id ? `branch "${branch.name}"` : "main";
    return { code: "running" as const, message: `A run is in progress on ${on} (${running.id}): wait for it to finish, then promote.` };
  }
  const status = await stepStatus(db, pipelineId, branch.name);
  const stale = status.filter((s) => s.stale > 0);
  const plan = await planPipeline(db, pipelineId, branch.name);
  const pending = plan.filter((p) => p.pending > 0);
  if (stale.length || pending.length) {
    const what = [
      ...stale.map((s) => `${s.name}: ${s.stale} record(s) from an older version`),
      ...pending.filter((p) => !stale.some((s) => s.name === p.step)).map((p) => `${p.step}: ${p.pending} item(s) not computed`),
    ];
    return {
      code: "stale" as const,
      message: `Branch "${branch.name}" is stale (${what.join("; ")}). Run it first, then promote what you measured.`,
    };
  }
  return null;
}

/**
 * Promote a branch into main (seed §4.5): main's spec takes what the branch changed since it
 * forked (a three-way merge; a node both changed differently refuses), the branch's pointers of
 * every step whose version the merge takes from the branch are upserted into main by
 * (step, group key), and steps whose inputs changed on main without the branch having computed
 * them stay on their old version: stale, re-processed by main's next run. An audit row says who
 * promoted what and when.
 */
export async function promoteBranch(
  db: Db,
  pipeline: PipelineRow,
  input: { branch: string; role: Role; userId: string | null; message?: string },
) {
  if (input.branch === MAIN) throw badRequest("Cannot promote main into itself: pick the branch to promote.");
  assertMayWriteBranch(pipeline, MAIN, input.role, "promote into");
  const source = await findBranch(db, pipeline.id, input.branch);
  const main = await findBranch(db, pipeline.id, MAIN);
  const blocked = await notPromotable(db, pipeline.id, source.branch, main.branch.id);
  if (blocked) throw conflict(blocked.message);

  const base = source.branch.baseVersionId ? (await findVersion(db, pipeline.id, source.branch.baseVersionId)).spec : main.spec;
  const merged = mergeSpecs(base, main.spec, source.spec);
  if (merged.conflicts.length) {
    throw conflict(
      `Main and "${source.branch.name}" both changed ${merged.conflicts.join(", ")} since the branch was created: bring the branch up to date with main's version of them, run it, and promote again.`,
    );
  }
  const spec = requireValidSpec(merged.spec);
  const [hMerged, hBranch, hMain] = [stepVersionHashes(spec), stepVersionHashes(source.spec), stepVersionHashes(main.spec)];
  const names = [...spec.sources.map((s) => s.name), ...spec.steps.map((s) => s.name)];
  const fromBranch = names.filter((n) => hMerged[n] === hBranch[n] && hMerged[n] !== hMain[n]);
  const staleOnMain = names.filter((n) => hMerged[n] !== hBranch[n] && hMerged[n] !== hMain[n]);
  const diff = diffSpecs(main.spec, spec);

  const outcome = await db.$transaction(
    async (tx) => {
      const changedSpec = specHash(spec) !== main.version.hash;
      const version = changedSpec
        ? await tx.pipelineVersion.create({
            data: {
              workspaceId: pipeline.workspaceId,
              pipelineId: pipeline.id,
              hash: specHash(spec),
              spec: toJsonColumn(spec),
              layout: source.version.layout ?? undefined,
              message: input.message?.trim() || `Promote ${source.branch.name}`,
              authorId: input.userId,
              parentId: main.version.id,
            },
          })
        : main.version;
      if (changedSpec) await tx.branch.update({ where: { id: main.branch.id }, data: { versionId: version.id } });
      const moved = await replaceStepPointers(tx, source.branch.id, main.branch.id, fromBranch);
      const steps = [...moved].map(([step, n]) => ({ step, ...n }));
      const summary = {
        steps,
        staleSteps: staleOnMain,
        changed: diff.steps.filter((s) => s.status !== "unchanged").map((s) => ({ name: s.name, status: s.status, reasons: s.reasons })),
      };
      const promotion = await tx.branchPromotion.create({
        data: {
          workspaceId: pipeline.workspaceId,
          pipelineId: pipeline.id,
          branchName: source.branch.name,
          targetName: MAIN,
          fromVersionId: source.version.id,
          toVersionId: version.id,
          promotedById: input.userId,
          summary: toJsonColumn(summary),
        },
      });
      return { version, steps, promotion };
    },
    { timeout: 300_000 },
  );
  clearRequestCaches();
  // Main now points at the branch's records for those steps: its search index follows (postings diff).
  await indexPipeline(db, pipeline.id, MAIN, { workspaceId: pipeline.workspaceId });
  const pointers = outcome.steps.reduce((n, s) => n + s.upserted + s.removed, 0);
  return {
    promotionId: outcome.promotion.id,
    version: { id: outcome.version.id, hash: outcome.version.hash },
    diff,
    steps: outcome.steps,
    staleSteps: staleOnMain,
    message:
      `Promoted "${source.branch.name}" into main: ${fromBranch.length ? `${fromBranch.join(", ")} now show the branch's records (${pointers.toLocaleString("en-US")} pointer(s) moved)` : "no step changed"}` +
      (staleOnMain.length ? `; stale on main until its next run: ${staleOnMain.join(", ")}.` : "."),
  };
}

export async function listPromotions(db: Db, pipelineId: string, take = 50) {
  const rows = await db.branchPromotion.findMany({ where: { pipelineId }, orderBy: { createdAt: "desc" }, take });
  const users = await db.user.findMany({
    where: { id: { in: rows.map((r) => r.promotedById).filter((x): x is string => Boolean(x)) } },
    select: { id: true, email: true, name: true },
  });
  return rows.map((r) => {
    const summary = r.summary as { steps?: Array<{ step: string; upserted: number; removed: number }>; staleSteps?: string[] };
    const user = users.find((u) => u.id === r.promotedById);
    return {
      id: r.id,
      branchName: r.branchName,
      targetName: r.targetName,
      fromVersionId: r.fromVersionId,
      toVersionId: r.toVersionId,
      promotedBy: user ? (user.name ?? user.email) : r.promotedById ? "a deleted user" : "an API key",
      createdAt: r.createdAt,
      steps: summary.steps ?? [],
      staleSteps: summary.staleSteps ?? [],
    };
  });
}

/** Deletes a branch (never main): its pointers go, every record stays until an explicit gc. */
export async function deleteBranch(db: Db, pipelineId: string, name: string) {
  if (name === MAIN) throw badRequest("Main cannot be deleted: it is the pipeline's published branch.");
  const { branch } = await findBranch(db, pipelineId, name);
  const running = await db.run.findFirst({ where: { branchId: branch.id, status: { in: ACTIVE_RUN } } });
  if (running) throw conflict(`A run is in progress on branch "${name}" (${running.id}): cancel it or wait, then delete.`);
  const pointers = await db.$transaction((tx) => deleteBranchRows(tx, branch.id), { timeout: 300_000 });
  clearRequestCaches();
  return {
    deleted: name,
    pointersRemoved: pointers,
    message: `Deleted branch "${name}": ${pointers.toLocaleString("en-US")} pointer(s) removed, no record deleted (run gc to reclaim records no branch uses).`,
  };
}

/**
 * Garbage collection of records no branch reaches (not pointed to, not an ancestor of one that
 * is). Never implicit: a dry run reports what a real one deletes.
 */
export async function collectGarbage(db: Db, pipelineId: string, options: { dryRun: boolean }): Promise<GcCounts & { dryRun: boolean; deleted: number }> {
  const running = await db.run.findFirst({ where: { pipelineId, status: { in: ACTIVE_RUN } } });
  if (running && !options.dryRun) throw conflict(`A run is in progress (${running.id}): gc waits until no run of this pipeline is active.`);
  if (options.dryRun) {
    const { counts } = await unreachedRecords(db, pipelineId);
    return { ...counts, dryRun: true, deleted: 0 };
  }
  return db.$transaction(
    async (tx) => {
      const { ids, counts } = await unreachedRecords(tx, pipelineId);
      const deleted = await deleteRecords(tx, ids);
      return { ...counts, dryRun: false, deleted };
    },
    { timeout: 600_000 },
  );
}

export async function setProtectedMain(db: Db, pipelineId: string, protectedMain: boolean) {
  return db.pipeline.update({ where: { id: pipelineId }, data: { protectedMain }, select: { id: true, protectedMain: true } });
}
