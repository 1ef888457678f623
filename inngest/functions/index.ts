/**
 * The functions the app serves at /api/inngest, wired to the app's database and models.
 * Tests build their own with `create*Function({ getDb, getModel })`.
 */
import { workspaceModel } from "../../server/llm/workspace-model";
import { getDb } from "../../server/store/db";
import { createCancelFunction } from "./cancel";
import { createEvalFunction } from "./eval";
import { createIncrementalRunFunction } from "./incremental";
import { createRunFunction } from "./run";
import type { RunFunctionDeps } from "./run";

export { createCancelFunction } from "./cancel";
export { createEvalFunction } from "./eval";
export { createIncrementalRunFunction, DEBOUNCE_KEY } from "./incremental";
export { createRunFunction } from "./run";

// The same provider routing as the in-process runner (executeRunRow), minus the provider's own
// retries: transient errors fail the batch and Inngest retries it with its backoff.
const getModel: RunFunctionDeps["getModel"] = (run, db) => workspaceModel(db, run.workspaceId, { maxRetries: 0 });

export const runFunction = createRunFunction({ getDb, getModel });
export const incrementalRunFunction = createIncrementalRunFunction({ getDb });
export const cancelFunction = createCancelFunction({ getDb });
// Evals build and answer with the workspace's models, as the in-process path does.
export const evalFunction = createEvalFunction({ getDb, getModel: (run, db) => workspaceModel(db, run.workspaceId) });

export const functions = [runFunction, incrementalRunFunction, cancelFunction, evalFunction];
