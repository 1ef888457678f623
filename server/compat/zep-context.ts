/**
 * Zep's context block and context templates over a Synthex pipeline (server/compat/zep.ts routes
 * them). The default block is the scope's memories (FACTS), the pipeline's summaries and its recent
 * turns. A context template (`context-templates`, kept as a template state, server/compat/zep-objects.ts)
 * is text with placeholders Synthex fills from the same reads: `%{edges limit=N}` (memories),
 * `%{entities limit=N}` (the entities step's entities), `%{episodes limit=N}` (recent messages) and
 * `%{user_summary}` (the pipeline's newest summary of the scope).
 */
import type { Binding, CompatRequest } from "./binding";
import { listEdges, listNodes, memoriesIn, summariesOf } from "./zep-graph";
import { find, idOfMarker, lookup, refuse, register, TEMPLATES_SCOPE, writeState } from "./zep-objects";

const PLACEHOLDER = /%\{\s*([a-z_]+)((?:\s+[a-z_]+=[^\s}]+)*)\s*\}/g;
const KNOWN = ["edges", "entities", "episodes", "user_summary"];

/** The scope's facts: its memories, or on a graph pipeline without a memory step (Synapsis) its relations' current beliefs. */
async function factsOf(c: CompatRequest, b: Binding, scope: string): Promise<Array<{ content: string; updatedAt: Date | string }>> {
  if (b.memoryStep) return memoriesIn(c, b, scope);
  return (await listEdges(c, b, scope, 200)).filter((e) => !("invalid_at" in e)).map((e) => ({ content: e.fact, updatedAt: e.valid_at }));
}

/** The context block: the scope's memories (newest first) and its recent turns, in Zep's tagged layout. */
export async function contextBlock(c: CompatRequest, b: Binding, scope: string) {
  const [memories, brief, summaries] = await Promise.all([
    factsOf(c, b, scope),
    c.caller.search.brief({ pipelineId: b.pipeline, scope, turns: 10 }),
    summariesOf(c, b, scope, 3),
  ]);
  const facts = memories.slice(0, 40).map((m) => `  - ${m.content} (${new Date(m.updatedAt).toISOString().slice(0, 10)})`);
  const projections = [...summaries.map((s) => s.summary), ...brief.projections.map((p) => JSON.stringify(p))].filter((p) => p.length < 4000);
  const turns = brief.recentTurns.map((t) => `  ${t.role}: ${t.content}`);
  return [
    "FACTS represent memories about the user (Synthex: the pipeline's memory step for this scope); RECENT_MESSAGES are the latest turns.",
    "<FACTS>",
    ...facts,
    "</FACTS>",
    ...(projections.length ? ["<SUMMARY>", ...projections, "</SUMMARY>"] : []),
    "<RECENT_MESSAGES>",
    ...turns,
    "</RECENT_MESSAGES>",
  ].join("\n");
}

function checkTemplate(template: unknown): string {
  if (typeof template !== "string" || !template.trim()) throw refuse("template: required (the context block's text with %{…} placeholders).");
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (!KNOWN.includes(m[1]!)) throw refuse(`template: %{${m[1]}} is not filled here; use ${KNOWN.map((k) => `%{${k}}`).join(", ")}.`);
  }
  return template;
}

const templateJson = (templateId: string, template: string, uuid: string) => ({ uuid, template_id: templateId, template });

export async function createTemplate(c: CompatRequest, b: Binding, input: Record<string, unknown>) {
  if (typeof input.template_id !== "string" || !input.template_id.trim()) throw refuse("template_id: required.");
  const template = checkTemplate(input.template);
  const existing = await lookup(c, b, "template", input.template_id);
  if (existing) throw refuse(`template_id "${input.template_id}": a template with this id exists; update it (PUT /context-templates/${input.template_id}).`);
  const found = await register(c, b, "template", input.template_id, TEMPLATES_SCOPE, { template });
  return templateJson(input.template_id, found.state.template ?? template, found.marker.sessionId);
}

export async function getTemplate(c: CompatRequest, b: Binding, templateId: string) {
  const found = await find(c, b, "template", templateId);
  return templateJson(templateId, found.state.template ?? "", found.marker.sessionId);
}

export async function updateTemplate(c: CompatRequest, b: Binding, templateId: string, input: Record<string, unknown>) {
  await find(c, b, "template", templateId);
  await writeState(c, b, "template", templateId, TEMPLATES_SCOPE, { template: checkTemplate(input.template) });
  return getTemplate(c, b, templateId);
}

export async function deleteTemplate(c: CompatRequest, b: Binding, templateId: string) {
  await find(c, b, "template", templateId);
  await writeState(c, b, "template", templateId, TEMPLATES_SCOPE, { deleted: true });
  return { message: `Context template ${templateId} deleted.` };
}

export async function listTemplates(c: CompatRequest, b: Binding) {
  const sessions = await c.caller.memory.sessions({ pipelineId: b.pipeline, source: b.source, idPrefix: "zep-template:", limit: 1000 });
  const templates = [];
  for (const s of sessions) {
    const templateId = idOfMarker("template", s.sessionId);
    const found = await lookup(c, b, "template", templateId);
    if (found) templates.push(templateJson(templateId, found.state.template ?? "", found.marker.sessionId));
  }
  return { templates };
}

/** The scope's context block in the template's layout. */
export async function renderTemplate(c: CompatRequest, b: Binding, templateId: string, scope: string): Promise<string> {
  const template = (await find(c, b, "template", templateId)).state.template ?? "";
  const parts = new Map<string, string>();
  for (const m of template.matchAll(PLACEHOLDER)) {
    const limit = Math.min(100, Number(/limit=(\d+)/.exec(m[2] ?? "")?.[1] ?? 10) || 10);
    let text = "";
    if (m[1] === "edges") {
      const memories = await factsOf(c, b, scope);
      text = memories.slice(0, limit).map((x) => `- ${x.content} (${new Date(x.updatedAt).toISOString().slice(0, 10)})`).join("\n");
    } else if (m[1] === "entities") {
      text = (await listNodes(c, b, scope, limit)).map((n) => `- ${n.name}: ${n.summary}`).join("\n");
    } else if (m[1] === "episodes") {
      const brief = await c.caller.search.brief({ pipelineId: b.pipeline, scope, turns: limit });
      text = brief.recentTurns.map((t) => `${t.role}: ${t.content}`).join("\n");
    } else if (m[1] === "user_summary") {
      text = (await summariesOf(c, b, scope, 1))[0]?.summary ?? "";
    }
    parts.set(m[0], text);
  }
  return template.replace(PLACEHOLDER, (whole) => parts.get(whole) ?? "");
}

/** Zep's project: here the workspace's pipeline this endpoint is bound to. */
export async function projectInfo(c: CompatRequest, b: Binding) {
  const { pipeline } = await c.caller.pipeline.get({ pipelineId: b.pipeline });
  const p = pipeline as { id: string; name: string; description?: string | null; createdAt?: Date | string };
  return {
    project: {
      uuid: p.id,
      name: p.name,
      ...(p.description ? { description: p.description } : {}),
      ...(p.createdAt ? { created_at: new Date(p.createdAt).toISOString() } : {}),
    },
  };
}
