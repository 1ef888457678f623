/**
 * entities (Synapsis): one record per resolved entity of a scope, with its canonical name,
 * aliases, type and mentions (`metadata.custom.entity`), pointed under `<scope>\u001f<entity id>` (Postgres text holds no NUL),
 * with provenance to the input records that mention it (the newest 200).
 *
 * Offline (no prompt, or the offline model): speaker names, capitalised names and the spec's
 * dictionary (server/engine/entity-extract.ts). With a prompt and a model: the model lists each
 * record's entities as structured output; its answer is stored once per input record (a record
 * the branch does not point at), so a scope that grows asks the model about new records only.
 * Either way the mentions are resolved per scope the same way (Mel → Melanie).
 */
import { DEFAULT_MODEL, ENTITY_TYPES, type EntitiesStep, type EntityType } from "../../pipeline/spec";
import { parseModelId } from "../../pipeline/model-id";
import { dictionaryIndex, entityCard, extractMentions, lowercaseWords, resolveEntities, turnsOf, type EntityMeta, type Mention, type MentionSource } from "../entity-extract";
import { scopedRecordKey } from "../keys";
import { ModelError } from "../model";
import { metadataAt, recordVars, type StepContext } from "../step-context";
import type { EngineRecord, NewRecord } from "../types";
import { existingKeys } from "./planned";
import { scopedKind, type ScopedOutput } from "./scoped";

/** Provenance parents kept per entity (the newest), so a speaker of 10,000 turns stays cheap. */
export const ENTITY_SOURCE_CAP = 200;

/** Pointer group key of an entity record. */
export const entityGroupKey = (scope: string, entityId: string) => `${scope}\u001f${entityId}`;

/** The structured output asked of a model. */
export const ENTITIES_SCHEMA = {
  type: "object",
  required: ["entities"],
  properties: {
    entities: {
      type: "array",
      items: {
        type: "object",
        required: ["name", "type"],
        properties: {
          name: { type: "string", description: "the name as written" },
          type: { type: "string", enum: [...ENTITY_TYPES] },
          aliases: { type: "array", items: { type: "string" }, description: "other names the text uses for it" },
        },
      },
    },
  },
} as const;

const timeOf = (r: EngineRecord) => {
  const t = metadataAt(r.metadata, "time.created_at");
  return typeof t === "string" ? t : null;
};

function parseModelEntities(text: string): Mention[] {
  const parsed: unknown = JSON.parse(text);
  const list = Array.isArray(parsed) ? parsed : (parsed as { entities?: unknown } | null)?.entities;
  if (!Array.isArray(list)) throw new ModelError(`The model's answer has no "entities" list.`, { raw: text });
  const out: Mention[] = [];
  for (const e of list) {
    const name = typeof e === "string" ? e : typeof (e as { name?: unknown })?.name === "string" ? (e as { name: string }).name : "";
    if (!name.trim()) continue;
    const rawType = (e as { type?: unknown })?.type;
    const type = (ENTITY_TYPES as readonly string[]).includes(rawType as string) ? (rawType as EntityType) : null;
    out.push({ surface: name.trim(), type });
    const aliases = (e as { aliases?: unknown })?.aliases;
    if (Array.isArray(aliases)) for (const a of aliases) if (typeof a === "string" && a.trim()) out.push({ surface: a.trim(), type, canonical: name.trim() });
  }
  return out;
}

/** Mentions of every input record from the model: stored answers reused, new records asked. */
async function modelMentions(ctx: StepContext<EntitiesStep>, records: EngineRecord[], cache: NewRecord[]): Promise<Map<string, Mention[]>> {
  const keyOf = (r: EngineRecord) => scopedRecordKey("entities-mentions", ctx.step.name, ctx.svh, r.scope, r.id, r.contentFingerprint);
  const found = ctx.options.full ? new Map<string, string>() : await existingKeys(ctx, records.map(keyOf));
  const stored = new Map((await ctx.store.getRecords([...found.values()])).map((r) => [r.id, r]));
  const out = new Map<string, Mention[]>();
  for (const r of records) {
    const hit = found.get(keyOf(r));
    const cached = hit ? (metadataAt(stored.get(hit)?.metadata, "custom.mentions") as Mention[] | undefined) : undefined;
    if (cached) {
      out.set(r.id, cached);
      continue;
    }
    const prompt = ctx.render({ record: recordVars(r), records: [recordVars(r)], scope: r.scope });
    const result = await ctx.callModel("json", prompt, [r], { jsonSchema: ctx.step.output ?? ENTITIES_SCHEMA });
    // Speakers are people whatever the model says.
    const mentions = [...turnsOf(r.content).filter((t) => t.speaker).map((t): Mention => ({ surface: t.speaker!, type: "person", speaker: true })), ...parseModelEntities(result.text)];
    out.set(r.id, mentions);
    cache.push(
      ctx.newRecord({
        workKey: keyOf(r),
        materializationKey: keyOf(r),
        content: mentions.map((m) => m.surface).join(", ") || "(no entities)",
        scope: r.scope,
        sources: [r.id],
        groupKey: `${r.id}\u001fmentions`,
        metadata: { custom: { mentions } },
        audit: result.audit,
        pointerStep: null,
      }),
    );
  }
  return out;
}

const usesModel = (step: EntitiesStep) => typeof step.prompt === "string" && parseModelId(step.model ?? DEFAULT_MODEL).provider !== "offline";

export const entitiesKind = scopedKind<EntitiesStep>({
  type: "entities",
  groupKeyOf: (r) => {
    const id = metadataAt(r.metadata, "custom.entity.id");
    return typeof id === "string" ? entityGroupKey(r.scope, id) : undefined;
  },
  async build(ctx, scope, inputs, extra) {
    const dictionary = dictionaryIndex(ctx.step.dictionary);
    const records = inputs.flatMap((i) => i.records);
    let mentionsOf: (r: EngineRecord) => Mention[];
    if (usesModel(ctx.step)) {
      const byRecord = await modelMentions(ctx, records, extra);
      mentionsOf = (r) => byRecord.get(r.id) ?? [];
    } else {
      mentionsOf = (r) => extractMentions(r.content, dictionary);
    }
    const sources: MentionSource[] = records.map((r) => ({ recordId: r.id, time: timeOf(r), mentions: mentionsOf(r) }));
    const entities = resolveEntities(scope, sources, dictionary, { lowercaseWords: lowercaseWords(records.map((r) => r.content)) });
    return entities.map((e): ScopedOutput => {
      const { sources: mentionedIn, ...entity } = e;
      return {
        groupKey: entityGroupKey(scope, e.id),
        content: entityCard(entity),
        metadata: { ...(entity.lastSeen ? { time: { created_at: entity.lastSeen } } : {}), custom: { entity } },
        sources: mentionedIn.slice(-ENTITY_SOURCE_CAP),
        audit: { operator: usesModel(ctx.step) ? `entities:model-resolve` : "entities:offline" },
      };
    });
  },
});

/** The entity of an entity record (`metadata.custom.entity`). */
export function entityOf(r: { metadata: Record<string, unknown> }) {
  return metadataAt(r.metadata, "custom.entity") as EntityMeta | undefined;
}
