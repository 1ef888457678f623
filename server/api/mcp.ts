/**
 * The MCP server (streamable HTTP at /api/mcp): tools an agent's model calls directly. Each tool
 * calls the same tRPC procedure as REST and the UI, with the caller's context (its API key), so the
 * permission checks and the workspace boundary are the procedures' own. Stateless: one server and
 * transport per request, JSON responses.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { appRouter } from "./root";
import { SEARCH_MODES } from "../search/search";
import { apiRateLimit } from "../http/api-rate-limit";
import type { Context } from "./trpc";
import { API_VERSION } from "./rest-app";

type Caller = ReturnType<typeof appRouter.createCaller>;

function result(data: unknown) {
  return { content: [{ type: "text" as const, text: JSON.stringify(data, null, 1) }] };
}

/** A tool failure the model can read (and correct), instead of a protocol error. */
async function tool(run: () => Promise<unknown>) {
  try {
    return result(await run());
  } catch (err) {
    const internal = !(err instanceof TRPCError) || err.code === "INTERNAL_SERVER_ERROR";
    const message = internal ? "Internal error." : `${err.code}: ${err.message}`;
    if (internal) console.error("[synthex mcp] tool failed", err instanceof TRPCError ? (err.cause ?? err) : err);
    return { isError: true, content: [{ type: "text" as const, text: message }] };
  }
}

const pipeline = z.string().min(1).describe("The pipeline's name or id.");

export function createMcpServer(caller: Caller): McpServer {
  const server = new McpServer({ name: "synthex", version: API_VERSION });
  server.registerTool(
    "list_pipelines",
    { description: "The memory pipelines of this workspace, with record counts and the last run." },
    () => tool(() => caller.pipeline.list({})),
  );
  server.registerTool(
    "search",
    {
      description: "Search a pipeline's memory in natural language. Returns records (summaries, transcripts, windows …) with scores; each id can be opened with get_record or traced with lineage.",
      inputSchema: {
        pipeline,
        query: z.string().min(1).describe("The question or words to look for."),
        mode: z.enum(SEARCH_MODES).optional().describe("hybrid (default); graph walks the entity graph from the entities the query names (pipelines with entities and relations steps)."),
        scope: z.string().optional().describe("Scope prefix, e.g. acme:user-42."),
        limit: z.number().int().min(1).max(50).optional(),
      },
    },
    (args) => tool(() => caller.search.search({ pipelineId: args.pipeline, query: args.query, mode: args.mode, scope: args.scope, limit: args.limit ?? 10 })),
  );
  server.registerTool(
    "ask",
    {
      description:
        "Ask a question of a pipeline's memory. Returns an answer packet: the answer with [n] citations of the evidence records (and their sources), a confidence, a critic verdict, and abstained=true when the memory does not support an answer.",
      inputSchema: {
        pipeline,
        question: z.string().min(1),
        scope: z.string().optional().describe("Scope prefix, e.g. acme:user-42."),
        k: z.number().int().min(1).max(20).optional(),
        mode: z.enum(SEARCH_MODES).optional().describe("How evidence is retrieved; default: graph when the pipeline has an entity graph, else hybrid."),
        model: z.string().optional().describe("provider/model that writes the answer; omitted: extractive."),
      },
    },
    (args) => tool(() => caller.search.ask({ pipelineId: args.pipeline, question: args.question, scope: args.scope, k: args.k ?? 5, mode: args.mode, model: args.model })),
  );
  server.registerTool(
    "get_record",
    { description: "One record with its metadata, audit and provenance counts.", inputSchema: { id: z.string().min(1) } },
    (args) => tool(() => caller.record.get({ id: args.id })),
  );
  server.registerTool(
    "lineage",
    { description: "The tree of sources a record was made from, down to the raw conversations.", inputSchema: { id: z.string().min(1) } },
    (args) => tool(() => caller.record.lineage({ id: args.id })),
  );
  server.registerTool(
    "ingest",
    {
      description: "Append messages of a live conversation to a pipeline source. close=true turns the session into a memory record and starts an incremental run.",
      inputSchema: {
        pipeline,
        source: z.string().min(1).describe("A source of the pipeline, e.g. chats."),
        sessionId: z.string().min(1),
        scope: z.string().optional(),
        messages: z.array(z.object({ role: z.string().min(1), content: z.string(), time: z.string().optional() })).max(1000),
        close: z.boolean().optional(),
      },
    },
    (args) =>
      tool(() =>
        caller.ingest.messages({ pipelineId: args.pipeline, source: args.source, sessionId: args.sessionId, scope: args.scope, messages: args.messages, close: args.close ?? false }),
      ),
  );
  server.registerTool(
    "add_note",
    {
      description: "Add a note (or a page's text) to a pipeline source as one item; the same note twice adds nothing. A new note starts an incremental run. URLs are labels, never fetched.",
      inputSchema: {
        pipeline,
        source: z.string().min(1).describe("A source of the pipeline, e.g. chats."),
        text: z.string().min(1),
        title: z.string().optional(),
        url: z.string().optional().describe("Where the text came from (not fetched)."),
        scope: z.string().optional(),
      },
    },
    (args) => tool(() => caller.ingest.addItem({ pipelineId: args.pipeline, source: args.source, text: args.text, title: args.title, url: args.url, scope: args.scope })),
  );
  server.registerTool(
    "read_output",
    {
      description: "Read a projection output (e.g. context): the current memory block for a scope, ready for a system prompt.",
      inputSchema: { pipeline, output: z.string().min(1).default("context"), scope: z.string().optional() },
    },
    (args) => tool(() => caller.search.projection({ pipelineId: args.pipeline, output: args.output, scope: args.scope })),
  );
  server.registerTool(
    "walk",
    {
      description:
        "Walk a pipeline's memory top-down (Pyramid retrieval): from a high step such as synthesis, through each level's records closest to the query, to the best low-level records and the sources they came from.",
      inputSchema: {
        pipeline,
        query: z.string().min(1).max(1000),
        from: z.string().min(1).describe("the step to start from, e.g. synthesis"),
        scope: z.string().optional(),
        limit: z.number().int().min(1).max(100).optional(),
      },
    },
    (args) => tool(() => caller.search.walk({ pipelineId: args.pipeline, query: args.query, from: args.from, scope: args.scope, limit: args.limit ?? 10, beam: 3 })),
  );
  server.registerTool(
    "brief",
    {
      description: "The brief for one scope at the start of a turn: the most recent turns pushed with ingest and the projected memory (e.g. the world model).",
      inputSchema: { pipeline, scope: z.string().min(1).describe("e.g. acme:user-42"), turns: z.number().int().min(1).max(200).optional() },
    },
    (args) => tool(() => caller.search.brief({ pipelineId: args.pipeline, scope: args.scope, turns: args.turns ?? 20 })),
  );
  return server;
}

/** Answers one MCP HTTP request with a fresh stateless server bound to the caller's context. */
export async function handleMcp(req: Request, createContext: () => Promise<Context>): Promise<Response> {
  let ctx: Context;
  try {
    ctx = await createContext();
    ctx.surface = "mcp";
  } catch (err) {
    if (err instanceof TRPCError) return Response.json({ error: { code: err.code, message: err.message } }, { status: 401 });
    throw err;
  }
  if (!ctx.actor) return Response.json({ error: { code: "UNAUTHORIZED", message: "Send an API key: Authorization: Bearer sx_…" } }, { status: 401 });
  // Each JSON-RPC message counts against the key's rate limits: a batch of tool calls counts each.
  let parsedBody: unknown;
  if (req.method === "POST") {
    const text = await req.text();
    try {
      parsedBody = JSON.parse(text);
    } catch {
      // Not JSON: the transport answers with its parse error (the body is handed over again).
      req = new Request(req.url, { method: req.method, headers: req.headers, body: text });
    }
  }
  if (ctx.actor.kind === "apiKey") {
    const limited = await apiRateLimit(ctx.actor, Array.isArray(parsedBody) ? Math.max(1, parsedBody.length) : 1);
    if (limited) return limited;
  }
  // Counted above (the procedures' own middleware would count the calls again).
  const server = createMcpServer(appRouter.createCaller({ ...ctx, apiRateCounted: true }));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  return transport.handleRequest(req, parsedBody === undefined ? undefined : { parsedBody });
}
