import { describe, expect, it } from "vitest";
import { checkTemplate, DEFAULT_TEMPLATES, renderTemplate, TemplateError } from "./prompts";

const record = {
  id: "r1",
  content: "We chose <Postgres> & pgvector.",
  scope: "acme:mark",
  metadata: { time: { created_at: "2024-03-05T10:00:00Z", period: "2024-03" }, chat: { title: "DB choice" } },
};

describe("renderTemplate", () => {
  it("renders the documented variables without HTML escaping", () => {
    const out = renderTemplate("{{ scope }} | {{ record.content }} | {{ record.metadata.chat.title }} | {{ now }}", {
      record,
      scope: "acme:mark",
      now: "2024-04-01T00:00:00.000Z",
    });
    expect(out).toBe("acme:mark | We chose <Postgres> & pgvector. | DB choice | 2024-04-01T00:00:00.000Z");
  });

  it("iterates records and reads group and state", () => {
    const out = renderTemplate("{{ group.key }} ({{ group.size }}){% for r in records %}\n- {{ r.content }}{% endfor %}\n{{ state }}", {
      records: [record, { ...record, id: "r2", content: "Second" }],
      group: { key: "2024-03", scope: "acme", size: 2 },
      state: "before",
    });
    expect(out).toBe("2024-03 (2)\n- We chose <Postgres> & pgvector.\n- Second\nbefore");
  });

  it("reads metadata stored with dotted keys as nested", () => {
    const out = renderTemplate("{{ record.metadata.time.period }}/{{ record.metadata.chat.author }}", {
      record: { id: "x", content: "", metadata: { "time.period": "2024-05", chat: { author: "user" } } },
    });
    expect(out).toBe("2024-05/user");
  });

  it("renders missing variables as empty and dates in UTC", () => {
    expect(renderTemplate("[{{ state }}]{{ now | date: '%Y-%m-%d %H:%M' }}", { now: "2024-03-05T23:30:00Z" })).toBe("[]2024-03-05 23:30");
  });

  it("refuses unknown filters and includes", () => {
    expect(() => renderTemplate("{{ record.content | shout }}", { record })).toThrow(TemplateError);
    expect(() => renderTemplate("{% include 'secrets.txt' %}", {})).toThrow(/cannot include other files/);
    expect(() => renderTemplate("{% render '/etc/passwd' %}", {})).toThrow(/cannot include other files/);
  });

  it("does not expose prototype properties", () => {
    expect(renderTemplate("{{ record.constructor }}{{ record.content.constructor }}", { record })).toBe("");
  });
});

describe("checkTemplate", () => {
  it("lists variables and flags unknown ones", () => {
    expect(checkTemplate("{% assign x = 1 %}{{ x }}{% for r in records %}{{ forloop.index }}{{ r.content }}{% endfor %}{{ recrod }}")).toEqual({
      ok: true,
      variables: ["records", "recrod"],
      unknownVariables: ["recrod"],
    });
  });

  it("reports parse errors with position", () => {
    const check = checkTemplate("line one\n{% if %}");
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.message).toMatch(/line:2/);
    expect(check.line).toBe(2);
  });
});

describe("DEFAULT_TEMPLATES", () => {
  it("all parse and use only documented variables", () => {
    for (const [name, template] of Object.entries(DEFAULT_TEMPLATES)) {
      const check = checkTemplate(template);
      expect(check, name).toMatchObject({ ok: true, unknownVariables: [] });
    }
  });

  it("render sensibly", () => {
    const summary = renderTemplate(DEFAULT_TEMPLATES.summary, { record });
    expect(summary).toContain("Date: 2024-03-05");
    expect(summary).toContain("## Conversation\nWe chose <Postgres> & pgvector.\n\n## Summary\n");
    const transcript = renderTemplate(DEFAULT_TEMPLATES.transcript, { record });
    expect(transcript).toContain("Title: DB choice");
    const monthly = renderTemplate(DEFAULT_TEMPLATES.monthly, { records: [record, record], group: { key: "2024-03", size: 2 } });
    expect(monthly).toContain("Month: 2024-03\nConversations: 2");
    expect(monthly).toContain("## Summaries\n- We chose <Postgres> & pgvector.\n- We chose");
    const first = renderTemplate(DEFAULT_TEMPLATES.worldModel, { record, state: "" });
    expect(first).toContain("(nothing yet: this is the first period)");
    expect(first).toContain("New reflection (2024-03):");
    const later = renderTemplate(DEFAULT_TEMPLATES.worldModel, { record, state: "- uses Postgres" });
    expect(later).toContain("Current understanding:\n- uses Postgres\n");
    const facts = renderTemplate(DEFAULT_TEMPLATES.facts, { record });
    expect(facts).toContain("(the text is from 2024-03-05)");
  });
});
