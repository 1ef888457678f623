/** transform: 1 → 1, the workhorse (summarize, extract, classify, enrich), by prompt or built-in operator. */
import type { TransformStep } from "../../pipeline/spec";
import { oneToOneWorkKey, transformKey } from "../keys";
import { applyTransformOperator } from "../operators";
import { inheritedMetadata, recordVars } from "../step-context";
import { oneToOnePlanning, type InputItem } from "./one-to-one";
import type { StepKind } from "./step-kind";

export const transformKind: StepKind<TransformStep, InputItem> = {
  type: "transform",
  ...oneToOnePlanning<TransformStep>({ exactlyOne: true }),
  async execute(ctx, { input }) {
    const base = { workKey: oneToOneWorkKey(ctx.svh, input.id), materializationKey: transformKey(ctx.svh, input.id), scope: input.scope, sources: [input.id], groupKey: input.id };
    const metadata = inheritedMetadata([input]);
    const operator = ctx.step.operator;
    if (operator) {
      const out = applyTransformOperator(operator, input.content);
      return [
        ctx.newRecord({
          ...base,
          content: out.content,
          metadata: { ...metadata, ...(out.metadata ? { custom: out.metadata } : {}) },
          audit: { operator: operator.kind },
        }),
      ];
    }
    const prompt = ctx.render({ record: recordVars(input), records: [recordVars(input)], scope: input.scope });
    const { text, audit } = await ctx.callModel("summarize", prompt, [input]);
    // Structured output is also kept as metadata (`custom.*`), so later steps can group or filter by
    // a field (aggregate by `custom.topic`) exactly as they can after an operator that sets it.
    const structured = ctx.step.output ? parsedObject(text) : undefined;
    return [ctx.newRecord({ ...base, content: text, metadata: structured ? { ...metadata, custom: structured } : metadata, audit })];
  },
};

function parsedObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
