/**
 * Issue 22, item 2: Liquid prompts are data a workspace member writes, rendered on the server.
 * They cannot read files (include/render/layout, any path), the environment or JavaScript
 * internals, and a runaway template stops at a render-time and an output-size limit.
 */
import { describe, expect, it } from "vitest";
import { MAX_RENDERED_CHARS, renderTemplate, TemplateError } from "./prompts";

const record = { id: "r1", content: "hello", metadata: { chat: { title: "t" } } };

describe("Liquid sandbox", () => {
  it.each([
    "{% include 'secrets.txt' %}",
    "{% include '/etc/passwd' %}",
    "{% include '../../../../etc/passwd' %}",
    "{% render '/etc/hostname' %}",
    "{% render 'package.json' %}",
    "{% layout '/etc/passwd' %}body",
    "{% include record.content %}",
    "{% assign f = '/proc/self/environ' %}{% include f %}",
  ])("refuses to read a file: %s", (template) => {
    let out: unknown;
    try {
      out = renderTemplate(template, { record: { ...record, content: "/etc/passwd" } });
    } catch (err) {
      expect(err).toBeInstanceOf(TemplateError);
      expect((err as Error).message).toMatch(/cannot include other files/);
      return;
    }
    throw new Error(`rendered: ${String(out).slice(0, 200)}`);
  });

  it("cannot read the environment or JavaScript internals", () => {
    process.env.SYNTHEX_TEMPLATE_CANARY = "canary-8812";
    const probes = [
      "{{ process.env.SYNTHEX_TEMPLATE_CANARY }}",
      "{{ env.SYNTHEX_TEMPLATE_CANARY }}",
      "{{ global.process.env.SYNTHEX_TEMPLATE_CANARY }}",
      "{{ globalThis.process }}",
      "{{ record.constructor.constructor }}",
      "{{ record['__proto__'] }}",
      "{{ record.content.constructor }}",
      "{{ records.constructor }}",
    ];
    for (const probe of probes) {
      const out = renderTemplate(probe, { record, records: [record] });
      expect({ probe, out }).toEqual({ probe, out: "" });
    }
    delete process.env.SYNTHEX_TEMPLATE_CANARY;
  });

  it("stops a runaway loop at the render-time limit", () => {
    const started = Date.now();
    // 1 000³ iterations over a small list: no memory to speak of, only time.
    const list = `{% assign a = "${Array.from({ length: 1000 }, () => "x").join(",")}" | split: "," %}`;
    expect(() => renderTemplate(`${list}{% for i in a %}{% for j in a %}{% for k in a %}{% endfor %}{% endfor %}{% endfor %}`, {})).toThrow(/render limit/);
    // The limit is 5 s of rendering; allow for a loaded machine.
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);

  it("refuses output over the size limit, with a message that says why", () => {
    // 100 characters × 30 000 iterations = 3 M characters: fast to render, over the 2 M limit.
    const template = `{% for i in (1..30000) %}${"x".repeat(100)}{% endfor %}`;
    expect(() => renderTemplate(template, {})).toThrow(/over the limit of 2,000,000/);
    // Just under the limit renders.
    const under = renderTemplate(`{% for i in (1..${Math.floor(MAX_RENDERED_CHARS / 100) - 1}) %}${"x".repeat(100)}{% endfor %}`, {});
    expect(under.length).toBe(MAX_RENDERED_CHARS - 100);
  });

  it("renders hostile record content as text, not as template code", () => {
    const hostile = "{% include '/etc/passwd' %}{{ process.env.HOME }}<script>alert(1)</script>";
    expect(renderTemplate("{{ record.content }}", { record: { ...record, content: hostile } })).toBe(hostile);
  });
});
