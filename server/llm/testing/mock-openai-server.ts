/**
 * A mock OpenAI-compatible HTTP server for tests and benchmarks (real HTTP on 127.0.0.1, random
 * port). It answers `/v1/chat/completions`, `/v1/embeddings`, `/v1/models`, `/v1/audio/transcriptions` and (minimally) the
 * Anthropic `/v1/messages`, reports `usage`
 * counted with the real tokenizer, and can be scripted to misbehave: 429 with Retry-After, 500,
 * hang past the client's timeout, malformed JSON, empty content, a non-JSON body (`faults` below
 * injects them at random). Every request is recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hashEmbedding } from "../embedder";
import { countTokens } from "../../text/tokens";

export type MockBehaviour =
  | { kind: "ok"; content?: string }
  | { kind: "429"; retryAfterSeconds?: number }
  | { kind: "500" }
  | { kind: "401" }
  | { kind: "hang" }
  | { kind: "malformed"; content?: string }
  | { kind: "empty" }
  /** HTTP 200 with a body that is not JSON at all (a proxy's HTML error page). */
  | { kind: "garbage" };

export interface MockRequest {
  path: string;
  body: Record<string, unknown>;
  authorization: string | undefined;
  /** Concatenated message contents (chat) or inputs (embeddings). */
  text: string;
}

export interface MockOpenAIServerOptions {
  /** Delay before every answer, in ms. */
  latencyMs?: number;
  /** Decide the behaviour of the n-th (0-based) chat request; default: answer normally. */
  behave?: (request: MockRequest, n: number) => MockBehaviour;
  /** When set, requests must send `Authorization: Bearer <apiKey>` or get a 401. */
  apiKey?: string;
}

export interface MockOpenAIServer {
  /** Base URL including `/v1`, e.g. http://127.0.0.1:12345/v1 */
  baseUrl: string;
  requests: MockRequest[];
  /** Requests to a path suffix ("chat/completions", "embeddings"), or all. */
  count(path?: string): number;
  /** Most concurrent requests in flight at any moment. */
  maxInFlight: number;
  /** Queue behaviours for the next chat requests (consumed before `behave`). */
  enqueue(...behaviours: MockBehaviour[]): void;
  options: MockOpenAIServerOptions;
  reset(): void;
  close(): Promise<void>;
}

function messageText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ content?: unknown }>) : [];
  // Anthropic: system may be separate; content parts are {type:"text", text}.
  return messages
    .map((m) => (typeof m.content === "string" ? m.content : Array.isArray(m.content) ? m.content.map((p) => (p as { text?: string }).text ?? "").join("") : ""))
    .join("\n");
}

/** A deterministic "summary": the first quarter of the words of the last message (at least 5). */
export function mockSummary(text: string): string {
  const words = text.split(/\s+/).filter(Boolean);
  const n = Math.max(5, Math.ceil(words.length / 4));
  return `Summary: ${words.slice(0, n).join(" ")}`;
}

function sampleFromSchema(schema: unknown, text: string): unknown {
  const s = (schema ?? {}) as { type?: string | string[]; properties?: Record<string, unknown>; items?: unknown; enum?: unknown[] };
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) out[k] = sampleFromSchema(v, text);
      return out;
    }
    case "array":
      return [sampleFromSchema(s.items, text)];
    case "number":
    case "integer":
      return 1;
    case "boolean":
      return true;
    default:
      return mockSummary(text);
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** The mock's transcript of an uploaded recording: two timed segments naming the file. */
export function mockTranscript(fileName: string, bytes: number) {
  const segments = [
    { id: 0, start: 0, end: 1.5, text: ` Voice memo ${fileName}.` },
    { id: 1, start: 1.5, end: 3, text: ` Remember to water the basil on the balcony (${bytes} bytes).` },
  ];
  return { task: "transcribe", language: "english", duration: 3, text: segments.map((s) => s.text.trim()).join(" "), segments };
}

/** \`POST /audio/transcriptions\` (multipart): the model, the file's name and size are recorded; verbose_json answers with segments. */
async function transcription(raw: Buffer, contentType: string) {
  const form = await new Response(new Uint8Array(raw), { headers: { "content-type": contentType } }).formData();
  const file = form.get("file");
  if (!(file instanceof Blob)) return { status: 400, body: { error: { message: "a multipart field named file is required" } } };
  const name = (file as File).name ?? "audio";
  const answer = mockTranscript(name, file.size);
  return {
    status: 200,
    body: form.get("response_format") === "verbose_json" ? answer : { text: answer.text },
    request: { model: String(form.get("model") ?? ""), fileName: name, fileSize: file.size, response_format: String(form.get("response_format") ?? "json") },
  };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(typeof body === "string" ? body : JSON.stringify(body));
}

/**
 * A \`behave\` that fails \`rate\` of the chat calls (seeded, reproducible), cycling through 429,
 * 500, a hang past the client's timeout, a non-JSON body and an empty answer; \`injected\` counts them.
 */
export function randomFaults(options: { rate: number; seed?: number }) {
  let seed = options.seed ?? 1;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const kinds = ["429", "500", "hang", "garbage", "empty"] as const;
  const injected: Record<(typeof kinds)[number], number> = { "429": 0, "500": 0, hang: 0, garbage: 0, empty: 0 };
  let next = 0;
  const behave = (): MockBehaviour => {
    if (random() >= options.rate) return { kind: "ok" };
    const kind = kinds[next++ % kinds.length]!;
    injected[kind] += 1;
    return kind === "429" ? { kind, retryAfterSeconds: 1 } : { kind };
  };
  return { behave, injected, total: () => Object.values(injected).reduce((a, b) => a + b, 0) };
}

export async function startMockOpenAIServer(options: MockOpenAIServerOptions = {}): Promise<MockOpenAIServer> {
  const requests: MockRequest[] = [];
  const queue: MockBehaviour[] = [];
  let chatN = 0;
  let inFlight = 0;
  const state = { maxInFlight: 0 };
  let id = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const rawBytes = await readBody(req);
    const path = (req.url ?? "").replace(/\?.*$/, "");
    if (path.endsWith("/audio/transcriptions")) {
      const presentedKey = req.headers.authorization;
      if (options.apiKey && presentedKey !== `Bearer ${options.apiKey}`) return send(res, 401, { error: { message: "Incorrect API key provided." } });
      const answer = await transcription(rawBytes, req.headers["content-type"] ?? "");
      requests.push({ path, body: answer.request ?? {}, authorization: presentedKey, text: "" });
      return send(res, answer.status, answer.body);
    }
    const raw = rawBytes.toString("utf8");
    let body: Record<string, unknown> = {};
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      return send(res, 400, { error: { message: "invalid JSON body" } });
    }
    const isEmbeddings = path.endsWith("/embeddings");
    const inputs = isEmbeddings ? (Array.isArray(body.input) ? (body.input as string[]) : [String(body.input ?? "")]) : [];
    const text = isEmbeddings ? inputs.join("\n") : messageText(body);
    const request: MockRequest = { path, body, authorization: req.headers.authorization, text };
    requests.push(request);
    inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    res.on("close", () => {
      inFlight -= 1;
    });

    const presented = req.headers.authorization ?? (req.headers["x-api-key"] ? `Bearer ${String(req.headers["x-api-key"])}` : undefined);
    if (options.apiKey && presented !== `Bearer ${options.apiKey}`) {
      return send(res, 401, { error: { message: "Incorrect API key provided.", type: "invalid_request_error", code: "invalid_api_key" } });
    }
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));

    if (req.method === "GET" && path.endsWith("/models")) {
      return send(res, 200, { object: "list", data: [{ id: "mock-model", object: "model", owned_by: "mock" }] });
    }
    if (isEmbeddings) {
      const dims = typeof body.dimensions === "number" ? body.dimensions : 64;
      return send(res, 200, {
        object: "list",
        model: body.model,
        data: inputs.map((t, index) => ({ object: "embedding", index, embedding: hashEmbedding(t, dims) })),
        usage: { prompt_tokens: countTokens(text), total_tokens: countTokens(text) },
      });
    }
    if (path.endsWith("/messages")) {
      // Anthropic Messages API (enough of it for the SDK): text answers with usage.
      const content = mockSummary(text);
      return send(res, 200, {
        id: `msg_${++id}`,
        type: "message",
        role: "assistant",
        model: body.model,
        content: [{ type: "text", text: content }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: countTokens(text), output_tokens: countTokens(content) },
      });
    }
    if (!path.endsWith("/chat/completions")) return send(res, 404, { error: { message: `no route ${path}` } });

    const n = chatN++;
    const behaviour = queue.shift() ?? options.behave?.(request, n) ?? { kind: "ok" };
    const promptTokens = countTokens(text);
    const completion = (content: string) => ({
      id: `chatcmpl-${++id}`,
      object: "chat.completion",
      created: 1_700_000_000,
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: promptTokens, completion_tokens: countTokens(content), total_tokens: promptTokens + countTokens(content) },
    });
    switch (behaviour.kind) {
      case "429":
        return send(res, 429, { error: { message: "Rate limit reached", type: "rate_limit_error" } }, { "retry-after": String(behaviour.retryAfterSeconds ?? 1) });
      case "500":
        return send(res, 500, { error: { message: "Internal server error", type: "server_error" } });
      case "401":
        return send(res, 401, { error: { message: "Incorrect API key provided.", type: "invalid_request_error", code: "invalid_api_key" } });
      case "hang":
        return; // never answers; the client's timeout must fire (close() destroys the socket)
      case "malformed":
        return send(res, 200, completion(behaviour.content ?? '{"summary": "unterminated'));
      case "empty":
        return send(res, 200, completion(""));
      case "garbage":
        if (!res.writableEnded) {
          res.writeHead(200, { "content-type": "text/html" });
          res.end("<html><body><h1>502 Bad Gateway</h1>upstream sent \u0000garbage</body></html>");
        }
        return;
      default: {
        const format = body.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
        const lastUser = (Array.isArray(body.messages) ? (body.messages as Array<{ content?: unknown }>) : []).at(-1);
        const userText = typeof lastUser?.content === "string" ? lastUser.content : text;
        const content =
          behaviour.content ??
          (format?.type === "json_schema"
            ? JSON.stringify(sampleFromSchema(format.json_schema?.schema, userText))
            : format?.type === "json_object"
              ? JSON.stringify({ summary: mockSummary(userText) })
              : mockSummary(userText));
        return send(res, 200, completion(content));
      }
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => send(res, 500, { error: { message: String(err) } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    options,
    get maxInFlight() {
      return state.maxInFlight;
    },
    set maxInFlight(v: number) {
      state.maxInFlight = v;
    },
    count(path?: string) {
      return path ? requests.filter((r) => r.path.endsWith(path)).length : requests.length;
    },
    enqueue(...behaviours: MockBehaviour[]) {
      queue.push(...behaviours);
    },
    reset() {
      requests.length = 0;
      queue.length = 0;
      chatN = 0;
      state.maxInFlight = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
