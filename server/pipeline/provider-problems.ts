/**
 * Which model providers a spec needs and which of them are missing. Pure, so the canvas
 * validates as you type with the same rule the plan and run-start use on the server
 * (`server/services/provider-check.ts`).
 */
import { parseModelId } from "./model-id";
import { DEFAULT_MODEL, type Problem } from "./spec";

type Loose = Record<string, unknown>;

/** Settings → Models is where a provider is added. */
export const ADD_PROVIDER_HINT = "add one in Settings → Models";

/** The message for a provider a spec uses but the workspace does not have. */
export const noProviderMessage = (provider: string, model: string) => `no provider for ${provider} — ${ADD_PROVIDER_HINT} (model "${model}")`;

/**
 * One problem per model step whose provider is not available (`available`: provider names the
 * workspace can call, e.g. its credentials plus env-configured ones; `offline` always is).
 * Tolerates a half-edited spec: anything without a usable model string is skipped (the shape
 * check reports it).
 */
export function providerProblems(spec: unknown, available: Iterable<string>): Problem[] {
  const have = new Set(available);
  have.add("offline");
  const steps = Array.isArray((spec as Loose | null)?.steps) ? ((spec as Loose).steps as unknown[]) : [];
  const problems: Problem[] = [];
  steps.forEach((raw, index) => {
    const step = (raw ?? {}) as Loose;
    // Merge steps and built-in operators call no model.
    if (step.type === "merge" || step.operator || typeof step.prompt !== "string") return;
    const model = typeof step.model === "string" && step.model.trim() ? step.model.trim() : DEFAULT_MODEL;
    const { provider } = parseModelId(model);
    if (have.has(provider)) return;
    problems.push({
      path: ["steps", index, "model"],
      message: noProviderMessage(provider, model),
      ...(typeof step.name === "string" && step.name ? { node: step.name } : {}),
    });
  });
  return problems;
}
