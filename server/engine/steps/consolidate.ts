/**
 * consolidate: facts → a living memory set per scope (Mem0, Memex). For each new fact, in time
 * order within its scope, find the similar current memories (embedding + lexical), decide ADD /
 * UPDATE / DELETE / NONE (the model with structured output; offline, a deterministic rule) and
 * apply it. Nothing is erased: every decision is a record, each memory version points at the one
 * before it and at the fact that changed it, and a deleted memory keeps a tombstone.
 *
 * Records of one consolidate step `s` on a branch:
 * - pointed under `s` (group key = memory id): the current version of every active memory — what
 *   search and projections see;
 * - pointed under `s#deleted` (group key = memory id): the tombstone of every deleted memory (a
 *   person can list and restore them; search does not see them);
 * - not pointed: superseded versions, decisions that changed nothing (NONE), and one memory-set
 *   record per consolidated prefix of a scope (the resume point of the next run).
 *
 * Incrementality (DESIGN §1.3): a decision's key is (step, version, scope, fact, memory-set
 * fingerprint). A run resumes from the longest prefix of the scope's facts whose memory set is
 * stored; from there, a fact whose key exists replays its stored decision for free. A late fact
 * changes the memory set of the facts after it, so only that tail is decided again.
 */
import type { ConsolidateStep } from "../../pipeline/spec";
import { DEFAULT_MODEL, DEFAULT_ORDER_KEY } from "../../pipeline/spec";
import { sha256 } from "../../pipeline/hashing";
import { parseModelId } from "../../pipeline/model-id";
import {
  DecisionError,
  Similarity,
  decisionJsonSchema,
  offlineDecision,
  parseDecision,
  type Candidate,
  type ConsolidateEvent,
  type Decision,
} from "../consolidate-rule";
import { consolidateKey, consolidateSetKey } from "../keys";
import { crossesSlot, slotDecision } from "../state/decide";
import { parseState, type StateFact } from "../state/parse";
import { ModelError } from "../model";
import { inheritedMetadata, metadataAt, recordVars, type StepContext } from "../step-context";
import type { Audit, EngineRecord, NewRecord, OrderedRef } from "../types";
import { existingKeys, pageAfter, planCounts } from "./planned";
import type { StepKind, WorkItem } from "./step-kind";

/** Where a step's tombstones are pointed. */
export const deletedPointerStep = (step: string) => `${step}#deleted`;

/** What a memory version record says about its memory (`metadata.memory`). */
export interface MemoryMeta {
  id: string;
  version: number;
  event: ConsolidateEvent | "RESTORE";
  status: "active" | "deleted";
  /** The version this one supersedes. */
  previous: string | null;
  /** The fact that made this version (null for a restore by a person). */
  fact: string | null;
  reason: string;
  similarity?: number;
  /** The fact had no `time.created_at`: it was consolidated before the timed facts of its scope. */
  untimed?: boolean;
  /** Who restored it (RESTORE). */
  by?: string;
  /** Made by a person or an agent through the memory API (an edit or a deletion), not by a fact. */
  manual?: boolean;
  /** The slot the fact set or ended (subject, slot, value, polarity): what "now" questions rank by. */
  state?: StateFact;
}

/** One memory of a stored memory set (`metadata.consolidate.memories` of a set record). */
interface SetEntry {
  id: string;
  record: string;
  status: "active" | "deleted";
}

interface Memory {
  id: string;
  recordId: string;
  content: string;
  status: "active" | "deleted";
  version: number;
}

interface ScopeItem extends WorkItem {
  facts: OrderedRef[];
  /** Set keys of every prefix of `facts` (index i: the first i + 1 facts). */
  prefixKeys: string[];
}

const KEY_CHUNK = 1000;

export const memoryMetaOf = (r: { metadata: Record<string, unknown> }) => metadataAt(r.metadata, "memory") as MemoryMeta | undefined;

function memoryOf(r: EngineRecord): Memory | undefined {
  const m = memoryMetaOf(r);
  return m ? { id: m.id, recordId: r.id, content: r.content, status: m.status, version: m.version } : undefined;
}

/** The active memories, by id, with their current versions: what a decision's key depends on. */
function memorySetFingerprint(state: Map<string, Memory>): string {
  const parts = [...state.values()].filter((m) => m.status === "active").map((m) => `${m.id}=${m.recordId}`);
  return sha256(parts.sort().join("\n"));
}

function prefixKeysOf(ctx: StepContext<ConsolidateStep>, scope: string, facts: OrderedRef[]): string[] {
  let chain = "";
  return facts.map((f) => {
    chain = sha256(`${chain}\n${f.id}`);
    return consolidateSetKey(ctx.step.name, ctx.svh, scope, chain);
  });
}


/**
 * Versions a person made on this branch (restores, and edits or deletions through the memory API:
 * `memory.manual`), the newest of each memory, pointed as current or as its tombstone. Read once
 * for the scopes a run consolidates; read again when the run commits (`fresh`), so that a version
 * a person made while the run was going is what the branch keeps (issue 49).
 */
function restoresOf(ctx: StepContext<ConsolidateStep>, fresh = false) {
  const read = async () => {
    const byMemory = new Map<string, EngineRecord>();
    const { branchId } = ctx.run;
    const found = [
      ...(await ctx.store.pointedRecordsWhere(branchId, ctx.step.name, "memory.event", "RESTORE")),
      ...(await ctx.store.pointedRecordsWhere(branchId, ctx.step.name, "memory.manual", "true")),
      ...(await ctx.store.pointedRecordsWhere(branchId, deletedPointerStep(ctx.step.name), "memory.manual", "true")),
    ];
    for (const r of found) byMemory.set(memoryMetaOf(r)!.id, r);
    return byMemory;
  };
  return fresh ? read() : ctx.memo("restores", read);
}

/**
 * A person's version holds while the memory set still has the version it replaced (through a
 * chain of a person's versions: edit, then edit again): it replaces that version. (A later fact
 * that changes the memory starts from the person's version.)
 */
async function applyRestores(ctx: StepContext<ConsolidateStep>, state: Map<string, Memory>, fresh = false) {
  const restores = await restoresOf(ctx, fresh);
  for (const [id, r] of restores) {
    const current = state.get(id);
    if (!current) continue;
    let link: EngineRecord | undefined = r;
    for (let hops = 0; link && hops < 100; hops++) {
      const meta = memoryMetaOf(link)!;
      if (meta.previous === current.recordId) {
        state.set(id, memoryOf(r)!);
        break;
      }
      if (!meta.previous) break;
      const [previous] = await ctx.store.getRecords([meta.previous]);
      link = previous && (memoryMetaOf(previous)?.manual || memoryMetaOf(previous)?.event === "RESTORE") ? previous : undefined;
    }
  }
}

/** A fact the model could not decide on, after every attempt; facts after it wait. */
class DecisionFailure extends Error {
  constructor(
    message: string,
    readonly raw: string | null,
    readonly attempts: number,
  ) {
    super(message);
  }
}

/** The state a fact sets or ends: what the extractor read (`custom.state`, with its speaker), else the fact's own words. */
export function factState(fact: { content: string; metadata: Record<string, unknown> }): StateFact | null {
  const stored = metadataAt(fact.metadata, "custom.state") as StateFact | undefined;
  return stored && typeof stored === "object" && typeof stored.subject === "string" ? stored : parseState(fact.content);
}

async function decide(
  ctx: StepContext<ConsolidateStep>,
  fact: EngineRecord,
  candidates: Candidate<Memory>[],
  similarity: Similarity,
  active: Memory[],
): Promise<{ decision: Decision & { state?: StateFact }; audit: Audit }> {
  const { step } = ctx;
  // The offline model does not follow prompts: it decides with the deterministic rule — by slot
  // when the fact sets or ends one, else by sentence (never reaching a memory of another slot).
  if (parseModelId(step.model ?? DEFAULT_MODEL).provider === "offline") {
    const audit = { operator: `consolidate:offline-rule:${step.mode}` };
    const state = factState(fact);
    const bySlot = slotDecision(fact.content, state, active, step.mode);
    if (bySlot) return { decision: bySlot, audit };
    const decision = offlineDecision(fact.content, candidates, similarity, step.threshold, step.mode);
    const target = decision.memoryId ? active.find((m) => m.id === decision.memoryId) : undefined;
    if ((decision.event === "UPDATE" || decision.event === "DELETE") && target && crossesSlot(state, target.content)) {
      return { decision: { event: "ADD", text: fact.content, reason: `${decision.reason}; not applied: memory ${target.id} holds a slot this fact does not state` }, audit };
    }
    return { decision, audit };
  }
  const prompt = ctx.render({
    record: recordVars(fact),
    records: candidates.map((c) => ({ id: c.memory.id, content: c.memory.content, scope: fact.scope, metadata: { similarity: Number(c.similarity.toFixed(3)) } })),
    scope: fact.scope,
  });
  const attempts = Math.max(1, ctx.options.maxAttempts);
  let problem = "";
  let raw: string | null = null;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const result = await ctx.callModel("json", prompt, [fact], { jsonSchema: decisionJsonSchema(step.mode) });
      raw = result.audit.rawResponse ?? result.text;
      return { decision: parseDecision(result.text, candidates, step.mode), audit: result.audit };
    } catch (err) {
      if (err instanceof DecisionError) problem = err.message;
      else if (err instanceof ModelError && err.kind !== "permanent") {
        problem = err.message;
        raw = err.options.raw ?? null;
      } else throw err;
    }
  }
  throw new DecisionFailure(problem, raw, attempts);
}

/** Everything a memory set needs to go on from a version record (stored or new). */
function apply(state: Map<string, Memory>, record: { id: string; content: string; metadata: Record<string, unknown> }) {
  const m = memoryMetaOf(record);
  if (!m || m.event === "NONE") return;
  state.set(m.id, { id: m.id, recordId: record.id, content: record.content, status: m.status, version: m.version });
}

async function consolidateScope(ctx: StepContext<ConsolidateStep>, item: ScopeItem): Promise<NewRecord[]> {
  const { step, store } = ctx;
  const scope = item.id;
  const { facts, prefixKeys } = item;
  const state = new Map<string, Memory>();
  let start = 0;
  if (!ctx.options.full) {
    const found = await existingKeys(ctx, prefixKeys);
    for (let i = facts.length; i >= 1; i--) {
      const id = found.get(prefixKeys[i - 1]!);
      if (!id) continue;
      const [set] = await store.getRecords([id]);
      const entries = (metadataAt(set?.metadata, "consolidate.memories") ?? []) as SetEntry[];
      for (let j = 0; j < entries.length; j += KEY_CHUNK) {
        for (const r of await store.getRecords(entries.slice(j, j + KEY_CHUNK).map((e) => e.record))) {
          const memory = memoryOf(r);
          if (memory) state.set(memory.id, memory);
        }
      }
      start = i;
      break;
    }
  }
  await applyRestores(ctx, state);

  const similarity = new Similarity();
  const made: NewRecord[] = [];
  // Until a decision changes the memory set, a fact's key may already exist (a replayed prefix, or
  // a late fact that changed nothing); after that, the set contains new records and no key can.
  let diverged = ctx.options.full;
  let done = start;
  const decisions: Record<string, number> = {};
  outer: for (let pos = start; pos < facts.length; pos += ctx.options.batchSize) {
    await ctx.checkCancelled();
    const chunk = await store.getRecords(facts.slice(pos, pos + ctx.options.batchSize).map((f) => f.id));
    const byId = new Map(chunk.map((r) => [r.id, r]));
    for (const ref of facts.slice(pos, pos + ctx.options.batchSize)) {
      const fact = byId.get(ref.id);
      if (!fact) throw new Error(`consolidate "${step.name}": fact ${ref.id} is gone`);
      ctx.stats.input += 1;
      const key = consolidateKey(step.name, ctx.svh, scope, fact.id, memorySetFingerprint(state));
      if (!diverged) {
        const existing = (await store.existingKeys(ctx.run.pipelineId, [key])).get(key);
        if (existing) {
          const [stored] = await store.getRecords([existing]);
          if (stored) apply(state, stored);
          done += 1;
          continue;
        }
      }
      const active = [...state.values()].filter((m) => m.status === "active");
      const candidates = similarity.candidates(fact.content, active);
      let outcome: { decision: Decision & { state?: StateFact }; audit: Audit };
      try {
        outcome = await decide(ctx, fact, candidates, similarity, active);
      } catch (err) {
        if (!(err instanceof DecisionFailure)) throw err;
        ctx.stats.errors += 1;
        await store.recordFailure(ctx.run.runId, ctx.run.workspaceId, {
          step: step.name,
          inputKey: fact.id,
          error: `scope "${scope}", fact ${fact.id}: ${err.message} (after ${err.attempts} attempt${err.attempts === 1 ? "" : "s"}); the facts after it in this scope wait for the next run`,
          attempts: err.attempts,
          rawResponse: err.raw,
        });
        break outer;
      }
      const { decision, audit } = outcome;
      decisions[decision.event] = (decisions[decision.event] ?? 0) + 1;
      const target = decision.memoryId ? state.get(decision.memoryId) : undefined;
      const untimed = metadataAt(fact.metadata, DEFAULT_ORDER_KEY) === undefined;
      const memoryId = decision.event === "ADD" ? `mem-${sha256(`${step.name}\n${scope}\n${fact.id}`).slice(0, 16)}` : (target?.id ?? decision.memoryId ?? "");
      const meta: MemoryMeta = {
        id: memoryId,
        version: decision.event === "ADD" ? 1 : decision.event === "NONE" ? (target?.version ?? 0) : (target?.version ?? 0) + 1,
        event: decision.event,
        status: decision.event === "DELETE" ? "deleted" : "active",
        previous: decision.event === "ADD" ? null : (target?.recordId ?? null),
        fact: fact.id,
        reason: decision.reason,
        ...(candidates[0] ? { similarity: Number(candidates[0].similarity.toFixed(3)) } : {}),
        ...(untimed ? { untimed: true } : {}),
        ...(decision.state ? { state: decision.state } : {}),
      };
      const content = decision.event === "DELETE" ? (target?.content ?? fact.content) : decision.event === "NONE" ? fact.content : (decision.text ?? fact.content);
      const record = ctx.newRecord({
        workKey: key,
        materializationKey: key,
        content,
        scope,
        sources: target ? [fact.id, target.recordId] : [fact.id],
        groupKey: memoryId,
        metadata: { ...inheritedMetadata([fact]), memory: meta },
        audit,
        pointerStep: null,
      });
      made.push(record);
      if (decision.event !== "NONE") {
        apply(state, record);
        diverged = true;
      }
      done += 1;
    }
  }

  // Point the branch at what is current now; everything else this run made is history.
  for (const r of made) {
    const m = memoryMetaOf(r)!;
    const current = state.get(m.id);
    if (current?.recordId !== r.id) continue;
    r.pointerStep = current.status === "active" ? undefined : deletedPointerStep(step.name);
  }
  if (done > 0 && (made.length > 0 || done > start)) {
    const memories = [...state.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
    const active = memories.filter((m) => m.status === "active");
    const setKey = prefixKeys[done - 1]!;
    made.push(
      ctx.newRecord({
        workKey: setKey,
        materializationKey: setKey,
        content: active.length ? active.map((m) => `- ${m.content}`).join("\n") : "(no memories)",
        scope,
        sources: active.map((m) => m.recordId),
        groupKey: scope,
        metadata: {
          consolidate: {
            facts: done,
            memories: memories.map((m): SetEntry => ({ id: m.id, record: m.recordId, status: m.status })),
            decisions,
          },
        },
        audit: { operator: "consolidate:memory-set" },
        pointerStep: null,
      }),
    );
  }
  return made;
}

export const consolidateKind: StepKind<ConsolidateStep, ScopeItem> = {
  type: "consolidate",
  plan: async (ctx) => planCounts(ctx, await wanted(ctx), () => missing(ctx)),
  missing: async (ctx, page) => pageAfter(await missing(ctx), page),
  execute: consolidateScope,
  async commit(ctx) {
    const items = await wanted(ctx);
    const found = await existingKeys(ctx, items.flatMap((i) => i.prefixKeys));
    const setIds: string[] = [];
    const unset: string[] = [];
    for (const item of items) {
      const i = item.prefixKeys.findLastIndex((k) => found.has(k));
      if (i >= 0) setIds.push(found.get(item.prefixKeys[i]!)!);
      else unset.push(item.id);
    }
    const state = new Map<string, Memory>();
    // A scope whose first fact could not be decided has no memory set for its facts yet: it keeps
    // the memories the branch shows now rather than losing them.
    for (const scope of unset) {
      for (const pointerStep of [ctx.step.name, deletedPointerStep(ctx.step.name)]) {
        const refs = await ctx.store.orderedRefs(ctx.run.branchId, pointerStep, scope, DEFAULT_ORDER_KEY);
        for (const r of await ctx.store.getRecords(refs.map((x) => x.id))) {
          const memory = memoryOf(r);
          if (memory) state.set(memory.id, memory);
        }
      }
    }
    for (let i = 0; i < setIds.length; i += KEY_CHUNK) {
      for (const set of await ctx.store.getRecords(setIds.slice(i, i + KEY_CHUNK))) {
        for (const e of (metadataAt(set.metadata, "consolidate.memories") ?? []) as SetEntry[]) {
          state.set(e.id, { id: e.id, recordId: e.record, status: e.status, content: "", version: 0 });
        }
      }
    }
    await applyRestores(ctx, state, true);
    const pointers = (status: Memory["status"]) =>
      [...state.values()].filter((m) => m.status === status).map((m) => ({ groupKey: m.id, recordId: m.recordId }));
    await ctx.store.syncPointers(ctx.run.branchId, ctx.step.name, pointers("active"));
    await ctx.store.syncPointers(ctx.run.branchId, deletedPointerStep(ctx.step.name), pointers("deleted"));
  },
  // A new fact changes its scope's memory set: at most one scope per new upstream record.
  estimate: ({ pending, upstreamPending }) => Math.max(pending, upstreamPending),
};

function wanted(ctx: StepContext<ConsolidateStep>) {
  return ctx.memo("wanted", async () => {
    const items: ScopeItem[] = [];
    for (const scope of (await ctx.store.scopesOf(ctx.run.branchId, ctx.step.from)).sort()) {
      // Facts without a time sort first (the store's order: NULLS FIRST, then the content key).
      const facts = await ctx.store.orderedRefs(ctx.run.branchId, ctx.step.from, scope, DEFAULT_ORDER_KEY);
      // Stats count the facts decided (fewer when resuming), not the scopes.
      items.push({ id: scope, facts, prefixKeys: prefixKeysOf(ctx, scope, facts), inputs: 0 });
    }
    return items;
  });
}

function missing(ctx: StepContext<ConsolidateStep>) {
  return ctx.memo("missing", async () => {
    const items = await wanted(ctx);
    const found = await existingKeys(ctx, items.map((i) => i.prefixKeys.at(-1)!));
    return items.filter((i) => !found.has(i.prefixKeys.at(-1)!));
  });
}
