/**
 * Records as the engine sees them and the `RecordStore` port it drives (server/store/record-store.ts
 * implements it with Postgres). Pure types: nothing here imports Prisma, Next or an SDK.
 */
import type { GroupBy } from "../pipeline/spec";

export type Metadata = Record<string, unknown>;

export interface Audit {
  promptTemplateHash?: string;
  renderedPromptHash?: string;
  /** The prompt as sent (templates rendered with the inputs), cut at RENDERED_PROMPT_LIMIT characters. */
  renderedPrompt?: string;
  model?: string;
  temperature?: number;
  rawResponse?: string;
  tokensIn?: number;
  tokensOut?: number;
  costUsd?: number;
  latencyMs?: number;
  operator?: string;
  replayed?: boolean;
  /**
   * One of several records made by one model call (a split's items): the call's prompt, response,
   * tokens, cost and latency are stored once, on the work item's first record (`meta.step.index`
   * 0, the same `workKey`), not copied into every item (a session's facts each carried the whole
   * response: quadratic in the session's length). Readers resolve it (`sharedCallAudit`).
   */
  sharedCall?: { index: number; of: number };
  /** This record's own part of a shared call's response (its element of the model's list, as JSON). */
  responseItem?: string;
}

export interface EngineRecord {
  id: string;
  step: string;
  content: string;
  contentFingerprint: string;
  scope: string;
  metadata: Metadata;
  createdAt: Date;
}

/** One record to commit, with its provenance and the branch pointer that makes it visible. */
export interface NewRecord {
  id: string;
  step: string;
  stepVersionHash: string;
  workKey: string;
  materializationKey: string;
  content: string;
  contentFingerprint: string;
  scope: string;
  metadata: Metadata;
  audit: Audit | null;
  /** Parent record ids, in order. */
  sources: string[];
  groupKey: string;
  runId?: string | null;
  /**
   * The step the branch pointer is filed under (default: `step`); null: no pointer at all (the
   * record is history only: a superseded memory version, a decision that changed nothing).
   */
  pointerStep?: string | null;
}

export interface StepScope {
  workspaceId: string;
  pipelineId: string;
  branchId: string;
  step: string;
  stepVersionHash: string;
}

export interface Group {
  scope: string;
  groupKey: string;
  size: number;
  combinedFingerprint: string;
}

export interface OrderedRef {
  id: string;
  contentFingerprint: string;
}

export interface Checkpoint {
  position: number;
  prefixFingerprint: string;
  state: string;
}

export interface RunFailureInput {
  step: string;
  inputKey: string;
  error: string;
  attempts: number;
  rawResponse?: string | null;
}

export interface RecordStore {
  /** Upstream records (on the branch) whose 1:1 / 1:N work item has no record yet. Keyset-paged by id. */
  missingOneToOne(s: StepScope, upstream: string, page: { afterId?: string; limit: number }): Promise<EngineRecord[]>;
  countMissingOneToOne(s: StepScope, upstream: string): Promise<number>;
  /**
   * 1:1 steps: true when every upstream record has exactly one pointer to a current record of this
   * step and nothing else is pointed at (then reconciling would change nothing).
   */
  inSyncOneToOne(s: StepScope, upstream: string): Promise<boolean>;
  /** Point the branch at every existing record for wanted work keys; drop pointers nothing wants. */
  reconcileOneToOne(s: StepScope, upstream: string): Promise<{ pointed: number; removed: number }>;

  /** Aggregate groups of the upstream step on the branch, with their combined input fingerprints. */
  planGroups(s: StepScope, upstream: string, groupBy: GroupBy, orderKey: string): Promise<Group[]>;
  groupMembers(s: StepScope, upstream: string, groupBy: GroupBy, orderKey: string, group: Group): Promise<EngineRecord[]>;

  /** Distinct scopes of a step on a branch. */
  scopesOf(branchId: string, step: string): Promise<string[]>;
  /** The upstream step's records in one scope, totally ordered by orderKey then id. */
  orderedRefs(branchId: string, step: string, scope: string, orderKey: string): Promise<OrderedRef[]>;
  /** Light rows of several steps for merge planning (no content). */
  mergeCandidates(
    branchId: string,
    steps: string[],
    fields: string[],
  ): Promise<Array<{ id: string; step: string; contentFingerprint: string; createdAt: string | null; fields: string[] }>>;

  getRecords(ids: string[]): Promise<EngineRecord[]>;
  /** materializationKey -> record id for the keys that exist in this pipeline. */
  existingKeys(pipelineId: string, keys: string[]): Promise<Map<string, string>>;
  /**
   * Full rebuild: move the step's existing records (and fold checkpoints) off their keys so new
   * ones can take them. Content stays; other branches keep pointing at the old records.
   */
  retireStep(pipelineId: string, step: string, stepVersionHash: string): Promise<void>;

  /** Records, edges and pointers of a batch of work items, in one transaction; an existing key is reused. */
  commit(branchId: string, records: NewRecord[]): Promise<void>;
  /** Make the step's pointers exactly these (upsert + delete the rest, except the `keep` group keys). */
  syncPointers(
    branchId: string,
    step: string,
    pointers: Array<{ groupKey: string; recordId: string }>,
    keep?: string[],
  ): Promise<void>;
  countPointers(branchId: string, step: string): Promise<number>;
  /** Records the branch points at under `step` whose metadata at `path` equals `value`. */
  pointedRecordsWhere(branchId: string, step: string, path: string, value: string): Promise<EngineRecord[]>;

  getCheckpoints(pipelineId: string, stepVersionHash: string, scope: string, prefixFingerprints: string[]): Promise<Checkpoint[]>;
  putCheckpoint(s: StepScope, scope: string, checkpoint: Checkpoint): Promise<void>;

  /** Replay: a stored response for this rendered prompt, if any record has one. */
  findResponse(workspaceId: string, renderedPromptHash: string): Promise<Audit | null>;

  recordFailure(runId: string, workspaceId: string, failure: RunFailureInput): Promise<void>;
  isCancelled(runId: string): Promise<boolean>;
}
