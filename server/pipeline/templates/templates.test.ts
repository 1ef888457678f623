import { describe, expect, it } from "vitest";
import { specHash, stepVersionHashes } from "../hashing";
import { parseSpec, SOURCE_FORMATS } from "../spec";
import { pipelineFromToml, specToToml } from "../toml";
import { findTemplate, getTemplate, TEMPLATE_IDS, TEMPLATES, templateSpec } from ".";

// Every template in the registry, so templates added later are covered without editing this file.
describe.each(TEMPLATES.map((t) => [t.id, t] as const))("template %s", (id, template) => {
  it("has a title and a description, and a spec that validates for every source format", () => {
    expect(template.title.trim()).not.toBe("");
    expect(template.description.trim().length).toBeGreaterThan(20);
    for (const format of SOURCE_FORMATS) {
      const spec = template.spec(format);
      expect(parseSpec(spec).ok, `${id} with ${format}`).toBe(true);
      expect(spec.sources[0]!.format).toBe(format);
    }
  });

  it("round-trips through TOML: same spec, same hashes, same text written again", () => {
    const spec = template.spec("chatgpt-export", { scope: "acme:eng:alice" });
    const toml = specToToml(spec, { name: id, agent: "" });
    const back = pipelineFromToml(toml);
    expect(back.spec).toEqual(spec);
    expect(back.meta.name).toBe(id);
    expect(specHash(back.spec)).toBe(specHash(spec));
    expect(stepVersionHashes(back.spec)).toEqual(stepVersionHashes(spec));
    expect(specToToml(back.spec, back.meta)).toBe(toml);
  });

  it("names eval defaults that exist in its spec, and a model option reaches every prompt step", () => {
    const spec = template.spec("json");
    if (template.eval?.step) expect([...spec.sources.map((s) => s.name), ...spec.steps.map((s) => s.name)]).toContain(template.eval.step);
    if (template.eval?.mode === "bm25") expect(template.eval.step).toBeTruthy();
    const hosted = template.spec("json", { model: "openai/gpt-4o-mini" });
    for (const step of hosted.steps) if ("prompt" in step && step.prompt) expect(step, `${id}.${step.name}`).toMatchObject({ model: "openai/gpt-4o-mini" });
  });
});

describe("template registry", () => {
  it("ids are unique and look up", () => {
    expect(new Set(TEMPLATE_IDS).size).toBe(TEMPLATES.length);
    expect(findTemplate("no-such")).toBeUndefined();
    expect(() => getTemplate("no-such")).toThrow(/Unknown template "no-such"\. Templates: chat-memory, /);
    expect(templateSpec("rag-baseline", "jsonl").sources[0]!.format).toBe("jsonl");
  });

  it("without a format a template keeps its own source format (issue 48: Documents is a folder, not a ChatGPT export)", () => {
    expect(templateSpec("documents").sources[0]!.format).toBe("folder");
    expect(templateSpec("synapse").sources[0]!.format).toBe("api");
    expect(templateSpec("chat-memory").sources[0]!.format).toBe("chatgpt-export");
    expect(templateSpec("documents", "markdown").sources[0]!.format).toBe("markdown");
  });
});
