/**
 * `synthex/source.appended` → a debounced incremental run of that pipeline branch. Pushes that
 * arrive within the debounce period collapse into one run; the run itself goes through the run
 * function (so workspace/provider concurrency and throttling apply), and being incremental it
 * computes only the work the new records created.
 */
import { DomainError } from "../../server/core/errors";
import { createRun } from "../../server/services/runs";
import { providerKeyOf } from "../../server/services/executor";
import { storedSpec } from "../../server/store/pipelines";
import { NonRetriableError } from "inngest";
import { inngest as defaultClient } from "../client";
import { runRequested, sourceAppended } from "../events";
import { flowControl, INCREMENTAL_FUNCTION_ID } from "../flow-control";
import type { RunFunctionDeps } from "./run";

export interface CreateIncrementalFunctionOptions {
  getDb: RunFunctionDeps["getDb"];
  client?: typeof defaultClient;
  /** How often to look again while another run holds the branch (default 1m, up to `maxWaits` times). */
  waitPeriod?: `${number}s` | `${number}m`;
  maxWaits?: number;
}

export const DEBOUNCE_KEY = 'event.data.pipelineId + ":" + event.data.branch';

export function createIncrementalRunFunction({ client = defaultClient, getDb, waitPeriod = "1m", maxWaits = 60 }: CreateIncrementalFunctionOptions) {
  return client.createFunction(
    {
      id: INCREMENTAL_FUNCTION_ID,
      name: "Synthex: incremental run after new source records",
      triggers: [{ event: sourceAppended }],
      debounce: { key: DEBOUNCE_KEY, ...flowControl.debounce },
      retries: flowControl.retries,
    },
    async ({ event, step }) => {
      const { workspaceId, pipelineId, branch } = event.data;
      for (let i = 0; i <= maxWaits; i++) {
        const created = await step.run(`create-run:${i}`, async () => {
          const db = await getDb();
          try {
            const run = await createRun(db, { workspaceId, pipelineId, branch, triggeredBy: "source.appended", auditTrigger: "new source records (ingest or import)" });
            const version = await db.pipelineVersion.findUniqueOrThrow({ where: { id: run.versionId } });
            return { runId: run.id, provider: providerKeyOf(storedSpec(version)) };
          } catch (err) {
            // CONFLICT: another run holds the branch.
            if (err instanceof DomainError && err.code === "CONFLICT") return { busy: err.message };
            if (err instanceof DomainError) throw new NonRetriableError(err.message);
            throw err;
          }
        });
        if ("runId" in created) {
          await step.sendEvent("request-run", runRequested.create({ runId: created.runId, workspaceId, provider: created.provider }));
          return { runId: created.runId };
        }
        // Another run holds the branch: wait for it, then run what is still missing.
        if (i < maxWaits) await step.sleep(`wait:${i}`, waitPeriod);
      }
      return { skipped: `a run stayed in progress on ${pipelineId}/${branch}; the next push or run picks the records up` };
    },
  );
}
