/**
 * REST `/api/v1` through the real route handlers (web Requests in, Responses out) on a real
 * embedded database owned by this test process: every operation of the OpenAPI document is called
 * with a key of the owning workspace and with another workspace's key, and bad input gets a JSON
 * error that names the field.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, mcpClient, restCaller, toolText } from "@/server/api/testing/route-clients";

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-rest-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline } = await import("@/server/services/pipelines");
const { templateSpec } = await import("@/server/pipeline/templates");
const { importFile } = await import("@/server/services/imports");
const { runPipeline } = await import("@/server/services/runs");
const { ingestMessages } = await import("@/server/services/ingest");
const { createEvalRun } = await import("@/server/eval/service");
const { importDataset } = await import("@/server/eval/dataset-store");
const restRoute = await import("@/app/api/v1/[...path]/route");
const openApiRoute = await import("@/app/api/v1/openapi.json/route");
const mcpRoute = await import("@/app/api/mcp/route");

const fixture = path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json");


const call = restCaller(restRoute);

describe("REST /api/v1", () => {
  const keys: Record<"a" | "b", string> = { a: "", b: "" };
  let pipelineId = "";
  let recordId = "";
  let runId = "";
  let evalRunId = "";
  let doc: { paths: Record<string, Record<string, { parameters: Array<{ name: string; in: string }> }>> };

  beforeAll(async () => {
    const db = await openMigratedDb();
    for (const who of ["a", "b"] as const) {
      const { user } = await signUp(db, { email: `${who}@example.com`, password: "a-long-password-1" });
      const member = await db.membership.findFirstOrThrow({ where: { userId: user.id } });
      keys[who] = (await createApiKey(db, member.workspaceId, { userId: user.id, role: "owner" }, { name: `agent ${who}`, role: "admin" })).secret;
      if (who === "a") {
        const { pipeline } = await createPipeline(db, member.workspaceId, { name: "memory", spec: templateSpec("chat-memory") });
        pipelineId = pipeline.id;
        await importFile(db, { workspaceId: member.workspaceId, pipelineId, source: "chats", path: fixture });
        const run = await runPipeline(db, { workspaceId: member.workspaceId, pipelineId });
        expect(run.status).toBe("completed");
        runId = run.id;
        recordId = (await db.record.findFirstOrThrow({ where: { pipelineId, step: "summaries" } })).id;
        await ingestMessages(db, { workspaceId: member.workspaceId, pipelineId, source: "chats" }, { sessionId: "live-1", messages: [{ role: "user", content: "hello" }] });
        // An eval run (queued: the leaderboard shows it as a row in progress).
        const dataset = await importDataset(db, member.workspaceId, { benchmark: "synthexbench", size: "tiny" });
        evalRunId = (await createEvalRun(db, { workspaceId: member.workspaceId, template: "bm25-sessions", datasetId: dataset.id })).id;
      }
    }
    doc = (await openApiRoute.GET().json()) as typeof doc;
  }, 180_000);

  afterAll(async () => {
    await closeDb();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("publishes an OpenAPI 3.1 document of every endpoint, with the error shape", () => {
    const d = doc as unknown as Json & { components: { schemas: Json } };
    expect(d.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/pipelines",
        "/pipelines/{pipelineId}/search",
        "/pipelines/{pipelineId}/outputs/{output}",
        "/pipelines/{pipelineId}/runs",
        "/records/{id}",
        "/records/{id}/lineage",
        "/runs/{runId}",
      ]),
    );
    expect(Object.keys(d.components.schemas)).toEqual(expect.arrayContaining(["Error", "SearchResult", "RecordDetail", "LineageTree"]));
  });

  it("answers every operation of the document for the owning workspace's key, and refuses another workspace's key", async () => {
    const values: Record<string, string> = { pipelineId, output: "context", id: recordId, runId, source: "chats", sessionId: "live-1", entityId: "ent_none", beliefId: "bel_none", entryId: "log_none" };
    const bodies: Record<string, unknown> = {
      "/pipelines/{pipelineId}/search": { query: "lighthouse key" },
      "/pipelines/{pipelineId}/ask": { question: "where is the lighthouse key?" },
      "/records/{id}/purge": { dryRun: true },
      "/pipelines/{pipelineId}/purge": { scope: "acme:nobody", dryRun: true },
      "/pipelines/{pipelineId}/sources/{source}/messages": { sessionId: "live-2", messages: [{ role: "user", content: "a message over REST" }] },
      "/pipelines/{pipelineId}/sources/{source}/items": { text: "a note over REST" },
      "/pipelines/{pipelineId}/sources/{source}/inbox": { path: null },
      "/pipelines/{pipelineId}/log/{entryId}/label": { recordId },
      "/pipelines/{pipelineId}/shadow": { branch: "main", minutes: 60 },
      "/pipelines/{pipelineId}/shadow/stop": { branch: "main" },
      "/pipelines/{pipelineId}/migrations": { name: "try-rag", template: "rag-baseline" },
      "/pipelines/{pipelineId}/migrations/restore": { kept: "main" },
    };
    const calls: string[] = [];
    for (const [template, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const query = op.parameters.some((p) => p.name === "query")
          ? `?query=lighthouse%20key${template.endsWith("/walk") ? "&from=world-model" : ""}`
          : template.endsWith("/brief")
            ? "?scope=acme"
            : template.endsWith("/memories/deleted")
              ? "?step=summaries"
              : template.endsWith("/evals/leaderboard")
                ? `?runIds=${evalRunId}`
                : "";
        const url = template.replace(/\{(\w+)\}/g, (_, name: string) => values[name]!) + query;
        const body = method === "post" ? (bodies[template] ?? {}) : undefined;
        const mine = await call(method.toUpperCase() as "GET" | "POST" | "DELETE", url, keys.a, body);
        calls.push(`${method} ${template}`);
        if (template === "/runs/{runId}/cancel") {
          // The run has finished: the call is allowed and says why nothing happened.
          expect(mine).toMatchObject({ status: 400, json: { error: { code: "BAD_REQUEST", message: "That run is not in progress." } } });
        } else if (["/records/{id}/history", "/records/{id}/restore", "/pipelines/{pipelineId}/memories/deleted"].includes(template)) {
          // chat-memory has no consolidate step: the call is allowed and says why there is no memory.
          expect(mine).toMatchObject({ status: 400, json: { error: { code: "BAD_REQUEST", message: expect.stringMatching(/not a memory|not a consolidate step/) } } });
        } else if (template === "/pipelines/{pipelineId}/log/{entryId}/label") {
          // No such logged query: the call is allowed and says so.
          expect(mine).toMatchObject({ status: 404, json: { error: { code: "NOT_FOUND", message: 'Logged query "log_none" not found.' } } });
        } else if (template === "/pipelines/{pipelineId}/shadow" && method === "post") {
          // Main cannot shadow itself: the call is allowed and says why.
          expect(mine).toMatchObject({ status: 400, json: { error: { code: "BAD_REQUEST", message: expect.stringMatching(/^branch: main serves the live queries/) } } });
        } else if (template === "/pipelines/{pipelineId}/shadow/stop") {
          // Nothing shadows main: the call is allowed and says so.
          expect(mine).toMatchObject({ status: 404, json: { error: { code: "NOT_FOUND", message: 'Branch "main" is not shadowing main.' } } });
        } else if (["/pipelines/{pipelineId}/migrations/report", "/pipelines/{pipelineId}/migrations/promote", "/pipelines/{pipelineId}/migrations/restore", "/pipelines/{pipelineId}/migrations/walk-away"].includes(template)) {
          // Main is no candidate: the call is allowed and says what to name instead.
          expect(mine).toMatchObject({ status: 400, json: { error: { code: "BAD_REQUEST", message: expect.stringMatching(/^(branch|kept): /) } } });
        } else if (template === "/records/{id}/original") {
          // A chat record has no stored image: the call is allowed and says so.
          expect(mine).toMatchObject({ status: 404, json: { error: { code: "NOT_FOUND", message: expect.stringMatching(/has no stored image/) } } });
        } else if (template.includes("/graph/")) {
          // chat-memory has no entities step: the call is allowed and says why there is no graph.
          expect(mine).toMatchObject({ status: 400, json: { error: { code: "BAD_REQUEST", message: expect.stringMatching(/no entities step/) } } });
        } else {
          expect({ op: `${method} ${template}`, status: mine.status }).toEqual({ op: `${method} ${template}`, status: method === "post" && template.endsWith("/runs") ? 201 : 200 });
        }
        const theirs = await call(method.toUpperCase() as "GET" | "POST" | "DELETE", url, keys.b, body);
        if (template === "/pipelines" || template === "/audit" || template === "/sources/inboxes" || template === "/sources/inbox-settings") {
          // Listing is of the caller's own workspace: B's is empty of A's pipelines and A's audit.
          expect(theirs.status).toBe(200);
          expect(JSON.stringify(theirs.json)).not.toContain(pipelineId);
          expect(JSON.stringify(theirs.json)).not.toContain(runId);
          continue;
        }
        expect({ op: `${method} ${template}`, status: theirs.status, code: (theirs.json.error as Json | undefined)?.code }).toEqual({
          op: `${method} ${template}`,
          status: 404,
          code: "NOT_FOUND",
        });
        // The refusal is an error and nothing else: no data of workspace A.
        expect(Object.keys(theirs.json)).toEqual(["error"]);
      }
    }
    expect(calls.length).toBeGreaterThanOrEqual(11);
  }, 120_000);

  it("searches over GET with query-string options and returns JSON with ISO dates", async () => {
    const { status, json, headers } = await call("GET", `/pipelines/${pipelineId}/search?query=lighthouse%20key&mode=fts&limit=3&exact=false`, keys.a);
    expect(status).toBe(200);
    // Private and small: cached nowhere, and sent as it is (Next's gzip honours no-transform).
    expect(headers.get("cache-control")).toBe("no-store, no-transform");
    expect(headers.get("content-type")).toBe("application/json");
    const hits = json.hits as Array<{ content: string; createdAt: string; score: { fts: number } }>;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThanOrEqual(3);
    expect(hits[0]!.content.toLowerCase()).toContain("lighthouse");
    expect(hits[0]!.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(json.mode).toBe("fts");
  });

  it("asks over REST: an answer packet with cited evidence and its sources, or an abstention", async () => {
    const { status, json } = await call("POST", `/pipelines/${pipelineId}/ask`, keys.a, { question: "Where is the spare key for the lighthouse cabin?", k: 3 });
    expect(status).toBe(200);
    expect(json).toMatchObject({ abstained: false, kind: "extractive", critic: { verdict: "APPROVE" } });
    expect(json.answer).toMatch(/blue ceramic frog/);
    const evidence = json.evidence as Array<{ id: string; sources: Array<{ step: string }> }>;
    expect(evidence.length).toBeLessThanOrEqual(3);
    expect(evidence[0]!.sources[0]!.step).toBe("chats");
    const weak = await call("POST", `/pipelines/${pipelineId}/ask`, keys.a, { question: "zeppelin franchise revenue" });
    expect(weak.json).toMatchObject({ abstained: true, answer: null });
    const bad = await call("POST", `/pipelines/${pipelineId}/ask`, keys.a, { question: "x", k: 500 });
    expect(bad).toMatchObject({ status: 400, json: { error: { path: "k" } } });
  });

  it("reads a projection output for an agent's context", async () => {
    const { status, json } = await call("GET", `/pipelines/memory/outputs/context`, keys.a);
    expect(status).toBe(200);
    expect(json).toMatchObject({ output: "context", steps: ["world-model"] });
    expect(typeof json.text).toBe("string");
    expect((json.text as string).length).toBeGreaterThan(0);
  });

  it("says what is wrong and where: bad field, bad JSON, unknown path, wrong method, unknown key", async () => {
    const badLimit = await call("GET", `/pipelines/${pipelineId}/search?query=lighthouse%20key&limit=lots`, keys.a);
    expect(badLimit.status).toBe(400);
    expect(badLimit.json.error).toMatchObject({ code: "BAD_REQUEST", path: "limit" });

    const badJson = await call("POST", `/pipelines/${pipelineId}/search`, keys.a, "{ not json");
    expect(badJson.status).toBe(400);
    expect((badJson.json.error as Json).message).toMatch(/not valid JSON/);

    const unknownPipeline = await call("GET", `/pipelines/nope/search?query=x`, keys.a);
    expect(unknownPipeline).toMatchObject({ status: 404, json: { error: { code: "NOT_FOUND" } } });

    const unknownPath = await call("GET", `/nothing/here`, keys.a);
    expect(unknownPath.status).toBe(404);
    expect((unknownPath.json.error as Json).message).toMatch(/openapi\.json/);

    const wrongMethod = await call("DELETE", `/pipelines/${pipelineId}/search`, keys.a);
    expect(wrongMethod.status).toBe(405);

    const huge = await restRoute.POST(
      new Request(`http://localhost/api/v1/pipelines/${pipelineId}/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${keys.a}`, "content-type": "application/json", "content-length": String(5 * 1024 * 1024) },
        body: JSON.stringify({ query: "x".repeat(5 * 1024 * 1024) }),
      }),
    );
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: { code: "PAYLOAD_TOO_LARGE", message: expect.stringMatching(/limit of 1 MiB \(SYNTHEX_MAX_BODY_BYTES\)/) } });

    const tooMany = await call("POST", `/pipelines/${pipelineId}/sources/chats/messages`, keys.a, { sessionId: "flood", messages: Array.from({ length: 10_000 }, () => ({ role: "user", content: "x" })) });
    expect(tooMany).toMatchObject({ status: 400, json: { error: { code: "BAD_REQUEST", path: "messages", message: expect.stringMatching(/At most 1000 messages per call/) } } });
    expect((await call("GET", `/pipelines/${pipelineId}/sources/chats/sessions/flood`, keys.a)).status).toBe(404);

    const unknownKey = await call("GET", `/pipelines`, "sx_not-a-real-key");
    expect(unknownKey).toMatchObject({ status: 401, json: { error: { code: "UNAUTHORIZED" } } });
  });

  it("serves MCP: an agent's client lists the tools and calls them with its key, inside its workspace", async () => {
    // The SDK's own client, its HTTP requests answered by the route handler.
    const connect = (key: string) => mcpClient(mcpRoute, key, "test-agent");
    const agent = await connect(keys.a);
    const { tools } = await agent.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["add_note", "ask", "brief", "get_record", "ingest", "lineage", "list_pipelines", "read_output", "search", "walk"]);

    const found = await agent.callTool({ name: "search", arguments: { pipeline: "memory", query: "lighthouse key", mode: "fts", limit: 3 } });
    const text = toolText(found);
    const hits = (JSON.parse(text) as { hits: Array<{ id: string; content: string }> }).hits;
    expect(hits[0]!.content.toLowerCase()).toContain("lighthouse");
    const text0 = (r: Awaited<ReturnType<typeof agent.callTool>>) => JSON.parse(toolText(r)) as Json;
    const record = await agent.callTool({ name: "get_record", arguments: { id: hits[0]!.id } });
    expect(record.isError).toBeFalsy();
    expect(text0(record)).toMatchObject({ id: hits[0]!.id, pipelineId });
    const output = await agent.callTool({ name: "read_output", arguments: { pipeline: "memory", output: "context" } });
    expect(text0(output)).toMatchObject({ output: "context", steps: ["world-model"] });
    expect(String(text0(output).text).length).toBeGreaterThan(0);
    const briefed0 = await agent.callTool({ name: "brief", arguments: { pipeline: "memory", scope: "acme:mcp" } });
    expect(text0(briefed0)).toMatchObject({ scope: "acme:mcp", recentTurns: [], projection: { output: "context" } });
    // Top-down from the world model (chat-memory's top): down to the transcripts and their source chats.
    const walked = await agent.callTool({ name: "walk", arguments: { pipeline: "memory", query: "lighthouse key", from: "world-model", limit: 2 } });
    const walk = JSON.parse(toolText(walked)) as { path: string[]; hits: Array<{ step: string; sources: Array<{ step: string }> }> };
    expect(walk.path).toEqual(["world-model", "monthly", "summaries", "transcripts"]);
    expect(walk.hits[0]).toMatchObject({ step: "transcripts", sources: [{ step: "chats" }] });
    const lineage = await agent.callTool({ name: "lineage", arguments: { id: hits[0]!.id } });
    expect(JSON.parse(toolText(lineage))).toMatchObject({ root: hits[0]!.id });
    const asked = await agent.callTool({ name: "ask", arguments: { pipeline: "memory", question: "Where is the spare key for the lighthouse cabin?" } });
    const packet = JSON.parse(toolText(asked)) as { answer: string; abstained: boolean; citations: Array<{ recordId: string }> };
    expect(packet.abstained).toBe(false);
    expect(packet.answer).toMatch(/blue ceramic frog/);
    expect(packet.citations.length).toBe(1);
    const ingested = await agent.callTool({ name: "ingest", arguments: { pipeline: "memory", source: "chats", sessionId: "mcp-1", messages: [{ role: "user", content: "via MCP" }] } });
    expect(JSON.parse(toolText(ingested))).toMatchObject({ status: "open", accepted: 1 });
    await agent.close();

    // Another workspace's key reaches the tools but not workspace A's memory.
    const stranger = await connect(keys.b);
    const refused = await stranger.callTool({ name: "search", arguments: { pipeline: pipelineId, query: "lighthouse key" } });
    expect(refused.isError).toBe(true);
    expect(toolText(refused)).toMatch(/^NOT_FOUND: /);
    await stranger.close();

    // The brief: turns pushed for the scope, newest last, and the projected memory.
    const briefed = await call("GET", `/pipelines/memory/brief?scope=acme:user-7&turns=2`, keys.a);
    expect(briefed.status).toBe(200);
    expect(briefed.json).toMatchObject({ scope: "acme:user-7", openSessions: 0, recentTurns: [] });
    await call("POST", `/pipelines/memory/sources/chats/messages`, keys.a, {
      sessionId: "brief-1",
      scope: "acme:user-7",
      messages: ["one", "two", "three"].map((content, i) => ({ role: "user", content, time: `2026-11-2${i}T10:00:00Z` })),
    });
    const after = await call("GET", `/pipelines/memory/brief?scope=acme:user-7&turns=2`, keys.a);
    expect(after.json).toMatchObject({ openSessions: 1, recentTurns: [{ content: "two" }, { content: "three" }], projection: { output: "context" } });

    const anonymous = await mcpRoute.POST(new Request("http://localhost/api/mcp", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }));
    expect(anonymous.status).toBe(401);
  });

  it("replays a write with the same Idempotency-Key and body, refuses the key with another body", async () => {
    const post = (key: string, idem: string, body: unknown) =>
      restRoute.POST(
        new Request(`http://localhost/api/v1/pipelines/${pipelineId}/sources/chats/messages`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idem },
          body: JSON.stringify(body),
        }),
      );
    const body = { sessionId: "idem-1", messages: [{ role: "user", content: "only once, please" }] };
    const first = await post(keys.a, "key-123", body);
    expect(first.status).toBe(200);
    const firstJson = await first.json();
    expect(firstJson).toMatchObject({ accepted: 1, messageCount: 1 });
    const retry = await post(keys.a, "key-123", body);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("idempotency-replayed")).toBe("true");
    expect(await retry.json()).toEqual(firstJson);
    const session = await call("GET", `/pipelines/${pipelineId}/sources/chats/sessions/idem-1`, keys.a);
    expect(session.json).toMatchObject({ messageCount: 1 });

    const other = await post(keys.a, "key-123", { ...body, messages: [{ role: "user", content: "something else" }] });
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ error: { code: "IDEMPOTENCY_KEY_REUSED", message: expect.stringMatching(/different request/) } });
    expect((await call("GET", `/pipelines/${pipelineId}/sources/chats/sessions/idem-1`, keys.a)).json).toMatchObject({ messageCount: 1 });

    // Keys belong to their caller: another workspace's agent may use the same string (and is refused on its own merits).
    expect((await post(keys.b, "key-123", body)).status).toBe(404);

    // A run started twice with one key is one run.
    const start = () =>
      restRoute.POST(new Request(`http://localhost/api/v1/pipelines/${pipelineId}/runs`, { method: "POST", headers: { authorization: `Bearer ${keys.a}`, "idempotency-key": "run-1" }, body: "{}" }));
    const a = await start();
    const b = await start();
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(((await b.json()) as Json).id).toBe(((await a.json()) as Json).id);
    const doc = (await openApiRoute.GET().json()) as { paths: Record<string, Record<string, { parameters: Array<{ name: string; in: string }>; responses: Record<string, unknown> }>> };
    const ingestOp = doc.paths["/pipelines/{pipelineId}/sources/{source}/messages"]!.post!;
    expect(ingestOp.parameters).toContainEqual(expect.objectContaining({ name: "Idempotency-Key", in: "header" }));
    expect(Object.keys(ingestOp.responses)).toEqual(expect.arrayContaining(["409", "422", "413", "429"]));
  });

  it("limits requests per API key with 429 and Retry-After", async () => {
    process.env.SYNTHEX_API_RATE_PER_KEY = "3";
    try {
      const statuses: number[] = [];
      let last: Response | null = null;
      for (let i = 0; i < 4; i++) {
        last = await restRoute.GET(new Request("http://localhost/api/v1/pipelines", { headers: { authorization: `Bearer ${keys.a}` } }));
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await last!.json()).toMatchObject({ error: { code: "TOO_MANY_REQUESTS", message: expect.stringMatching(/3 requests per minute for this API key/) } });
      // Another key has its own budget.
      const other = await restRoute.GET(new Request("http://localhost/api/v1/pipelines", { headers: { authorization: `Bearer ${keys.b}` } }));
      expect(other.status).toBe(200);
    } finally {
      delete process.env.SYNTHEX_API_RATE_PER_KEY;
    }
  });
});
