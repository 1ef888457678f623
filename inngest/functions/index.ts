/**
 * The functions the app serves at /api/inngest, wired to the app's database and models.
 * Tests build their own with `create*Function({ getDb, getModel })`.
 */
import { OfflineModel } from "../../server/llm/offline-model";
import { getDb } from "../../server/store/db";
import { createCancelFunction } from "./cancel";
import { createIncrementalRunFunction } from "./incremental";
import { createRunFunction } from "./run";

export { createCancelFunction } from "./cancel";
export { createIncrementalRunFunction, DEBOUNCE_KEY } from "./incremental";
export { createRunFunction } from "./run";

// The in-process runner's default model is the offline one too (executeRunRow); when provider
// settings land, both read them from the workspace here and in runs.ts.
const getModel = () => new OfflineModel();

export const runFunction = createRunFunction({ getDb, getModel });
export const incrementalRunFunction = createIncrementalRunFunction({ getDb });
export const cancelFunction = createCancelFunction({ getDb });

export const functions = [runFunction, incrementalRunFunction, cancelFunction];
