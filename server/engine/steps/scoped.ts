/**
 * Planning shared by the graph kinds (entities, relations, insights): a work item is one scope,
 * computed from every input record of that scope at once (entity resolution, supersession and
 * contradictions are questions about the whole scope).
 *
 * - wanted: one item per scope of the inputs; its key is the scope's *manifest* key, made of the
 *   ids and content fingerprints of all its input records. An unchanged scope is not missing: a
 *   second run of an unchanged spec makes no records and no model calls.
 * - execute: the kind builds the scope's records; each gets a key from what it is (group, content,
 *   structured data, sources), so a record that did not change is reused, not made again. The
 *   manifest (not pointed, no provenance) lists the group key and key of every record.
 * - commit: the branch points at exactly the records the manifests list. A scope whose new
 *   manifest failed keeps the records the branch showed before.
 */
import { canonicalJson, sha256 } from "../../pipeline/hashing";
import { scopeManifestKey, scopedRecordKey } from "../keys";
import { metadataAt, type StepContext } from "../step-context";
import type { Audit, EngineRecord, Metadata, NewRecord } from "../types";
import { existingKeys, pageAfter, planCounts } from "./planned";
import { inputsOf, type StepDefinition, type StepKind, type WorkItem } from "./step-kind";

const ORDER_KEY = "time.created_at";
const READ_CHUNK = 1000;

export interface ScopeItem extends WorkItem {
  /** The manifest key. */
  key: string;
  /** Input record ids per input step, in time order. */
  refs: Array<{ step: string; ids: string[] }>;
}

/** One record a graph kind makes for a scope. */
export interface ScopedOutput {
  groupKey: string;
  content: string;
  metadata: Metadata;
  sources: string[];
  audit?: Audit;
}

/** The records of a scope's inputs, per input step, in time order. */
export type ScopeInputs = Array<{ step: string; records: EngineRecord[] }>;

interface ManifestEntry {
  /** Pointer group key. */
  g: string;
  /** Materialization key. */
  k: string;
}

export function scopedKind<S extends StepDefinition>(def: {
  type: string;
  /**
   * The scope's records, from all its input records. `extra`: records to commit beside them that
   * the branch does not point at (e.g. a model's stored answer per input record).
   */
  build(ctx: StepContext<S>, scope: string, inputs: ScopeInputs, extra: NewRecord[]): Promise<ScopedOutput[]>;
  /** The pointer group key of one of the step's records (to keep a failed scope's records). */
  groupKeyOf(record: EngineRecord): string | undefined;
}): StepKind<S, ScopeItem> {
  const wanted = (ctx: StepContext<S>) =>
    ctx.memo("wanted", async () => {
      const steps = inputsOf(ctx.step);
      const scopes = new Set<string>();
      for (const step of steps) for (const s of await ctx.store.scopesOf(ctx.run.branchId, step)) scopes.add(s);
      const items: ScopeItem[] = [];
      for (const scope of [...scopes].sort()) {
        const refs: ScopeItem["refs"] = [];
        const lines: string[] = [];
        for (const step of steps) {
          const ordered = await ctx.store.orderedRefs(ctx.run.branchId, step, scope, ORDER_KEY);
          refs.push({ step, ids: ordered.map((r) => r.id) });
          for (const r of ordered) lines.push(`${step}\t${r.id}\t${r.contentFingerprint}`);
        }
        const inputs = refs.reduce((n, r) => n + r.ids.length, 0);
        items.push({ id: scope, key: scopeManifestKey(def.type, ctx.step.name, ctx.svh, scope, sha256(lines.join("\n"))), refs, inputs });
      }
      return items;
    });
  const missing = (ctx: StepContext<S>) =>
    ctx.memo("missing", async () => {
      const items = await wanted(ctx);
      if (ctx.options.full) return items;
      const found = await existingKeys(ctx, items.map((i) => i.key));
      return items.filter((i) => !found.has(i.key));
    });

  return {
    type: def.type,
    plan: async (ctx) => planCounts(ctx, await wanted(ctx), () => missing(ctx)),
    missing: async (ctx, page) => pageAfter(await missing(ctx), page),
    async execute(ctx, item) {
      const inputs: ScopeInputs = [];
      for (const ref of item.refs) {
        const records: EngineRecord[] = [];
        for (let i = 0; i < ref.ids.length; i += READ_CHUNK) {
          await ctx.checkCancelled();
          const chunk = ref.ids.slice(i, i + READ_CHUNK);
          const byId = new Map((await ctx.store.getRecords(chunk)).map((r) => [r.id, r]));
          for (const id of chunk) {
            const r = byId.get(id);
            if (r) records.push(r);
          }
        }
        inputs.push({ step: ref.step, records });
      }
      const made: NewRecord[] = [];
      const outputs = await def.build(ctx, item.id, inputs, made);
      const keyed = outputs.map((o) => ({
        o,
        key: scopedRecordKey(def.type, ctx.step.name, ctx.svh, item.id, o.groupKey, sha256(canonicalJson([o.content, o.metadata, o.sources]))),
      }));
      const existing = ctx.options.full ? new Map<string, string>() : await existingKeys(ctx, keyed.map((k) => k.key));
      for (const { o, key } of keyed) {
        if (existing.has(key)) continue; // unchanged: the stored record is pointed at commit
        made.push(
          ctx.newRecord({
            workKey: item.key,
            materializationKey: key,
            content: o.content,
            scope: item.id,
            sources: o.sources,
            groupKey: o.groupKey,
            metadata: o.metadata,
            audit: o.audit ?? { operator: def.type },
            // Pointers are set at commit from the manifests, once every scope is done.
            pointerStep: null,
          }),
        );
      }
      const entries: ManifestEntry[] = keyed.map(({ o, key }) => ({ g: o.groupKey, k: key }));
      made.push(
        ctx.newRecord({
          workKey: item.key,
          materializationKey: item.key,
          content: `${ctx.step.name}: ${entries.length} record${entries.length === 1 ? "" : "s"} for scope ${item.id} from ${item.inputs ?? 0} input records`,
          scope: item.id,
          sources: [],
          groupKey: `${item.id}\u001fmanifest`,
          metadata: { graph: { manifest: entries } },
          audit: { operator: `${def.type}:manifest` },
          pointerStep: null,
        }),
      );
      return made;
    },
    async commit(ctx) {
      const items = await wanted(ctx);
      const found = await existingKeys(ctx, items.map((i) => i.key));
      const entries: ManifestEntry[] = [];
      const keep: string[] = [];
      const manifestIds = items.filter((i) => found.has(i.key)).map((i) => found.get(i.key)!);
      for (let i = 0; i < manifestIds.length; i += READ_CHUNK) {
        for (const manifest of await ctx.store.getRecords(manifestIds.slice(i, i + READ_CHUNK))) {
          entries.push(...((metadataAt(manifest.metadata, "graph.manifest") ?? []) as ManifestEntry[]));
        }
      }
      // A scope without a manifest for its current inputs (its work failed) keeps what it showed.
      for (const item of items.filter((i) => !found.has(i.key))) {
        const refs = await ctx.store.orderedRefs(ctx.run.branchId, ctx.step.name, item.id, ORDER_KEY);
        for (let i = 0; i < refs.length; i += READ_CHUNK) {
          for (const r of await ctx.store.getRecords(refs.slice(i, i + READ_CHUNK).map((x) => x.id))) {
            const g = def.groupKeyOf(r);
            if (g) keep.push(g);
          }
        }
      }
      const ids = await existingKeys(ctx, entries.map((e) => e.k));
      await ctx.store.syncPointers(
        ctx.run.branchId,
        ctx.step.name,
        entries.filter((e) => ids.has(e.k)).map((e) => ({ groupKey: e.g, recordId: ids.get(e.k)! })),
        keep,
      );
    },
    // New input records change at most their scopes.
    estimate: ({ pending, total, upstreamPending }) => Math.max(pending, Math.min(upstreamPending, Math.max(total, 1))),
  };
}
