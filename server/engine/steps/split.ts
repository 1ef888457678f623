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
    let parts: Array<string | SplitPart>;
    let audit: Audit;
    if (ctx.step.operator) {
      parts = applySplitOperator(ctx.step.operator, input.content);
      audit = { operator: ctx.step.operator.kind };
    } else {
      const prompt = ctx.render({ record: recordVars(input), records: [recordVars(input)], scope: input.scope });
      const result = await ctx.callModel("extract-list", prompt, [input]);
      const parsed: unknown = JSON.parse(result.text);
      if (!Array.isArray(parsed)) throw new ModelError("The model's response is not a JSON list.", { raw: result.audit.rawResponse });
      parts = parsed.map(listItem);
      audit = result.audit;
    }
    const metadata = inheritedMetadata([input]);
    return parts
      .map((p) => (typeof p === "string" ? { content: p } : p))
      .filter((p) => p.content.trim())
      .map((part, index) =>
        ctx.newRecord({
          workKey: oneToOneWorkKey(ctx.svh, input.id),
          materializationKey: splitKey(ctx.svh, input.id, index),
          content: part.content,
          scope: input.scope,
          sources: [input.id],
          groupKey: `${input.id}#${index}`,
          // Operator metadata (e.g. the turn numbers of a window) goes under `custom`.
          metadata: { ...metadata, step: { index }, ...(part.metadata ? { custom: part.metadata } : {}) },
          audit,
        }),
      );
  },
};
