/**
 * Mem0's project and webhook endpoints over the bound pipeline. Mem0's project is the API key's
 * pipeline (the ping answers its name as `project_id`, the workspace as `org_id`): `getProject`
 * reads its name, description and custom instructions, `updateProject` sets the custom instructions.
 * Mem0's webhooks are the pipeline's projection webhooks: each is a projection output of the memory
 * step with a webhook URL, saved as a new pipeline version (the same as editing the spec in the app).
 *
 * Custom instructions are a marked section at the end of the fact step's prompt: they apply where
 * Mem0's do, to what is extracted from then on (a saved prompt makes the fact step stale, so the
 * next run applies them to earlier conversations too). An empty value removes the section.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { CompatError, type CompatRequest, type MemoryBinding } from "./binding";
import type { OutputSpec, PipelineSpec } from "../pipeline/spec";

const refuse = (message: string) => new CompatError(400, message);

/** What precedes the custom instructions in the fact step's prompt. */
export const CUSTOM_INSTRUCTIONS_MARKER = "\n\nCustom instructions (set with Mem0's updateProject):\n";

type Step = PipelineSpec["steps"][number];

async function specOf(c: CompatRequest, b: MemoryBinding): Promise<PipelineSpec> {
  return (await c.caller.pipeline.get({ pipelineId: b.pipeline })).version.spec;
}

async function save(c: CompatRequest, b: MemoryBinding, spec: PipelineSpec, message: string) {
  await c.caller.pipeline.saveVersion({ pipelineId: b.pipeline, spec, message });
}

function factStep(spec: PipelineSpec, b: MemoryBinding): Step & { prompt: string } {
  const step = spec.steps.find((s) => s.name === b.factStep);
  const prompt = (step as { prompt?: unknown } | undefined)?.prompt;
  if (!step || typeof prompt !== "string") {
    throw refuse(`custom_instructions: the pipeline's fact step "${b.factStep}" has no prompt to add them to (edit its steps in the app).`);
  }
  return step as Step & { prompt: string };
}

function instructionsOf(prompt: string): string {
  const at = prompt.indexOf(CUSTOM_INSTRUCTIONS_MARKER);
  return at < 0 ? "" : prompt.slice(at + CUSTOM_INSTRUCTIONS_MARKER.length);
}

function withInstructions(prompt: string, text: string): string {
  const at = prompt.indexOf(CUSTOM_INSTRUCTIONS_MARKER);
  const base = at < 0 ? prompt : prompt.slice(0, at);
  return text ? `${base}${CUSTOM_INSTRUCTIONS_MARKER}${text}` : base;
}

/** `/api/v1/orgs/organizations/{org}/projects/{project}/`: the org must be the key's workspace, the project its pipeline. */
function checkProject(c: CompatRequest, b: MemoryBinding, org: string | null, project: string) {
  if (org !== null && org !== c.ctx.actor.workspaceId) throw new CompatError(404, `Organization ${org} not found: this key's organization is ${c.ctx.actor.workspaceId} (its workspace).`);
  if (project !== b.pipeline && project !== b.pipelineId) throw new CompatError(404, `Project ${project} not found: this key's project is ${b.pipeline} (the pipeline it is bound to).`);
}

const PROJECT_FIELDS = ["id", "name", "description", "custom_instructions", "custom_categories"] as const;

/** Project settings Mem0 has and Synthex does not, and why. */
const PROJECT_REFUSED: Record<string, string> = {
  custom_categories: "categories are not kept: a pipeline step (e.g. a classify transform) can label memories",
  agent_custom_instructions: "one set of instructions per pipeline: use custom_instructions",
  version: "the pipeline's steps decide how memories are made: choose a template or edit the steps",
  memory_depth: "the pipeline's steps decide how memories are made",
  usecase_setting: "the pipeline's steps decide how memories are made",
  multilingual: "the pipeline's prompts decide the language",
  decay: "search ranking is the pipeline's: recency is boosted by the search mode, not a project setting",
};

export async function getProject(c: CompatRequest, b: MemoryBinding, org: string | null, project: string, fields: string[]) {
  checkProject(c, b, org, project);
  const { pipeline, version } = await c.caller.pipeline.get({ pipelineId: b.pipeline });
  const step = version.spec.steps.find((s) => s.name === b.factStep) as { prompt?: unknown } | undefined;
  const all: Record<(typeof PROJECT_FIELDS)[number], unknown> = {
    id: pipeline.name,
    name: pipeline.name,
    description: pipeline.description ?? "",
    custom_instructions: typeof step?.prompt === "string" ? instructionsOf(step.prompt) : "",
    custom_categories: [],
  };
  const unknown = fields.filter((f) => !(PROJECT_FIELDS as readonly string[]).includes(f));
  if (unknown.length) throw refuse(`fields: ${unknown.join(", ")} not available here (a project is the key's pipeline: ${PROJECT_FIELDS.join(", ")}).`);
  return fields.length ? Object.fromEntries(fields.map((f) => [f, all[f as keyof typeof all]])) : all;
}

export async function updateProject(c: CompatRequest, b: MemoryBinding, org: string | null, project: string, input: Record<string, unknown>) {
  checkProject(c, b, org, project);
  for (const [key, why] of Object.entries(PROJECT_REFUSED)) if (input[key] !== undefined && input[key] !== null) throw refuse(`${key}: not supported by Synthex (${why}).`);
  const other = Object.keys(input).filter((k) => k !== "custom_instructions" && !(k in PROJECT_REFUSED));
  if (other.length) throw refuse(`${other.join(", ")}: not a project setting here (updateProject sets custom_instructions).`);
  const text = input.custom_instructions;
  if (typeof text !== "string") throw refuse("custom_instructions: the instructions as text (\"\" removes them).");
  if (text.length > 20_000) throw refuse("custom_instructions: at most 20000 characters.");
  const spec = await specOf(c, b);
  const step = factStep(spec, b);
  const prompt = withInstructions(step.prompt, text);
  if (prompt !== step.prompt) {
    const steps = spec.steps.map((s) => (s.name === step.name ? ({ ...s, prompt } as Step) : s));
    await save(c, b, { ...spec, steps }, `Mem0 updateProject: custom instructions ${text ? "set" : "removed"}`);
  }
  return { message: "Updated custom prompts" };
}

// --- Webhooks ------------------------------------------------------------------------------------

const EVENT_TYPES = ["memory_add", "memory_update", "memory_delete", "memory_categorize"] as const;
const ACCEPTED_EVENTS = ["memory_add", "memory_update", "memory_delete"];

/** A webhook made here keeps Mem0's name and event types in its output's description (JSON). */
const mem0Webhook = z.object({ mem0Webhook: z.object({ name: z.string(), eventTypes: z.array(z.enum(EVENT_TYPES)) }) });

function labelOf(out: OutputSpec): z.infer<typeof mem0Webhook>["mem0Webhook"] | null {
  if (!out.description) return null;
  try {
    const parsed = mem0Webhook.safeParse(JSON.parse(out.description));
    return parsed.success ? parsed.data.mem0Webhook : null;
  } catch {
    return null;
  }
}

const hooksOf = (spec: PipelineSpec) => spec.outputs.filter((o) => o.surface === "projection" && o.webhook);

function webhookJson(out: OutputSpec, b: MemoryBinding, createdAt: string) {
  const label = labelOf(out);
  return {
    webhook_id: out.name,
    name: label?.name ?? out.name,
    url: out.webhook!.url,
    project: b.pipeline,
    is_active: true,
    event_types: label?.eventTypes ?? ACCEPTED_EVENTS,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

function parseHook(input: Record<string, unknown>, partial: boolean) {
  const name = input.name;
  const url = input.url;
  const events = input.event_types;
  if (!partial || name !== undefined) if (typeof name !== "string" || !name.trim() || name.length > 200) throw refuse("name: the webhook's name (1 to 200 characters).");
  if (!partial || url !== undefined) if (typeof url !== "string" || !/^https?:\/\//.test(url)) throw refuse("url: an http(s) URL the memory changes are POSTed to.");
  if (!partial || events !== undefined) {
    if (!Array.isArray(events) || !events.length || events.some((e) => !ACCEPTED_EVENTS.includes(e as string))) {
      throw refuse(`event_types: a non-empty list of ${ACCEPTED_EVENTS.join(", ")} (memory_categorize: memories keep no categories here).`);
    }
  }
  return { name: name as string | undefined, url: url as string | undefined, eventTypes: events as (typeof EVENT_TYPES)[number][] | undefined };
}

export async function listWebhooks(c: CompatRequest, b: MemoryBinding, project: string) {
  checkProject(c, b, null, project);
  const { version } = await c.caller.pipeline.get({ pipelineId: b.pipeline });
  const at = new Date(version.createdAt).toISOString();
  return hooksOf(version.spec).map((o) => webhookJson(o, b, at));
}

export async function createWebhook(c: CompatRequest, b: MemoryBinding, project: string, input: Record<string, unknown>) {
  checkProject(c, b, null, project);
  const hook = parseHook(input, false);
  const spec = await specOf(c, b);
  const output: OutputSpec = {
    name: `mem0-webhook-${randomBytes(4).toString("hex")}`,
    description: JSON.stringify({ mem0Webhook: { name: hook.name!, eventTypes: hook.eventTypes! } }),
    from: b.memoryStep,
    surface: "projection",
    webhook: { url: hook.url! },
  };
  await save(c, b, { ...spec, outputs: [...spec.outputs, output] }, `Mem0 createWebhook: ${hook.name}`);
  return webhookJson(output, b, new Date().toISOString());
}

function findHook(spec: PipelineSpec, id: string): OutputSpec {
  const out = hooksOf(spec).find((o) => o.name === id);
  if (!out) throw new CompatError(404, `Webhook ${id} not found (getWebhooks lists this project's).`);
  return out;
}

export async function updateWebhook(c: CompatRequest, b: MemoryBinding, id: string, input: Record<string, unknown>) {
  const hook = parseHook(input, true);
  const spec = await specOf(c, b);
  const out = findHook(spec, id);
  const label = labelOf(out);
  if (!label && (hook.name !== undefined || hook.eventTypes !== undefined)) {
    throw refuse(`Webhook ${id} is the pipeline's own projection output "${id}": only its url can be changed here (edit the output in the app for the rest).`);
  }
  const updated: OutputSpec = {
    ...out,
    ...(label ? { description: JSON.stringify({ mem0Webhook: { name: hook.name ?? label.name, eventTypes: hook.eventTypes ?? label.eventTypes } }) } : {}),
    webhook: { url: hook.url ?? out.webhook!.url },
  };
  await save(c, b, { ...spec, outputs: spec.outputs.map((o) => (o.name === id ? updated : o)) }, `Mem0 updateWebhook: ${id}`);
  return { message: "Webhook updated successfully" };
}

export async function deleteWebhook(c: CompatRequest, b: MemoryBinding, id: string) {
  const spec = await specOf(c, b);
  const out = findHook(spec, id);
  // A webhook made here is its own output; the pipeline's own projection keeps its output, without the webhook.
  const outputs = labelOf(out) ? spec.outputs.filter((o) => o.name !== id) : spec.outputs.map((o) => (o.name === id ? { ...o, webhook: undefined } : o));
  await save(c, b, { ...spec, outputs }, `Mem0 deleteWebhook: ${id}`);
  return { message: "Webhook deleted successfully" };
}
