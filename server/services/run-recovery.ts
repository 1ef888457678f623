/**
 * Recovery sweeps: each long-lived server process of the local executor resumes the runs whose
 * server died (their lease expired) and ends the eval runs whose process stopped, every half a
 * lease. A run is resumed with the same lifecycle as a fresh one (runs.ts).
 */
import type { Db } from "../core/db";
import { claimRunLease, endExpiredEvalRuns, expiredRunLeases, processLeaseOwner, runLeaseMs } from "../store/run-lease";
import { trackBackground } from "./background";
import { executeRunRow, isExecutingHere, type ExecuteDeps } from "./runs";

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Resumes, in this process, the active runs whose lease expired (their server died mid-run) and
 * queued runs left unclaimed for a lease length (it died before starting them). Each is claimed
 * first, so two servers sweeping at once resume it once. Returns the run ids.
 */
export async function resumeExpiredRuns(db: Db, deps: ExecuteDeps = {}): Promise<string[]> {
  const owner = deps.lease?.owner ?? processLeaseOwner;
  const ttlMs = deps.lease?.ttlMs ?? runLeaseMs();
  const resumed: string[] = [];
  for (const runId of await expiredRunLeases(db, 10, ttlMs)) {
    if (isExecutingHere(runId)) continue; // alive here: its heartbeat was late, not its process dead
    if (!(await claimRunLease(db, runId, owner, ttlMs))) continue;
    resumed.push(runId);
    void trackBackground(
      executeRunRow(db, runId, { ...deps, lease: { owner, ttlMs } }).catch((err: unknown) =>
        console.error(`[synthex runs] resuming run ${runId} failed:`, message(err)),
      ),
    );
  }
  return resumed;
}

/**
 * Ends the eval runs whose process died (their lease expired) or that were queued and never started
 * for a lease length: failed (or cancelled, when a cancel was asked for) with the reason, so none
 * stays "running" forever. Unlike pipeline runs they are not resumed: an eval is cheap to run again.
 */
export async function endStalledEvalRuns(db: Db, ttlMs = runLeaseMs()) {
  return endExpiredEvalRuns(db, ttlMs);
}

/**
 * The sweeps above every `intervalMs` (default half a lease), in each long-lived server process
 * of the local executor (instrumentation.ts). Returns a stop function.
 */
export function startRunRecovery(getDb: () => Promise<Db>, intervalMs = Math.floor(runLeaseMs() / 2)): () => void {
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    getDb()
      .then(async (db) => {
        const evals = await endStalledEvalRuns(db);
        if (evals.length) console.log(`[synthex evals] ended ${evals.length} eval run(s) whose process stopped: ${evals.map((e) => `${e.id} ${e.status}`).join(", ")}`);
        return resumeExpiredRuns(db);
      })
      .then((ids) => {
        if (ids.length) console.log(`[synthex runs] resuming ${ids.length} run(s) whose server stopped: ${ids.join(", ")}`);
      })
      .catch((err: unknown) => console.error("[synthex runs] recovery sweep failed:", message(err)))
      .finally(() => (sweeping = false));
  }, intervalMs);
  timer.unref?.();
  return () => clearInterval(timer);
}
