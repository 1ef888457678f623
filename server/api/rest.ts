/**
 * REST `/api/v1` over the same tRPC procedures: a procedure with `meta.rest` is also served at that
 * method and path, and the OpenAPI 3.1 document is generated from its zod input and output.
 *
 * Why not trpc-to-openapi: to read GET query strings it switches `coerce` on inside the shared
 * zod schemas (so the tRPC procedures themselves would accept `String(undefined)` for a required
 * string and read "false" as true). Here query strings are converted by looking at the schema,
 * without changing it, and the document comes from zod's own `z.toJSONSchema`.
 */
import { TRPCError, type AnyTRPCRouter } from "@trpc/server";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { z, ZodError } from "zod";
import { sessionCookieName } from "../auth/cookies";
import { apiRateLimit } from "../http/api-rate-limit";
import { claimIdempotencyKey } from "../http/idempotency";
import { actorRef, type Context, type ProcedureMeta, type RestRoute } from "./trpc";

/** The parts of a built procedure this adapter reads (tRPC keeps them on `_def`). */
interface ProcedureDef {
  type: "query" | "mutation" | "subscription";
  meta?: ProcedureMeta;
  inputs: unknown[];
  output?: unknown;
}

type RouterLike = AnyTRPCRouter;

export interface RestEndpoint {
  route: RestRoute;
  procedure: string;
  input: z.ZodObject;
  output: z.ZodType | null;
  pathParams: string[];
  pattern: RegExp;
}

export interface RestError {
  error: { code: string; message: string; path?: string };
}

const isObjectSchema = (s: unknown): s is z.ZodObject => s instanceof z.ZodObject;

/** Every procedure with `meta.rest`, as endpoints (a procedure may have several routes). */
export function restEndpoints(router: RouterLike): RestEndpoint[] {
  const out: RestEndpoint[] = [];
  // tRPC keeps the flat "router.procedure" map on _def (typed as the nested record).
  const procedures = router._def.procedures as Record<string, { _def: ProcedureDef }>;
  for (const [name, proc] of Object.entries(procedures)) {
    const rest = proc._def.meta?.rest;
    if (!rest) continue;
    const shapes = proc._def.inputs.filter(isObjectSchema).map((s) => s.shape);
    const input = z.object(Object.assign({}, ...shapes));
    const output = proc._def.output instanceof z.ZodType ? proc._def.output : null;
    for (const route of Array.isArray(rest) ? rest : [rest]) {
      const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
      for (const p of pathParams) if (!(p in input.shape)) throw new Error(`REST route ${route.path} of ${name}: the input has no "${p}".`);
      const pattern = new RegExp(`^${route.path.replace(/\{(\w+)\}/g, "([^/]+)")}$`);
      out.push({ route, procedure: name, input, output, pathParams, pattern });
    }
  }
  return out;
}

/** The schema under optional/default/nullable wrappers. */
function base(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault) s = s.unwrap() as z.ZodType;
    else return s;
  }
}

/** A query-string value as the field's type expects it; left as text when it does not convert (zod then says why). */
function fromQuery(schema: z.ZodType, values: string[]): unknown {
  const s = base(schema);
  if (s instanceof z.ZodArray) return values.map((v) => fromQuery(s.element as z.ZodType, [v]));
  if (s instanceof z.ZodUnion) {
    const options = s.options as z.ZodType[];
    const array = options.find((o) => base(o) instanceof z.ZodArray);
    if (array && values.length > 1) return fromQuery(array, values);
    const single = options.find((o) => !(base(o) instanceof z.ZodArray)) ?? options[0]!;
    return fromQuery(single, values);
  }
  const v = values[values.length - 1]!;
  if (s instanceof z.ZodNumber) return v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v;
  if (s instanceof z.ZodBoolean) return v === "true" ? true : v === "false" ? false : v;
  return v;
}

function queryInput(endpoint: RestEndpoint, url: URL): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const field = endpoint.input.shape[key] as z.ZodType | undefined;
    // Unknown parameters are passed on so the procedure's schema can refuse them by name.
    input[key] = field ? fromQuery(field, url.searchParams.getAll(key)) : url.searchParams.get(key);
  }
  return input;
}

function errorBody(err: TRPCError): RestError {
  const cause = err.cause;
  const issue = cause instanceof ZodError ? cause.issues[0] : undefined;
  return { error: { code: err.code, message: err.message, ...(issue && issue.path.length ? { path: issue.path.join(".") } : {}) } };
}

function fail(err: TRPCError): Response {
  return Response.json(errorBody(err), { status: getHTTPStatusCodeFromError(err) });
}

/**
 * Answers one REST request: finds the endpoint, builds the input from path parameters plus the
 * query string (GET, DELETE) or the JSON body (POST), and calls the procedure as tRPC would.
 */
export async function handleRest(options: {
  router: RouterLike;
  endpoints: RestEndpoint[];
  req: Request;
  /** The path under /api/v1, e.g. "/pipelines/abc/search". */
  path: string;
  createContext: () => Promise<Context>;
}): Promise<Response> {
  const { req } = options;
  // `/pipelines/abc/search/` is `/pipelines/abc/search`: clients that add the slash get the same answer, never a redirect.
  const path = options.path.length > 1 ? options.path.replace(/\/+$/, "") || "/" : options.path;
  const method = req.method.toUpperCase();
  const matches = options.endpoints.filter((e) => e.pattern.test(path));
  const endpoint = matches.find((e) => e.route.method === method);
  try {
    if (!endpoint) {
      if (matches.length) {
        const allowed = [...new Set(matches.map((e) => e.route.method))].join(", ");
        return Response.json({ error: { code: "METHOD_NOT_SUPPORTED", message: `${method} is not supported here: use ${allowed}.` } }, { status: 405, headers: { allow: allowed } });
      }
      throw new TRPCError({ code: "NOT_FOUND", message: `No endpoint ${method} /api/v1${path}. The API is described at /api/v1/openapi.json.` });
    }
    const url = new URL(req.url);
    let input: Record<string, unknown>;
    let bodyText = "";
    if (method === "POST") {
      const text = await req.text();
      bodyText = text;
      let body: unknown = {};
      if (text.trim()) {
        try {
          body = JSON.parse(text);
        } catch (err) {
          throw new TRPCError({ code: "BAD_REQUEST", message: `The body is not valid JSON: ${(err as Error).message}` });
        }
      }
      if (typeof body !== "object" || body === null || Array.isArray(body)) throw new TRPCError({ code: "BAD_REQUEST", message: "The body must be a JSON object." });
      input = { ...queryInput(endpoint, url), ...(body as Record<string, unknown>) };
    } else input = queryInput(endpoint, url);
    const groups = endpoint.pattern.exec(path)!.slice(1);
    endpoint.pathParams.forEach((name, i) => (input[name] = decodeURIComponent(groups[i]!)));

    const ctx = await options.createContext();
    ctx.surface = "rest";
    if (ctx.actor?.kind === "apiKey") {
      const limited = await apiRateLimit(ctx.actor);
      if (limited) return limited;
    }
    // Counted once for this request (the procedure's own middleware would count it again).
    const caller: unknown = options.router.createCaller({ ...ctx, apiRateCounted: true });
    const fn = endpoint.procedure.split(".").reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller) as (input: unknown) => Promise<unknown>;
    const answer = async () => {
      try {
        const data = await fn(input);
        return answerResponse(data ?? null, method === "POST" && endpoint.route.summary.startsWith("Create") ? 201 : 200);
      } catch (err) {
        return errorResponse(method, path, err);
      }
    };
    const idempotencyKey = req.headers.get("idempotency-key");
    if (method !== "POST" || idempotencyKey === null || !ctx.actor) return answer();
    const claim = await claimIdempotencyKey(ctx.db, {
      workspaceId: ctx.actor.kind === "apiKey" ? ctx.actor.workspaceId : String(input.workspaceId ?? ""),
      actor: actorRef(ctx.actor),
      key: idempotencyKey,
      method,
      path,
      body: bodyText,
    });
    return "response" in claim ? claim.response : claim.finish(await answer());
  } catch (err) {
    return errorResponse(method, path, err);
  }
}

/**
 * Answers below this size go out as they are: for a search answer (about 13 KB) gzip and the
 * client's gunzip cost about 0.6 ms of CPU per call on this 2-core machine (3% of a REST search's
 * CPU, app, database and client together), to save about 10 KB that agents mostly fetch over a
 * local network. Larger answers (listings, exports) are still compressed when the client accepts it.
 */
export const UNCOMPRESSED_BELOW_BYTES = 64 * 1024;

/**
 * A procedure's answer as JSON. Answers are private to the caller: `no-store` keeps them out of
 * every cache on the way; `no-transform` (small answers) also tells the server's own compression
 * (Next's, which honours it) and proxies to send them as they are.
 */
function answerResponse(data: unknown, status: number): Response {
  const body = JSON.stringify(data);
  const cacheControl = Buffer.byteLength(body) < UNCOMPRESSED_BELOW_BYTES ? "no-store, no-transform" : "no-store";
  return new Response(body, { status, headers: { "content-type": "application/json", "cache-control": cacheControl } });
}

/** An error as the standard `{ error: { code, message, path? } }`; internal errors are logged and never described. */
function errorResponse(method: string, path: string, err: unknown): Response {
  if (err instanceof TRPCError) {
    if (err.code === "INTERNAL_SERVER_ERROR") console.error(`REST ${method} ${path} failed`, err.cause ?? err);
    return fail(err.code === "INTERNAL_SERVER_ERROR" ? new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "Internal error." }) : err);
  }
  console.error(`REST ${method} ${path} failed`, err);
  return fail(new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "Internal error." }));
}

// ---------------------------------------------------------------------------------------------
// OpenAPI

type JsonSchema = Record<string, unknown>;

/** JSON Schema of a zod schema (dates as date-time strings); named schemas ($defs) go to `components`. */
function jsonSchema(schema: z.ZodType, io: "input" | "output", components: Record<string, JsonSchema>): JsonSchema {
  const generated = z.toJSONSchema(schema, {
    io,
    target: "draft-2020-12",
    unrepresentable: "any",
    reused: "inline",
    override: (ctx) => {
      if (ctx.zodSchema._zod.def.type === "date") Object.assign(ctx.jsonSchema, { type: "string", format: "date-time" });
    },
  }) as JsonSchema;
  const defs = (generated.$defs ?? {}) as Record<string, JsonSchema>;
  delete generated.$defs;
  delete generated.$schema;
  const relink = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(relink);
    if (value && typeof value === "object") {
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) o[k] = k === "$ref" && typeof v === "string" ? v.replace("#/$defs/", "#/components/schemas/") : relink(v);
      return o;
    }
    return value;
  };
  for (const [name, def] of Object.entries(defs)) components[name] = relink(def) as JsonSchema;
  return relink(generated) as JsonSchema;
}

const ERROR_CODES: Array<[number, string]> = [
  [400, "The input is invalid (the message says which field and why)."],
  [401, "No session and no API key, or the key is unknown or revoked."],
  [403, "The caller's role, or the API key's restrictions (read-only, pipelines, scope prefix), do not allow this."],
  [404, "Not found, or not in the caller's workspace."],
  [413, "The body is larger than the limit (SYNTHEX_MAX_BODY_BYTES)."],
  [429, "Rate limit reached: retry after Retry-After seconds."],
];
const POST_ERROR_CODES: Array<[number, string]> = [
  [409, "Conflict: the state does not allow it (the message says why), or a request with the same Idempotency-Key is still being answered."],
  [422, "IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was first used for a different request."],
];

const IDEMPOTENCY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "Any unique string (a UUID): a retry with the same key and body gets the first answer again (kept 24 h) instead of running twice.",
  schema: { type: "string", maxLength: 255 },
};

/** The OpenAPI 3.1 document of every REST endpoint. */
export function openApiDocument(endpoints: RestEndpoint[], info: { version: string; serverUrl: string }) {
  const components: Record<string, JsonSchema> = {
    Error: {
      type: "object",
      required: ["error"],
      properties: {
        error: {
          type: "object",
          required: ["code", "message"],
          properties: {
            code: { type: "string", examples: ["NOT_FOUND"] },
            message: { type: "string" },
            path: { type: "string", description: "The input field the error is about, when there is one." },
          },
        },
      },
    },
  };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const e of endpoints) {
    const inputSchema = jsonSchema(e.input, "input", components);
    const properties = (inputSchema.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((inputSchema.required ?? []) as string[]);
    const parameters = Object.entries(properties)
      // Object-valued options (fusion, metadata …) cannot travel in a query string: POST routes take them.
      .filter(([name, schema]) => e.pathParams.includes(name) || (e.route.method !== "POST" && schema.type !== "object"))
      .map(([name, schema]) => ({
        name,
        in: e.pathParams.includes(name) ? "path" : "query",
        required: e.pathParams.includes(name) || required.has(name),
        ...(typeof schema.description === "string" ? { description: schema.description } : {}),
        schema,
      }));
    const bodyProps = Object.fromEntries(Object.entries(properties).filter(([name]) => !e.pathParams.includes(name)));
    const operation: Record<string, unknown> = {
      operationId: e.procedure.replace(/\./g, "_") + (e.route.method === "GET" ? "" : `_${e.route.method.toLowerCase()}`),
      summary: e.route.summary,
      tags: [e.route.tag],
      parameters: e.route.method === "POST" ? [...parameters, IDEMPOTENCY_PARAMETER] : parameters,
      ...(e.route.method === "POST"
        ? {
            requestBody: {
              required: [...required].some((r) => !e.pathParams.includes(r)),
              content: { "application/json": { schema: { ...inputSchema, properties: bodyProps, required: [...required].filter((r) => !e.pathParams.includes(r)) } } },
            },
          }
        : {}),
      responses: {
        [e.route.method === "POST" && e.route.summary.startsWith("Create") ? "201" : "200"]: {
          description: "OK",
          content: { "application/json": { schema: e.output ? jsonSchema(e.output, "output", components) : {} } },
        },
        ...Object.fromEntries([...ERROR_CODES, ...(e.route.method === "POST" ? POST_ERROR_CODES : [])].map(([status, description]) => [String(status), { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } }])),
      },
    };
    const openapiPath = e.route.path;
    paths[openapiPath] = { ...paths[openapiPath], [e.route.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Synthex API",
      version: info.version,
      description:
        "Memory pipelines for agents: search, projections, records and their provenance, runs. Authenticate with `Authorization: Bearer sx_…` (an API key; its workspace is implied) or a session cookie (then pass `workspaceId`).",
    },
    servers: [{ url: info.serverUrl }],
    security: [{ bearer: [] }, { session: [] }],
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key (sx_…), created in Settings → API keys." },
        // The name follows NEXTAUTH_URL: `__Host-synthex.session-token` over HTTPS, `synthex-PORT.session-token` over http.
        session: { type: "apiKey", in: "cookie", name: sessionCookieName() },
      },
      schemas: components,
    },
    paths,
  };
}
