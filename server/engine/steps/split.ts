/** split: 1 → N (chunks, facts, observations, entities); output records carry `meta.step.index`. */
import type { SplitStep } from "../../pipeline/spec";
import { oneToOneWorkKey, splitKey } from "../keys";
import { ModelError } from "../model";
import { applySplitOperator, type SplitPart } from "../operators";
import { inheritedMetadata, recordVars } from "../step-context";
import type { Audit } from "../types";
import { oneToOnePlanning, type InputItem } from "./one-to-one";
import type { StepKind } from "./step-kind";

/**
 * One item of a model's list: a string, or a fact with where it came from (`{"fact", "speaker",
 * "turn"}`, what the offline extractor answers for a conversation: the speaker and the 1-based turn
 * are kept under `custom`); any other value is kept as its JSON text.
 */
function listItem(p: unknown): string | SplitPart {
  if (typeof p === "string") return p;
  if (p && typeof p === "object" && typeof (p as { fact?: unknown }).fact === "string") {
    const { fact, speaker, turn, state } = p as { fact: string; speaker?: unknown; turn?: unknown; state?: unknown };
    const metadata: Record<string, unknown> = {};
    if (typeof speaker === "string" && speaker) metadata.speaker = speaker;
    if (typeof turn === "number" && Number.isInteger(turn) && turn > 0) metadata.turns = [turn];
    if (state && typeof state === "object") metadata.state = state;
    return Object.keys(metadata).length ? { content: fact, metadata } : fact;
  }
  return JSON.stringify(p);
}

export const splitKind: StepKind<SplitStep, InputItem> = {
  type: "split",
  ...oneToOnePlanning<SplitStep>({ exactlyOne: false }),
  async execute(ctx, { input }) {
    let parts: Array<{ content: string; metadata?: SplitPart["metadata"]; raw?: unknown }>;
    let audit: Audit;
    if (ctx.step.operator) {
      parts = applySplitOperator(ctx.step.operator, input.content).map((p) => (typeof p === "string" ? { content: p } : p));
      audit = { operator: ctx.step.operator.kind };
    } else {
      const prompt = ctx.render({ record: recordVars(input), records: [recordVars(input)], scope: input.scope });
      const result = await ctx.callModel("extract-list", prompt, [input]);
      const parsed: unknown = JSON.parse(result.text);
      if (!Array.isArray(parsed)) throw new ModelError("The model's response is not a JSON list.", { raw: result.audit.rawResponse });
      parts = parsed.map((raw) => {
        const p = listItem(raw);
        return { ...(typeof p === "string" ? { content: p } : p), raw };
      });
      audit = result.audit;
    }
    const metadata = inheritedMetadata([input]);
    const kept = parts.filter((p) => p.content.trim());
    return kept.map((part, index) =>
      ctx.newRecord({
        workKey: oneToOneWorkKey(ctx.svh, input.id),
        materializationKey: splitKey(ctx.svh, input.id, index),
        content: part.content,
        scope: input.scope,
        sources: [input.id],
        groupKey: `${input.id}#${index}`,
        // Operator metadata (e.g. the turn numbers of a window) goes under `custom`.
        metadata: { ...metadata, step: { index }, ...(part.metadata ? { custom: part.metadata } : {}) },
        audit: itemAudit(audit, index, kept.length, part.raw),
      }),
    );
  },
};

/** What a model call keeps once, on the first of the records it made (see `Audit.sharedCall`). */
const CALL_FIELDS = ["renderedPrompt", "rawResponse", "tokensIn", "tokensOut", "costUsd", "latencyMs"] as const;

/**
 * The audit of item `index` of `of` records made by one call: the first carries the whole call, the
 * others its hashes, model and their own element of the response, so a session's facts store its
 * prompt and response once instead of once per fact (and the branch's build cost counts the call once).
 */
export function itemAudit(audit: Audit, index: number, of: number, raw?: unknown): Audit {
  if (audit.operator !== undefined || of <= 1) return audit;
  const responseItem = raw === undefined ? undefined : JSON.stringify(raw);
  if (index === 0) return { ...audit, sharedCall: { index, of }, ...(responseItem !== undefined ? { responseItem } : {}) };
  const own: Audit = { ...audit };
  for (const field of CALL_FIELDS) delete own[field];
  return { ...own, sharedCall: { index, of }, ...(responseItem !== undefined ? { responseItem } : {}) };
}
