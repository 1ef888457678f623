import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ModelError, type ModelInput, type ModelRequest } from "../engine/model";
import { ScriptedModel } from "./fake-model";
import { OFFLINE_MODEL_ID, OFFLINE_MODEL_LABEL, OfflineModel, isOfflineModel, isTranscriptRequest } from "./offline-model";
import { splitSentences } from "../text/text-rank";
import { countTokens } from "../text/tokens";

const model = new OfflineModel();

const CONVERSATION: ModelInput[] = [
  {
    id: "m1",
    content:
      "Alice moved to Berlin in March. She works as a data engineer at a memory startup. Alice prefers tea over coffee. " +
      "The weather was discussed briefly.",
  },
  {
    id: "m2",
    content:
      "The startup builds memory pipelines for AI agents. Alice leads the pipeline team at the startup. " +
      "Her team ships a new memory pipeline every month. Lunch was pasta.",
  },
  {
    id: "m3",
    content: "Berlin is cold in winter, so Alice bought a coat. The coat is green.\n- Alice plans a trip to Lisbon.\n- She will present the memory pipeline there.",
  },
];

function request(overrides: Partial<ModelRequest>): ModelRequest {
  return { model: OFFLINE_MODEL_ID, prompt: "Summarize the following.\n{{ inputs }}", temperature: 0, task: "summarize", inputs: CONVERSATION, ...overrides };
}

const inputSentences = CONVERSATION.flatMap((i) => splitSentences(i.content));

describe("OfflineModel", () => {
  it("answers the same request with byte-identical output", async () => {
    for (const task of ["summarize", "extract-list", "fold", "compress", "classify", "json"] as const) {
      const req = request({ task, state: "Alice likes Berlin. Bob likes Paris.", jsonSchema: { type: "object", properties: { a: { type: "string" } } } });
      const a = await model.complete(req);
      const b = await model.complete(req);
      const c = await new OfflineModel().complete(structuredClone({ ...req, signal: undefined }));
      // latencyMs is measured wall time; everything else is deterministic.
      expect(JSON.stringify({ ...a, latencyMs: 0 })).toBe(JSON.stringify({ ...b, latencyMs: 0 }));
      expect(JSON.stringify({ ...a, latencyMs: 0 })).toBe(JSON.stringify({ ...c, latencyMs: 0 }));
      expect(a.text.length).toBeGreaterThan(0);
    }
  });

  it("reports usage: tokens, zero cost, model id, raw = text", async () => {
    const req = request({});
    const res = await model.complete(req);
    expect(res.model).toBe("offline/extractive");
    expect(res.raw).toBe(res.text);
    expect(res.costUsd).toBe(0);
    expect(res.tokensIn).toBe(countTokens(req.prompt));
    expect(res.tokensOut).toBe(countTokens(res.text));
    expect(res.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("summarize: selects verbatim input sentences, centred on the main topic, within maxOutputTokens", async () => {
    const res = await model.complete(request({ maxOutputTokens: 60 }));
    const picked = splitSentences(res.text);
    expect(picked.length).toBeGreaterThan(0);
    for (const s of picked) expect(inputSentences).toContain(s);
    expect(res.tokensOut).toBeLessThanOrEqual(60);
    expect(res.text).toMatch(/memory pipeline/i);
    expect(res.text).not.toContain("Lunch was pasta.");
  });

  it("summarize: ignores the prompt's prose and returns tiny inputs trimmed", async () => {
    const a = await model.complete(request({ prompt: "Write a poem", inputs: [{ id: "x", content: "  Just one line.  \n" }] }));
    const b = await model.complete(request({ prompt: "Translate to French", inputs: [{ id: "x", content: "  Just one line.  \n" }] }));
    expect(a.text).toBe("Just one line.");
    expect(b.text).toBe(a.text);
    expect((await model.complete(request({ inputs: [] }))).text).toBe("");
  });

  it("summarize: stays bounded for many inputs (default 300 tokens)", async () => {
    const inputs = Array.from({ length: 2000 }, (_, i) => ({
      id: `r${i}`,
      content: `Record ${i} says the agent remembered fact ${i % 50} about project ${i % 7}. It was logged at step ${i}.`,
    }));
    const res = await model.complete(request({ inputs }));
    expect(res.tokensOut).toBeLessThanOrEqual(300);
    const all = new Set(inputs.flatMap((i) => splitSentences(i.content)));
    for (const s of splitSentences(res.text)) expect(all.has(s)).toBe(true);
  });

  it("extract-list: a JSON array of strings, each an input sentence", async () => {
    const res = await model.complete(request({ task: "extract-list" }));
    const facts = z.array(z.string()).parse(JSON.parse(res.text));
    expect(facts.length).toBeGreaterThan(2);
    for (const f of facts) expect(inputSentences).toContain(f);
    expect(new Set(facts).size).toBe(facts.length);
    expect((await model.complete(request({ task: "extract-list", inputs: [] }))).text).toBe("[]");
  });

  it("json: satisfies a schema with nested objects, arrays, enums and formats", async () => {
    const Schema = z.object({
      title: z.string(),
      summary: z.string().max(400),
      sentiment: z.enum(["positive", "neutral", "negative"]),
      confidence: z.number().min(0).max(1),
      count: z.number().int().positive(),
      urgent: z.boolean(),
      tags: z.array(z.string()).min(1).max(3),
      author: z.object({ name: z.string(), email: z.email().optional(), role: z.enum(["user", "agent"]) }),
      facts: z.array(z.object({ text: z.string().min(1), kind: z.literal("fact"), score: z.number() })).min(1),
      note: z.string().nullable(),
      when: z.iso.datetime(),
    });
    const res = await model.complete(request({ task: "json", jsonSchema: z.toJSONSchema(Schema) as Record<string, unknown> }));
    const value = Schema.parse(JSON.parse(res.text));
    expect(value.sentiment).toBe("positive");
    expect(value.author.role).toBe("user");
    expect(value.confidence).toBe(0);
    expect(value.urgent).toBe(false);
    for (const f of value.facts) expect(inputSentences).toContain(f.text);
  });

  it("json: resolves $ref / $defs, anyOf and required-only properties", async () => {
    const jsonSchema = {
      type: "object",
      $defs: { Person: { type: "object", properties: { name: { type: "string" }, age: { type: "integer", minimum: 18 } }, required: ["name", "age"] } },
      properties: {
        people: { type: "array", items: { $ref: "#/$defs/Person" }, minItems: 2 },
        status: { anyOf: [{ type: "null" }, { type: "string", enum: ["open", "closed"] }] },
      },
      required: ["people", "status", "extra"],
    };
    const res = await model.complete(request({ task: "json", jsonSchema }));
    const value = z
      .object({
        people: z.array(z.object({ name: z.string(), age: z.number().int().min(18) })).min(2),
        status: z.enum(["open", "closed"]),
        extra: z.unknown(),
      })
      .strict()
      .parse(JSON.parse(res.text));
    expect(value.people[0]!.age).toBe(18);
    expect("extra" in value).toBe(true);
  });

  it("fold: keeps the newest input's content and stays within the budget", async () => {
    const state = Array.from({ length: 40 }, (_, i) => `Earlier the memory pipeline processed batch ${i} for Alice.`).join(" ");
    const newest = { id: "n", content: "Zanzibar trip booked for October. The memory pipeline processed the last batch." };
    const res = await model.complete(request({ task: "fold", state, inputs: [newest], maxOutputTokens: 120 }));
    expect(res.text).toContain("Zanzibar trip booked for October.");
    expect(res.tokensOut).toBeLessThanOrEqual(120);
    const allowed = [...splitSentences(state), ...splitSentences(newest.content)];
    for (const s of splitSentences(res.text)) expect(allowed).toContain(s);
    // Chronological: the newest input comes last.
    expect(res.text.endsWith("Zanzibar trip booked for October. The memory pipeline processed the last batch.")).toBe(true);
  });

  it("fold: grows the state while it fits (default 800 tokens)", async () => {
    const first = await model.complete(request({ task: "fold", inputs: [CONVERSATION[0]!] }));
    expect(first.text).toBe(splitSentences(CONVERSATION[0]!.content).join(" "));
    const second = await model.complete(request({ task: "fold", state: first.text, inputs: [CONVERSATION[1]!] }));
    expect(second.text.startsWith(first.text)).toBe(true);
    expect(second.text).toContain("Lunch was pasta.");
  });

  it("compress: at most half the state's tokens, drawn from the state", async () => {
    const state = CONVERSATION.map((i) => i.content).join("\n\n");
    const res = await model.complete(request({ task: "compress", state, inputs: [] }));
    expect(res.tokensOut).toBeGreaterThan(0);
    expect(res.tokensOut).toBeLessThanOrEqual(Math.floor(countTokens(state) / 2));
    for (const s of splitSentences(res.text)) expect(splitSentences(state)).toContain(s);
  });

  it("classify: the top keyword", async () => {
    const res = await model.complete(request({ task: "classify" }));
    expect(res.text).toBe("alice");
    expect((await model.complete(request({ task: "classify", inputs: [{ id: "e", content: "the of and" }] }))).text).toBe("unknown");
  });

  it("rejects unknown tasks and aborted requests", async () => {
    await expect(model.complete(request({ task: "poem" as never }))).rejects.toBeInstanceOf(ModelError);
    const controller = new AbortController();
    controller.abort();
    await expect(model.complete(request({ signal: controller.signal }))).rejects.toThrow();
  });

  it("labels itself", () => {
    expect(OFFLINE_MODEL_LABEL).toBe(
      "Offline extractive model: summaries are sentences selected from the inputs, not written by an LLM.",
    );
    expect(isOfflineModel("offline/extractive")).toBe(true);
    expect(isOfflineModel("openai/gpt-4o-mini")).toBe(false);
  });
});

describe("ScriptedModel", () => {
  it("wraps the offline model and records calls", async () => {
    const scripted = new ScriptedModel();
    const req = request({});
    const res = await scripted.complete(req);
    expect(res.text).toBe((await model.complete(req)).text);
    expect(scripted.calls).toEqual([req]);
  });

  it("fails transiently n times, then succeeds", async () => {
    const scripted = new ScriptedModel().failTimes(2);
    for (let i = 0; i < 2; i++) {
      const error = await scripted.complete(request({})).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelError);
      expect((error as ModelError).kind).toBe("transient");
    }
    await expect(scripted.complete(request({}))).resolves.toMatchObject({ model: OFFLINE_MODEL_ID });
    expect(scripted.calls).toHaveLength(3);
  });

  it("fails when a predicate matches", async () => {
    const scripted = new ScriptedModel().failWhen(
      (r) => r.inputs.some((i) => i.id === "bad"),
      () => new ModelError("malformed", { raw: "{oops" }),
    );
    await expect(scripted.complete(request({ inputs: [{ id: "bad", content: "x" }] }))).rejects.toThrow("malformed");
    await expect(scripted.complete(request({ inputs: [{ id: "good", content: "x" }] }))).resolves.toMatchObject({ text: "x" });
  });

  it("adds artificial latency when asked, and wraps any provider", async () => {
    const inner = { complete: async () => ({ text: "t", raw: "t", model: "m/x", tokensIn: 1, tokensOut: 1, costUsd: 0, latencyMs: 0 }) };
    const scripted = new ScriptedModel(inner, { latencyMs: 20 });
    const started = performance.now();
    const res = await scripted.complete(request({}));
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    expect(res).toMatchObject({ text: "t", latencyMs: 20 });
  });
});

describe("OfflineModel json edge cases", () => {
  it("handles recursive schemas, allOf and a missing schema", async () => {
    const tree = {
      $defs: { Node: { type: "object", properties: { label: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } }, required: ["label", "children"] } },
      $ref: "#/$defs/Node",
    };
    const res = await model.complete(request({ task: "json", jsonSchema: tree }));
    const value = JSON.parse(res.text) as { label: string; children: unknown[] };
    expect(typeof value.label).toBe("string");
    expect(Array.isArray(value.children)).toBe(true);
    expect(res.text.length).toBeLessThan(5000);

    const merged = await model.complete(
      request({ task: "json", jsonSchema: { allOf: [{ type: "object", properties: { a: { type: "integer" } }, required: ["a"] }, { properties: { b: { type: "boolean" } } }] } }),
    );
    expect(JSON.parse(merged.text)).toEqual({ b: false, a: 0 });

    const free = JSON.parse((await model.complete(request({ task: "json" }))).text) as { summary: string; keywords: string[] };
    expect(free.summary.length).toBeGreaterThan(0);
    expect(free.keywords[0]).toBe("alice");
  });
});

describe("OfflineModel transcripts", () => {
  // 60 turns, with repeated small talk that TextRank would drop, and a code block with blank lines.
  const turns = Array.from({ length: 60 }, (_, i) =>
    i % 3 === 0 ? `user: ok   thanks (${i})` : i === 31 ? "assistant: Here:\n\n```py\nx = 1\n\n\ny = 2\n```" : `${i % 2 ? "assistant" : "user"}: Turn ${i} talks about topic ${i * 7}.`,
  );
  const chat: ModelInput = {
    id: "c1",
    content: `# Weekend plans\n2023-05-08\n\n${turns.join("\n\n\n")}`,
    metadata: { time: { created_at: "2023-05-08T13:56:00.000Z" } },
  };

  it("keeps every turn, in order, for a transcript prompt (no selection)", async () => {
    const { renderTemplate, DEFAULT_TEMPLATES } = await import("../pipeline/prompts");
    const prompt = renderTemplate(DEFAULT_TEMPLATES.transcript, { record: { id: "c1", content: chat.content, metadata: chat.metadata } });
    const res = await model.complete({ model: OFFLINE_MODEL_ID, prompt, temperature: 0, task: "summarize", inputs: [chat] });
    let at = 0;
    for (const turn of turns) {
      const cleaned = turn.startsWith("user: ok") ? turn.replace(/\s+/g, " ") : turn;
      const found = res.text.indexOf(cleaned.split("\n")[0]!, at);
      expect(found, `turn missing or out of order: ${cleaned}`).toBeGreaterThanOrEqual(at);
      at = found;
    }
    // Code keeps its blank lines; the date is written out in words for search.
    expect(res.text).toContain("```py\nx = 1\n\n\ny = 2\n```");
    expect(res.text).toContain("Date: Monday 8 May 2023");
    // A summary prompt over the same input is still an extractive selection (shorter).
    const summary = await model.complete({ model: OFFLINE_MODEL_ID, prompt: "Summarize this conversation.", temperature: 0, task: "summarize", inputs: [chat] });
    expect(summary.text.length).toBeLessThan(res.text.length / 2);
  });

  it("does not mistake the word transcript inside the conversation for the instruction", () => {
    const inputs = [{ id: "x", content: "user: please send me the transcript of the meeting" }];
    expect(isTranscriptRequest({ model: OFFLINE_MODEL_ID, prompt: `Summarize:\n${inputs[0]!.content}`, temperature: 0, task: "summarize", inputs })).toBe(false);
  });
});
