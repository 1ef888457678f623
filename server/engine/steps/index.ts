/**
 * The step registry: every step kind the engine can run, by spec `type`. The runner looks kinds up
 * here and knows none of them. A new kind is one module in this folder plus one line below.
 */
import { EngineError } from "../model";
import { aggregateKind } from "./aggregate";
import { consolidateKind } from "./consolidate";
import { entitiesKind } from "./entities";
import { foldKind } from "./fold";
import { insightsKind } from "./insights";
import { mergeKind } from "./merge";
import { relationsKind } from "./relations";
import { splitKind } from "./split";
import type { StepDefinition, StepKind, WorkItem } from "./step-kind";
import { transformKind } from "./transform";

export type { StepDefinition, StepKind, StepPlanCounts, WorkItem } from "./step-kind";
export { inputsOf } from "./step-kind";

const kinds = new Map<string, StepKind>();

/** Make a kind runnable. Registering another kind under a type that is taken is a mistake. */
export function registerStepKind<S extends StepDefinition, W extends WorkItem>(kind: StepKind<S, W>) {
  const taken = kinds.get(kind.type);
  if (taken && taken !== (kind as StepKind)) throw new Error(`A step kind "${kind.type}" is already registered.`);
  kinds.set(kind.type, kind as StepKind);
}

registerStepKind(transformKind);
registerStepKind(splitKind);
registerStepKind(aggregateKind);
registerStepKind(foldKind);
registerStepKind(mergeKind);
registerStepKind(consolidateKind);
registerStepKind(entitiesKind);
registerStepKind(relationsKind);
registerStepKind(insightsKind);

/** The kind that runs steps of this type; a type nobody registered cannot run (a permanent error). */
export function stepKindOf(type: string): StepKind {
  const kind = kinds.get(type);
  if (!kind) throw new EngineError(`step type ${type} is not supported yet`, "permanent");
  return kind;
}

export function isRunnableStepType(type: string): boolean {
  return kinds.has(type);
}
