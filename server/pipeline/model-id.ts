/** Model ids are `provider/model`; pure, so the canvas can use it too. */

/** Split `provider/model`; a bare name is routed by its family (gpt/o-series → openai, claude → anthropic). */
export function parseModelId(model: string): { provider: string; name: string } {
  const slash = model.indexOf("/");
  if (slash > 0) return { provider: model.slice(0, slash), name: model.slice(slash + 1) };
  if (/^claude/i.test(model)) return { provider: "anthropic", name: model };
  if (/^(gpt|o\d|text-embedding|chatgpt)/i.test(model)) return { provider: "openai", name: model };
  if (model === "offline" || model === "extractive") return { provider: "offline", name: "extractive" };
  return { provider: model, name: "" };
}
