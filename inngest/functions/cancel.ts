/**
 * `synthex/run.cancelled`: the run function stops through its `cancelOn`; this marks the Run row
 * (and sets the flag the engine checks between batches, for a batch already executing).
 */
import { inngest as defaultClient } from "../client";
import { runCancelled } from "../events";
import { CANCEL_FUNCTION_ID } from "../flow-control";
import { markRunCancelled } from "../../server/services/runs";
import type { RunFunctionDeps } from "./run";

export function createCancelFunction({ client = defaultClient, getDb }: { getDb: RunFunctionDeps["getDb"]; client?: typeof defaultClient }) {
  return client.createFunction(
    { id: CANCEL_FUNCTION_ID, name: "Synthex: mark a run cancelled", triggers: [{ event: runCancelled }] },
    async ({ event, step }) => {
      return step.run("mark-cancelled", async () => {
        const db = await getDb();
        await db.run.updateMany({ where: { id: event.data.runId }, data: { cancelRequested: true } });
        await markRunCancelled(db, event.data.runId);
        return { runId: event.data.runId };
      });
    },
  );
}
