/**
 * The binding of "Try another architecture" (issue 50), without a database: a template's sources
 * bound to a pipeline's by format, an override, a source the template cannot read refused with the
 * formats, and the pipeline's other sources kept (their raw records stay) but unread.
 */
import { describe, expect, it } from "vitest";
import { parseSpec } from "../pipeline/spec";
import { TEMPLATE_IDS, templateSpec } from "../pipeline/templates";
import { templateReadsFormat } from "../pipeline/templates/reads";
import { bindTemplate } from "./migrations";

const chatsAndDocs = () => {
  const main = templateSpec("mem0");
  return { ...main, sources: [...main.sources, { name: "docs", format: "folder" as const }] };
};

describe("bindTemplate", () => {
  it("binds by format, keeps the unread source, renames every from", () => {
    const p = bindTemplate(chatsAndDocs(), "synapsis");
    expect(p.bindings).toEqual([{ templateSource: "sessions", pipelineSource: "chats", format: "chatgpt-export", chosen: false, candidates: ["chats"] }]);
    expect(p.unbound).toEqual(["docs"]);
    expect(p.spec.sources.map((s) => s.name)).toEqual(["chats", "docs"]);
    const froms = [...p.spec.steps, ...p.spec.outputs].flatMap((n) => (Array.isArray(n.from) ? n.from : [n.from]));
    expect(froms).toContain("chats");
    expect(froms).not.toContain("sessions");
  });

  it("takes the caller's binding, and refuses one the template cannot read, naming the formats", () => {
    const d = bindTemplate(chatsAndDocs(), "documents", { bind: { docs: "docs" } });
    expect(d.bindings[0]).toMatchObject({ templateSource: "docs", pipelineSource: "docs", chosen: true, candidates: ["chats", "docs"] });
    expect(d.unbound).toEqual(["chats"]);
    expect(() => bindTemplate(chatsAndDocs(), "synapsis", { bind: { sessions: "docs" } })).toThrow(
      'bind.sessions: template "synapsis" reads conversations (chatgpt-export, claude-export, jsonl, api), not docs\'s format folder.',
    );
    expect(() => bindTemplate(templateSpec("documents", "folder"), "pyramid")).toThrow(/^Template "pyramid" reads conversations .*this pipeline's sources are docs \(folder\): there is nothing it can read/);
  });

  it("uses main's model for the template's prompt steps unless the caller names one", () => {
    const main = templateSpec("mem0", "chatgpt-export", { model: "openai/gpt-4o-mini" });
    const withMain = bindTemplate(main, "memex");
    expect(withMain.model).toBe("openai/gpt-4o-mini");
    expect(withMain.spec.steps.filter((s) => "prompt" in s && s.prompt).every((s) => (s as { model?: string }).model === "openai/gpt-4o-mini")).toBe(true);
    expect(bindTemplate(main, "memex", { model: "anthropic/claude-3-5-haiku" }).model).toBe("anthropic/claude-3-5-haiku");
  });

  it("every pair of templates: a valid spec bound to the pipeline's source where the candidate reads it, else refused with the reason", () => {
    const outcomes: string[] = [];
    for (const from of TEMPLATE_IDS) {
      const main = templateSpec(from);
      for (const to of TEMPLATE_IDS) {
        if (to === "blank") {
          expect(() => bindTemplate(main, to)).toThrow(/"blank" has no steps to migrate to/);
          continue;
        }
        const reads = main.sources.some((s) => templateReadsFormat(to, s.format));
        if (!reads) {
          expect(() => bindTemplate(main, to), `${from} → ${to}`).toThrow(/there is nothing it can read/);
          outcomes.push(`${from}→${to}: refused`);
          continue;
        }
        const p = bindTemplate(main, to);
        const parsed = parseSpec(p.spec);
        expect(parsed.ok ? [] : parsed.problems, `${from} → ${to}`).toEqual([]);
        // Every raw record stays: the candidate keeps each of the pipeline's sources, by name and format.
        expect(p.spec.sources.map((s) => [s.name, s.format]), `${from} → ${to}`).toEqual(expect.arrayContaining(main.sources.map((s) => [s.name, s.format])));
        expect(p.bindings.every((b) => main.sources.some((s) => s.name === b.pipelineSource)), `${from} → ${to}`).toBe(true);
        outcomes.push(`${from}→${to}: bound`);
      }
    }
    // A folder pipeline (documents) refuses every conversation template and binds the ones that read any text.
    expect(outcomes).toContain("documents→synapsis: refused");
    expect(outcomes).toContain("documents→rag-baseline: bound");
    expect(outcomes).toContain("mem0→synapsis: bound");
  });
});
