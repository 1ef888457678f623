/**
 * What a phase of an eval (build, then score: build.ts, score.ts) works with: the run row, the
 * control of the lease it runs under (service.ts: progress, cancel checks), and what the build
 * phase hands to scoring.
 */
import type { Db } from "../core/db";

export type EvalRunRow = NonNullable<Awaited<ReturnType<Db["evalRun"]["findUnique"]>>>;

export interface EvalProgress {
  phase: "ingest" | "build" | "search" | "store";
  done: number;
  total: number;
}

/** What building an eval's memory hands to scoring it: plain data (an Inngest step's memoized output). */
export interface EvalBuilt {
  /** The pipeline run that built the eval copy (null for a question set: its memory is searched as it is). */
  buildRunId: string | null;
  sourcesAdded: number;
  /** The earlier pipeline run whose build this eval searched as it was (same spec, same sources): nothing was rebuilt. */
  reusedRunId?: string;
}

/** Given to a phase by the lease it runs under. */
export interface EvalControl {
  progress: (p: EvalProgress, force?: boolean) => void;
  checkCancel: () => Promise<void>;
  owner: string;
}
