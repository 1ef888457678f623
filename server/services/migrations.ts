/**
 * "Try another architecture" (issue 50): move a live pipeline to another template on its own data,
 * prove it on its own traffic (migration-report.ts), promote it or walk away — nothing lost. One
 * lifecycle, read top to bottom:
 *
 * 1. `previewMigration`: the template's sources bound to the pipeline's existing sources (matched by
 *    format, the caller may override each binding); a template that reads none of them is refused
 *    with the formats it reads and the pipeline's.
 * 2. `createCandidate`: a zero-copy branch of main (every raw record shared, nothing imported again)
 *    whose spec is the template's, bound; then its plan (what a run computes, tokens and cost with
 *    the team's model, what it reuses).
 * 3. Run it like any branch (services/runs.ts), then read its report.
 * 4. `promoteCandidate`: main is first kept as a branch (`previous/…`), then the candidate is
 *    promoted (services/branches.ts); `restorePrevious` puts the kept main back in one action.
 *    Or `walkAway`: the candidate is deleted (records stay until `gc`).
 * The routers audit each mutation (server/api/routers/migration.ts).
 */
import type { Role } from "../auth/permissions";
import type { Db } from "../core/db";
import { badRequest, conflict } from "../core/errors";
import { toJsonColumn } from "../core/json";
import { specHash } from "../pipeline/hashing";
import { DEFAULT_MODEL, fromList, usesModel, type PipelineSpec, type SourceSpec } from "../pipeline/spec";
import { findTemplate, TEMPLATE_IDS } from "../pipeline/templates";
import { templateReads, templateReadsFormat } from "../pipeline/templates/reads";
import { indexPipeline } from "../search/indexing";
import { pointerCountsByStepVersion } from "../store/branch-pointers";
import { replaceStepPointers } from "../store/branches";
import { findBranch } from "../store/pipelines";
import { assertMayWriteBranch, collectGarbage, createBranch, deleteBranch, MAIN, promoteBranch } from "./branches";
import { planWithCost } from "./cost";
import { getBranch, requireValidSpec, saveVersion } from "./pipelines";
import { clearRequestCaches } from "./request-context";

type PipelineRow = { id: string; workspaceId: string; name: string; protectedMain: boolean };

/** Kept copies of main before a promotion are named `previous/<candidate>` (then -2, -3, …). */
export const PREVIOUS_PREFIX = "previous/";

export interface SourceBinding {
  /** The template's source name. */
  templateSource: string;
  /** The pipeline's source it reads instead (its name, format and scope are kept). */
  pipelineSource: string;
  format: string;
  /** True when the caller chose it; false when proposed by format. */
  chosen: boolean;
  /** Pipeline sources of a format this template reads (what a binding may pick). */
  candidates: string[];
}

export interface MigrationPreview {
  template: { id: string; title: string; reads: string; formats: readonly string[] };
  bindings: SourceBinding[];
  /** Pipeline sources no template source reads: kept in the spec (their raw records stay), unused by its steps. */
  unbound: string[];
  /** The model the prompt steps use: the caller's, else main's, else the offline default. */
  model: string;
  spec: PipelineSpec;
}

/** The model the team chose: main's first prompt step's model (the offline default when none has one). */
function teamModel(spec: PipelineSpec): string {
  return spec.steps.find((s) => usesModel(s))?.model ?? DEFAULT_MODEL;
}

function requireTemplate(id: string) {
  const template = findTemplate(id);
  if (!template) throw badRequest(`template: unknown template "${id.slice(0, 100)}". Templates: ${TEMPLATE_IDS.join(", ")}.`);
  if (id === "blank") throw badRequest('template: "blank" has no steps to migrate to; pick an architecture.');
  return template;
}

/**
 * The template's sources bound to `main`'s (by format unless `bind` names one), and the template's
 * spec with each source replaced by the pipeline's (same name, format and scope: the same source
 * version hash, so every raw record is shared) and every `from` renamed. Refuses, naming the
 * formats, when a template source has no pipeline source it can read.
 */
export function bindTemplate(main: PipelineSpec, templateId: string, input: { bind?: Record<string, string>; model?: string } = {}): MigrationPreview {
  const template = requireTemplate(templateId);
  const reads = templateReads(templateId);
  const readable = main.sources.filter((s) => templateReadsFormat(templateId, s.format));
  if (!readable.length) {
    const have = main.sources.map((s) => `${s.name} (${s.format})`).join(", ") || "none";
    throw badRequest(
      `Template "${templateId}" reads ${reads.what} (${reads.formats.join(", ")}); this pipeline's sources are ${have}: there is nothing it can read. Pick a template that reads ${[...new Set(main.sources.map((s) => s.format))].join(", ")}.`,
    );
  }
  const model = input.model ?? teamModel(main);
  const options = { ...(model !== DEFAULT_MODEL ? { model } : {}) };
  // Built with the first readable source's format and scope; each source is replaced below.
  const built = template.spec(readable[0]!.format, { ...options, ...(readable[0]!.scope ? { scope: readable[0]!.scope } : {}) });
  const bind = input.bind ?? {};
  for (const key of Object.keys(bind)) {
    if (!built.sources.some((s) => s.name === key)) throw badRequest(`bind: the template "${templateId}" has no source "${key}" (its sources: ${built.sources.map((s) => s.name).join(", ")}).`);
  }
  const used = new Set<string>();
  const bindings: SourceBinding[] = built.sources.map((ts) => {
    const wanted = bind[ts.name];
    if (wanted !== undefined) {
      const ps = main.sources.find((s) => s.name === wanted);
      if (!ps) throw badRequest(`bind.${ts.name}: the pipeline has no source "${wanted}" (its sources: ${main.sources.map((s) => s.name).join(", ")}).`);
      if (!templateReadsFormat(templateId, ps.format)) {
        throw badRequest(`bind.${ts.name}: template "${templateId}" reads ${reads.what} (${reads.formats.join(", ")}), not ${ps.name}'s format ${ps.format}.`);
      }
      used.add(ps.name);
      return { templateSource: ts.name, pipelineSource: ps.name, format: ps.format, chosen: true, candidates: readable.map((s) => s.name) };
    }
    const ps = readable.find((s) => !used.has(s.name)) ?? readable[0]!;
    used.add(ps.name);
    return { templateSource: ts.name, pipelineSource: ps.name, format: ps.format, chosen: false, candidates: readable.map((s) => s.name) };
  });
  const rename = new Map(bindings.map((b) => [b.templateSource, b.pipelineSource]));
  const renamed = (from: string | string[]) => (Array.isArray(from) ? fromList({ from }).map((n) => rename.get(n) ?? n) : (rename.get(from) ?? from));
  const sources: SourceSpec[] = [...new Map(bindings.map((b) => [b.pipelineSource, main.sources.find((s) => s.name === b.pipelineSource)!])).values()];
  const unbound = main.sources.filter((s) => !used.has(s.name));
  const taken = new Set([...sources, ...unbound].map((s) => s.name));
  const clash = [...built.steps, ...built.outputs].find((n) => taken.has(n.name));
  if (clash) throw badRequest(`Template "${templateId}" has a step or output named "${clash.name}", like the pipeline's source: rename that source first.`);
  const spec = requireValidSpec({
    ...built,
    sources: [...sources, ...unbound],
    steps: built.steps.map((s) => ({ ...s, from: renamed(s.from) })),
    outputs: built.outputs.map((o) => ({ ...o, from: renamed(o.from) })),
  });
  return {
    template: { id: template.id, title: template.title, reads: reads.what, formats: reads.formats },
    bindings,
    unbound: unbound.map((s) => s.name),
    model,
    spec,
  };
}

/** The binding a candidate would use, without creating anything (the screen shows it and lets the user change it). */
export async function previewMigration(db: Db, pipelineId: string, input: { template: string; bind?: Record<string, string>; model?: string }) {
  const { spec } = await getBranch(db, pipelineId, MAIN);
  return bindTemplate(spec, input.template, input);
}

/** What the candidate's run computes and what it reuses: the plan with cost, per step, and the shared raw records. */
export async function migrationPlan(db: Db, pipelineId: string, branch: string) {
  const plan = await planWithCost(db, pipelineId, branch);
  const status = await pointerCountsByStepVersion(db, (await findBranch(db, pipelineId, branch)).branch.id);
  const { spec } = await getBranch(db, pipelineId, branch);
  const sourceNames = new Set(spec.sources.map((s) => s.name));
  const sharedRaw = status.filter((r) => sourceNames.has(r.step)).reduce((n, r) => n + r.n, 0);
  const reused = plan.steps.filter((s) => s.pending === 0 && s.total > 0).map((s) => s.step);
  const computed = plan.steps.filter((s) => s.pending > 0).map((s) => ({ step: s.step, pending: s.pending, model: s.model, estimatedCostUsd: s.estimatedCostUsd }));
  return {
    plan,
    reuses: { rawRecords: sharedRaw, sources: [...sourceNames], steps: reused },
    computes: computed,
    summary:
      `A run computes ${computed.length ? computed.map((c) => `${c.step} (${c.pending.toLocaleString("en-US")})`).join(", ") : "nothing"}; ` +
      `it reuses ${sharedRaw.toLocaleString("en-US")} raw record(s) of ${[...sourceNames].join(", ")}${reused.length ? ` and ${reused.join(", ")}` : ""}, nothing imported again. ` +
      `Estimated $${plan.totals.estimatedCostUsd.toFixed(4)} (${(plan.totals.estimatedTokensIn + plan.totals.estimatedTokensOut).toLocaleString("en-US")} tokens).`,
  };
}

/** A candidate branch of main on another template: zero-copy, then the template's spec bound to the pipeline's sources; with its plan. */
export async function createCandidate(
  db: Db,
  pipelineId: string,
  input: { name: string; template: string; bind?: Record<string, string>; model?: string; createdById?: string | null },
) {
  const preview = await previewMigration(db, pipelineId, input);
  const created = await createBranch(db, pipelineId, {
    name: input.name,
    from: MAIN,
    description: `Try ${preview.template.title}: ${preview.bindings.map((b) => `${b.templateSource} ← ${b.pipelineSource}`).join(", ")}`,
    createdById: input.createdById ?? null,
  });
  try {
    await saveVersion(db, pipelineId, { spec: preview.spec, branch: created.branch.name, message: `Try template ${preview.template.id}`, authorId: input.createdById ?? null });
  } catch (err) {
    await deleteBranch(db, pipelineId, created.branch.name);
    throw err;
  }
  const plan = await migrationPlan(db, pipelineId, created.branch.name);
  return {
    branch: { id: created.branch.id, name: created.branch.name },
    template: preview.template,
    bindings: preview.bindings,
    unbound: preview.unbound,
    model: preview.model,
    recordsShared: created.recordsShared,
    ...plan,
    message: `Created branch "${created.branch.name}" on template ${preview.template.id}: ${preview.bindings.map((b) => `${b.templateSource} reads ${b.pipelineSource} (${b.format})`).join(", ")}; ${created.recordsShared.toLocaleString("en-US")} record(s) shared, nothing imported again.`,
  };
}

/** Walk away: the candidate is deleted (its pointers; records stay), with what `gc` would reclaim. */
export async function walkAway(db: Db, pipelineId: string, branch: string) {
  if (branch === MAIN) throw badRequest('branch: "main" is not a candidate; name the branch to walk away from.');
  const deleted = await deleteBranch(db, pipelineId, branch);
  const gc = await collectGarbage(db, pipelineId, { dryRun: true });
  return { ...deleted, gc: { records: gc.records }, message: `${deleted.message} gc would delete ${gc.records.toLocaleString("en-US")} record(s) no branch uses.` };
}

async function freeName(db: Db, pipelineId: string, base: string) {
  for (let i = 1; ; i++) {
    const name = i === 1 ? base : `${base}-${i}`;
    if (!(await db.branch.findUnique({ where: { pipelineId_name: { pipelineId, name } } }))) return name;
  }
}

/**
 * Promote the candidate: main is first kept as a branch (`previous/<candidate>`: a pointer copy of
 * its spec and records), then the branch is promoted (branches.ts: main takes its spec and records).
 * Agents keep calling the same API, now served by the new memory; `restorePrevious` undoes it.
 */
export async function promoteCandidate(db: Db, pipeline: PipelineRow, input: { branch: string; role: Role; userId: string | null; message?: string }) {
  if (input.branch === MAIN || input.branch.startsWith(PREVIOUS_PREFIX)) throw badRequest(`branch: "${input.branch}" is not a candidate; pick the branch you tried.`);
  assertMayWriteBranch(pipeline, MAIN, input.role, "promote into");
  await findBranch(db, pipeline.id, input.branch);
  const kept = await freeName(db, pipeline.id, `${PREVIOUS_PREFIX}${input.branch}`.slice(0, 64));
  await createBranch(db, pipeline.id, { name: kept, from: MAIN, description: `Main before promoting "${input.branch}"`, createdById: input.userId });
  try {
    const promoted = await promoteBranch(db, pipeline, input);
    return { ...promoted, kept, message: `${promoted.message} The previous main is kept as "${kept}": restore it in one action.` };
  } catch (err) {
    await deleteBranch(db, pipeline.id, kept);
    throw err;
  }
}

/**
 * Restore a kept main (`previous/…`, or any branch): main's spec becomes the kept branch's (a new
 * version, its history whole) and main's pointers of every step either spec names become the kept
 * branch's (its records: nothing recomputed). The kept branch stays.
 */
export async function restorePrevious(db: Db, pipeline: PipelineRow, input: { kept: string; role: Role; userId: string | null }) {
  if (input.kept === MAIN) throw badRequest("kept: name the kept branch to restore (e.g. previous/<candidate>), not main.");
  assertMayWriteBranch(pipeline, MAIN, input.role, "promote into");
  const kept = await findBranch(db, pipeline.id, input.kept);
  const main = await findBranch(db, pipeline.id, MAIN);
  const running = await db.run.findFirst({ where: { branchId: { in: [kept.branch.id, main.branch.id] }, status: { in: ["queued", "running"] } } });
  if (running) throw conflict(`A run is in progress (${running.id}): wait for it to finish, then restore.`);
  const onMain = await pointerCountsByStepVersion(db, main.branch.id);
  const steps = [...new Set([...kept.spec.sources, ...kept.spec.steps, ...main.spec.sources, ...main.spec.steps].map((n) => n.name).concat(onMain.map((r) => r.step)))];
  const outcome = await db.$transaction(
    async (tx) => {
      const same = specHash(kept.spec) === main.version.hash;
      const version = same
        ? main.version
        : await tx.pipelineVersion.create({
            data: {
              workspaceId: pipeline.workspaceId,
              pipelineId: pipeline.id,
              hash: specHash(kept.spec),
              spec: toJsonColumn(kept.spec),
              layout: kept.version.layout ?? undefined,
              message: `Restore ${kept.branch.name}`,
              authorId: input.userId,
              parentId: main.version.id,
            },
          });
      if (!same) await tx.branch.update({ where: { id: main.branch.id }, data: { versionId: version.id } });
      const moved = await replaceStepPointers(tx, kept.branch.id, main.branch.id, steps);
      return { version, moved: [...moved.values()].reduce((n, m) => n + m.upserted + m.removed, 0) };
    },
    { timeout: 300_000 },
  );
  clearRequestCaches();
  await indexPipeline(db, pipeline.id, MAIN, { workspaceId: pipeline.workspaceId });
  return {
    restored: kept.branch.name,
    version: { id: outcome.version.id, hash: outcome.version.hash },
    pointersMoved: outcome.moved,
    message: `Restored main from "${kept.branch.name}" (version ${outcome.version.hash.slice(0, 8)}): ${outcome.moved.toLocaleString("en-US")} pointer(s) moved, nothing recomputed.`,
  };
}

/** Kept copies of main (newest first): what `restorePrevious` can put back. */
export async function keptMains(db: Db, pipelineId: string) {
  return db.branch.findMany({ where: { pipelineId, name: { startsWith: PREVIOUS_PREFIX } }, orderBy: { createdAt: "desc" }, select: { name: true, description: true, createdAt: true } });
}
