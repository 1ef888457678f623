/**
 * What every run does when it ends, whichever executor ran it: index for search what changed on
 * the branch since its last index pass (server/search/indexing.ts; what a crashed run left is in
 * that window too), then notice projection changes and deliver their webhooks.
 */
import { trackBackground } from "./background";
import type { Db } from "../core/db";
import { indexPipeline, type IndexResult } from "../search/indexing";
import { detectProjectionChanges } from "./projections";
import { deliverPending } from "./webhooks";

export interface FinishedRun {
  id: string;
  workspaceId: string;
  pipelineId: string;
  branchId: string;
  status?: string;
}

export interface AfterRunOptions {
  /** "background" (default): deliver webhooks without waiting; "await": wait; "none": only enqueue. */
  deliver?: "background" | "await" | "none";
}

/**
 * Call at the end of every run (also failed/cancelled ones: what was committed is real).
 * Never throws: indexing or webhook problems are logged, they do not fail the run.
 */
export async function afterRun(db: Db, run: FinishedRun, options: AfterRunOptions = {}) {
  const out: { indexed: IndexResult | null; enqueued: number; errors: string[] } = { indexed: null, enqueued: 0, errors: [] };
  try {
    const branch = await db.branch.findUnique({ where: { id: run.branchId }, select: { name: true } });
    if (!branch) return out;
    try {
      out.indexed = await indexPipeline(db, run.pipelineId, branch.name, { workspaceId: run.workspaceId });
    } catch (err) {
      out.errors.push(`indexing: ${(err as Error).message}`);
    }
    try {
      out.enqueued = (await detectProjectionChanges(db, run.pipelineId, branch.name)).enqueued;
    } catch (err) {
      out.errors.push(`projections: ${(err as Error).message}`);
    }
    if (out.enqueued > 0 && options.deliver !== "none") {
      const delivering = trackBackground(deliverPending(db).catch((err: Error) => console.error("[synthex webhooks]", err.message)));
      if (options.deliver === "await") await delivering;
    }
  } catch (err) {
    out.errors.push((err as Error).message);
  }
  for (const e of out.errors) console.error(`[synthex afterRun ${run.id}] ${e}`);
  return out;
}
