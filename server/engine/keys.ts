/**
 * Materialization keys (DESIGN.md §1.3). They never contain the branch: any branch that wants
 * the same key points at the same record.
 */
import { canonicalJson, sha256 } from "../pipeline/hashing";

const key = (parts: unknown[]) => sha256(canonicalJson(parts));

/** Work key of a 1:1 or 1:N item: readable so plans can build it in SQL (`svh || ':' || input id`). */
export const oneToOneWorkKey = (stepVersionHash: string, inputRecordId: string) => `${stepVersionHash}:${inputRecordId}`;

export const transformKey = (stepVersionHash: string, inputRecordId: string) => oneToOneWorkKey(stepVersionHash, inputRecordId);

export const splitKey = (stepVersionHash: string, inputRecordId: string, index: number) =>
  `${oneToOneWorkKey(stepVersionHash, inputRecordId)}#${index}`;

export const aggregateKey = (step: string, stepVersionHash: string, scope: string, groupKey: string, combinedFingerprint: string) =>
  key(["aggregate", step, stepVersionHash, scope, groupKey, combinedFingerprint]);

export const foldKey = (step: string, stepVersionHash: string, scope: string, sequenceFingerprint: string) =>
  key(["fold", step, stepVersionHash, scope, sequenceFingerprint]);

/** The chosen record is part of the key: a later duplicate that wins the conflict is a new record. */
export const mergeKey = (step: string, stepVersionHash: string, dedupeKey: string, chosenRecordId: string) =>
  key(["merge", step, stepVersionHash, dedupeKey, chosenRecordId]);

/** `ownScope`: the item's scope when it is not the source's own (one file or API call may hold many users). */
export const sourceKey = (source: string, stepVersionHash: string, externalId: string, contentFingerprint: string, ownScope?: string) =>
  key(["source", source, stepVersionHash, externalId, contentFingerprint, ...(ownScope === undefined ? [] : [ownScope])]);

/** Fingerprint of an ordered sequence (fold) or a sorted set (aggregate) of content fingerprints. */
export const sequenceFingerprint = (fingerprints: string[]) => sha256(fingerprints.join("\n"));

/** Pointer group key of an aggregate group or fold scope: one record per group on a branch. */
export const scopedGroupKey = (scope: string, groupKey: string) => `${scope}\u001f${groupKey}`;

/**
 * One consolidate decision: the fact and the memory set it was decided against. A late fact
 * changes the memory set of every fact after it in its scope, so only that tail is decided again.
 */
export const consolidateKey = (step: string, stepVersionHash: string, scope: string, factRecordId: string, memorySetFingerprint: string) =>
  key(["consolidate", step, stepVersionHash, scope, factRecordId, memorySetFingerprint]);

/** A scope's memory set after consolidating exactly this sequence of facts (by record id). */
export const consolidateSetKey = (step: string, stepVersionHash: string, scope: string, factSequenceFingerprint: string) =>
  key(["consolidate-set", step, stepVersionHash, scope, factSequenceFingerprint]);

/** A memory restored by a person: one restore per tombstone. */
export const restoreKey = (step: string, tombstoneRecordId: string) => key(["restore", step, tombstoneRecordId]);

/** A memory edited or deleted through the memory API: one revision per version and change. */
export const reviseKey = (step: string, versionRecordId: string, event: string, content: string) => key(["revise", step, versionRecordId, event, content]);

/**
 * Graph steps (entities, relations, insights) work per scope: the scope's records are computed
 * together from every input record of the scope. The scope's manifest (what the step made of
 * exactly these inputs) is keyed by the inputs' ids and fingerprints...
 */
export const scopeManifestKey = (type: string, step: string, stepVersionHash: string, scope: string, inputsFingerprint: string) =>
  key([`${type}-manifest`, step, stepVersionHash, scope, inputsFingerprint]);

/** ...and each record it lists by what it is: its group, content, structured data and sources (unchanged → reused). */
export const scopedRecordKey = (type: string, step: string, stepVersionHash: string, scope: string, groupKey: string, material: string) =>
  key([type, step, stepVersionHash, scope, groupKey, material]);
