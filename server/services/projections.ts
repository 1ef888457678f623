/**
 * Projection outputs: the current record(s) of a step for a scope, rendered through the output's
 * optional Liquid template as a context block (what an agent puts in its system prompt).
 * After a run, `detectProjectionChanges` compares the projected record per scope with
 * ProjectionState and enqueues one webhook delivery per change.
 */
import { fromList, type OutputSpec } from "../pipeline/spec";
import { renderTemplate, TemplateError } from "../pipeline/prompts";
import { latestRecordPerScope, swapProjectionState, type ProjectedRecord } from "../store/projection-store";
import { resolveBranch, type BranchContext } from "../store/pipelines";
import type { Db } from "../core/db";
import { badRequest } from "../core/errors";
import { toJsonColumn } from "../core/json";
import type { KeyRestrictions } from "./api-keys";
import { visibleOnly } from "./record-visibility";

export type { ProjectedRecord };

export interface ProjectionBlock {
  scope: string;
  /** The latest record for this scope. */
  record: ProjectedRecord;
  /** The rendered context block (template output, or the record's content). */
  text: string;
}

export interface ProjectionResult {
  output: string;
  steps: string[];
  blocks: ProjectionBlock[];
  /** All blocks, joined. Empty when nothing has been produced yet. */
  text: string;
}

function projectionOutput(ctx: BranchContext, name: string): OutputSpec {
  const out = ctx.spec.outputs.find((o) => o.name === name);
  const projections = ctx.spec.outputs.filter((o) => o.surface === "projection").map((o) => o.name);
  if (!out) throw badRequest(`Unknown output "${name}". Projections: ${projections.join(", ") || "(none)"}.`);
  if (out.surface !== "projection") throw badRequest(`Output "${name}" is a ${out.surface} index, not a projection.`);
  return out;
}

function render(output: OutputSpec, record: ProjectedRecord, now: string): string {
  if (!output.template) return record.content;
  try {
    return renderTemplate(output.template, {
      record: { id: record.id, content: record.content, scope: record.scope, metadata: record.metadata },
      records: [{ id: record.id, content: record.content, scope: record.scope, metadata: record.metadata }],
      scope: record.scope,
      now,
    });
  } catch (err) {
    if (err instanceof TemplateError) throw badRequest(`Template of output "${output.name}" failed: ${err.message}`);
    throw err;
  }
}

export async function projection(
  db: Db,
  pipelineId: string,
  branch: string,
  output: string,
  scope?: string,
  options: { workspaceId?: string; now?: Date; restrictions?: KeyRestrictions | null } = {},
): Promise<ProjectionResult> {
  const workspaceId = options.workspaceId ?? (await db.pipeline.findUnique({ where: { id: pipelineId }, select: { workspaceId: true } }))?.workspaceId;
  if (!workspaceId) throw badRequest(`Pipeline "${pipelineId}" not found.`);
  const ctx = await resolveBranch(db, workspaceId, pipelineId, branch);
  const out = projectionOutput(ctx, output);
  const steps = fromList(out);
  const now = (options.now ?? new Date()).toISOString();
  const records = visibleOnly(options.restrictions, await latestRecordPerScope(db, ctx, steps, scope));
  const blocks = records.map((record) => ({ scope: record.scope, record, text: render(out, record, now) }));
  const text =
    blocks.length <= 1 ? (blocks[0]?.text ?? "") : blocks.map((b) => `## ${b.scope || "(no scope)"}\n\n${b.text}`).join("\n\n");
  return { output: out.name, steps, blocks, text };
}

/**
 * For each projection with a webhook: the scopes whose projected record changed since the last
 * time (ProjectionState, swapped atomically so a change is enqueued exactly once).
 */
export async function detectProjectionChanges(db: Db, pipelineId: string, branch = "main"): Promise<{ enqueued: number }> {
  const pipeline = await db.pipeline.findUnique({ where: { id: pipelineId }, select: { workspaceId: true } });
  if (!pipeline) return { enqueued: 0 };
  const ctx = await resolveBranch(db, pipeline.workspaceId, pipelineId, branch);
  let enqueued = 0;
  for (const out of ctx.spec.outputs) {
    if (out.surface !== "projection" || !out.webhook) continue;
    const records = await latestRecordPerScope(db, ctx, fromList(out));
    if (records.length === 0) continue;
    const now = new Date();
    await db.$transaction(async (tx) => {
      const previous = await tx.projectionState.findMany({ where: { branchId: ctx.branchId, output: out.name } });
      const prevOf = new Map(previous.map((p) => [p.scope, p.recordId]));
      const changed = await swapProjectionState(tx, { workspaceId: ctx.workspaceId, branchId: ctx.branchId, output: out.name }, records);
      const byScope = new Map(records.map((r) => [r.scope, r]));
      for (const c of changed) {
        const record = byScope.get(c.scope)!;
        const payload = {
          event: "projection.updated",
          pipelineId,
          branch: ctx.branchName,
          output: out.name,
          scope: c.scope,
          recordId: record.id,
          previousRecordId: prevOf.get(c.scope) ?? null,
          text: render(out, record, now.toISOString()),
          updatedAt: now.toISOString(),
        };
        await tx.webhookDelivery.create({
          data: {
            workspaceId: ctx.workspaceId,
            pipelineId,
            output: out.name,
            url: out.webhook!.url,
            payload: toJsonColumn(payload),
            status: "pending",
          },
        });
        enqueued++;
      }
    });
  }
  return { enqueued };
}
