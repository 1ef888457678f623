/** split: 1 → N (chunks, facts, observations, entities); output records carry `meta.step.index`. */
import type { SplitStep } from "../../pipeline/spec";
import { oneToOneWorkKey, splitKey } from "../keys";
import { ModelError } from "../model";
import { applySplitOperator, type SplitPart } from "../operators";
import { inheritedMetadata, recordVars } from "../step-context";
import type { Audit } from "../types";
import { oneToOnePlanning, type InputItem } from "./one-to-one";
import type { StepKind } from "./step-kind";

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
      parts = parsed.map((p) => (typeof p === "string" ? p : JSON.stringify(p)));
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
