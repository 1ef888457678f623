import { z } from "zod";
import { assertPipelineAllowed, assertRunAllowedToScopedKey, type KeyRestrictions } from "../../services/api-keys";
import { assertProvidersAvailable } from "../../services/provider-check";
import { failureGroups } from "../../services/run-failures";
import * as runs from "../../services/runs";
import { withRunStats } from "../../store/runs";
import { runDetailSchema, runSchema } from "../schemas";
import { actorRef, createTRPCRouter, pipelineProcedure, workspaceProcedure } from "../trpc";

const runOptions = z.object({
  steps: z.array(z.string()).optional(),
  from: z.string().optional(),
  full: z.boolean().optional(),
  replay: z.boolean().optional(),
});

/** A run of a pipeline the key does not reach answers like a run that does not exist. */
function assertRunPipelineAllowed(ctx: { restrictions: KeyRestrictions | null }, run: { id: string; pipelineId: string }) {
  assertPipelineAllowed(ctx.restrictions, run.pipelineId, () => runs.runNotFound(run.id));
}

export const runRouter = createTRPCRouter({
  plan: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .input(z.object({ options: runOptions.default({}) }))
    .query(({ ctx, input }) => runs.planPipeline(ctx.db, ctx.pipeline.id, ctx.branch.name, input.options)),
  start: pipelineProcedure("runs:write")
    .meta({ keyRestrictions: "enforced" })
    .meta({
      rest: { method: "POST", path: "/pipelines/{pipelineId}/runs", summary: "Create a run (incremental unless options.full)", tag: "Runs" },
      audit: {
        action: "run.start",
        target: (_input, run) => `run:${(run as { id: string }).id}`,
        summary: (input, run) => ({ pipelineId: (run as { pipelineId: string }).pipelineId, branch: input.branch ?? "main", options: input.options ?? {} }),
      },
    })
    .input(z.object({ options: runOptions.default({}) }))
    .output(runSchema)
    .mutation(async ({ ctx, input }) => {
      assertRunAllowedToScopedKey(ctx.restrictions, { options: input.options });
      // A model without a provider would fail every item: refuse before starting.
      await assertProvidersAvailable(ctx.db, ctx.workspace.id, ctx.pipeline.id, ctx.branch.name);
      return withRunStats(
        await runs.startRun(ctx.db, {
          workspaceId: ctx.workspace.id,
          pipelineId: ctx.pipeline.id,
          branch: ctx.branch.name,
          options: input.options,
          // A person's id; a key as `apiKey:<id>` (a scope-limited key may cancel only its own runs).
          triggeredBy: ctx.userId ?? actorRef(ctx.actor),
        }),
      );
    }),
  list: pipelineProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .meta({ rest: { method: "GET", path: "/pipelines/{pipelineId}/runs", summary: "The pipeline's latest runs", tag: "Runs" } })
    .output(z.array(runSchema))
    .query(async ({ ctx }) => (await runs.listRuns(ctx.db, ctx.workspace.id, ctx.pipeline.id)).map(withRunStats)),
  get: workspaceProcedure("pipelines:read")
    .meta({ keyRestrictions: "enforced" })
    .meta({ rest: { method: "GET", path: "/runs/{runId}", summary: "A run's status, per-step stats and failures", tag: "Runs" } })
    .input(z.object({ runId: z.string() }))
    .output(runDetailSchema)
    .query(async ({ ctx, input }) => {
      const run = await runs.getRun(ctx.db, ctx.workspace.id, input.runId);
      assertRunPipelineAllowed(ctx, run);
      // A failure is an item of any scope, its raw response may quote it: a key limited to a scope lists none.
      return withRunStats(ctx.restrictions?.scopePrefix ? { ...run, failures: [] } : run);
    }),
  /** Failures grouped by step and identical error: count, attempts and one example each. */
  failureGroups: workspaceProcedure("pipelines:read")
    .input(z.object({ runId: z.string() }))
    .query(({ ctx, input }) => failureGroups(ctx.db, ctx.workspace.id, input.runId)),
  cancel: workspaceProcedure("runs:write")
    .meta({ keyRestrictions: "enforced" })
    .meta({ rest: { method: "POST", path: "/runs/{runId}/cancel", summary: "Ask a running run to stop", tag: "Runs" } })
    .meta({ audit: { action: "run.cancel", target: (input) => `run:${String(input.runId)}` } })
    .input(z.object({ runId: z.string() }))
    .output(z.object({ cancelling: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const run = await runs.getRun(ctx.db, ctx.workspace.id, input.runId);
      assertRunPipelineAllowed(ctx, run);
      assertRunAllowedToScopedKey(ctx.restrictions, { run, by: actorRef(ctx.actor) });
      return runs.cancelRun(ctx.db, ctx.workspace.id, input.runId);
    }),
});
