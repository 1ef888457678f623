/**
 * Ordinary questions never error (issue #33 items 7 and 8): a query of only stop words or one
 * letter answers 200 with no hits on search and ask, over REST, tRPC (HTTP) and MCP; a phrase that
 * is in no record says `noMatch` in every mode instead of returning the least-bad neighbours; and
 * a procedure whose output fails its own schema is a 500 with a server log line, not a 400.
 * Real route handlers on a real embedded database.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Json, mcpClient, toolText } from "@/server/api/testing/route-clients";
import { z } from "zod";

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-ordinary-"));
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
const restRoute = await import("@/app/api/v1/[...path]/route");
const trpcRoute = await import("@/app/api/trpc/[trpc]/route");
const mcpRoute = await import("@/app/api/mcp/route");
const { createTRPCRouter, publicProcedure } = await import("@/server/api/trpc");
const { fetchRequestHandler } = await import("@trpc/server/adapters/fetch");

const fixture = path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json");

const ORDINARY = ["the", "x", "who?", "a", "of the", "?!"];
const NOWHERE = "quixotic zeppelin marmalade";

describe("ordinary questions over REST, tRPC and MCP", () => {
  let key = "";
  let pipelineId = "";

  async function rest(method: "GET" | "POST", url: string, body?: unknown): Promise<{ status: number; json: Json }> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const req = new Request(`http://localhost/api/v1${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const res = await (method === "GET" ? restRoute.GET : restRoute.POST)(req);
    return { status: res.status, json: (await res.json()) as Json };
  }

  async function trpc(proc: string, input: Json, kind: "query" | "mutation"): Promise<{ status: number; json: Json }> {
    const wire = encodeURIComponent(JSON.stringify({ json: input }));
    const req =
      kind === "query"
        ? new Request(`http://localhost/api/trpc/${proc}?input=${wire}`, { headers: { authorization: `Bearer ${key}` } })
        : new Request(`http://localhost/api/trpc/${proc}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ json: input }) });
    const res = await (kind === "query" ? trpcRoute.GET : trpcRoute.POST)(req);
    const body = (await res.json()) as { result?: { data: { json: Json } }; error?: Json };
    return { status: res.status, json: body.result?.data.json ?? (body.error as Json) };
  }

  beforeAll(async () => {
    const db = await openMigratedDb();
    const { user } = await signUp(db, { email: "ordinary@example.com", password: "a-long-password-1" });
    const member = await db.membership.findFirstOrThrow({ where: { userId: user.id } });
    key = (await createApiKey(db, member.workspaceId, { userId: user.id, role: "owner" }, { name: "agent", role: "admin" })).secret;
    const { pipeline } = await createPipeline(db, member.workspaceId, { name: "memory", spec: templateSpec("chat-memory") });
    pipelineId = pipeline.id;
    await importFile(db, { workspaceId: member.workspaceId, pipelineId, source: "chats", path: fixture });
    expect((await runPipeline(db, { workspaceId: member.workspaceId, pipelineId })).status).toBe("completed");
  }, 180_000);

  afterAll(async () => {
    await closeDb();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("REST: stop words and one letter answer 200 with no hits (search in every mode, and ask)", async () => {
    for (const query of ORDINARY) {
      for (const mode of ["hybrid", "semantic", "fts"]) {
        const found = await rest("GET", `/pipelines/${pipelineId}/search?query=${encodeURIComponent(query)}&mode=${mode}`);
        expect({ query, mode, status: found.status }).toEqual({ query, mode, status: 200 });
        expect(found.json).toMatchObject({ hits: [], noMatch: true });
        expect(String(found.json.notice)).toMatch(/stop words|no words/i);
      }
      const asked = await rest("POST", `/pipelines/${pipelineId}/ask`, { question: query });
      expect({ query, status: asked.status }).toEqual({ query, status: 200 });
      expect(asked.json).toMatchObject({ abstained: true, answer: null, evidence: [] });
    }
  }, 120_000);

  it("tRPC over HTTP: the same queries answer 200 with no hits", async () => {
    for (const query of ORDINARY) {
      const found = await trpc("search.search", { pipelineId, query, mode: "semantic" }, "query");
      expect({ query, status: found.status }).toEqual({ query, status: 200 });
      expect(found.json).toMatchObject({ hits: [], noMatch: true });
      const asked = await trpc("search.ask", { pipelineId, question: query }, "mutation");
      expect({ query, status: asked.status }).toEqual({ query, status: 200 });
      expect(asked.json).toMatchObject({ abstained: true, evidence: [] });
    }
  }, 120_000);

  it("MCP: search and ask tools answer without an error", async () => {
    const client = await mcpClient(mcpRoute, key, "ordinary-agent");
    const text = toolText;
    for (const query of ORDINARY) {
      const found = await client.callTool({ name: "search", arguments: { pipeline: "memory", query, mode: "semantic" } });
      expect({ query, isError: found.isError ?? false, text: found.isError ? text(found) : "" }).toEqual({ query, isError: false, text: "" });
      expect(JSON.parse(text(found))).toMatchObject({ hits: [], noMatch: true });
      const asked = await client.callTool({ name: "ask", arguments: { pipeline: "memory", question: query } });
      expect({ query, isError: asked.isError ?? false, text: asked.isError ? text(asked) : "" }).toEqual({ query, isError: false, text: "" });
      expect(JSON.parse(text(asked))).toMatchObject({ abstained: true });
    }
    await client.close();
  }, 120_000);

  it("relevance floor: a phrase in no record is noMatch in every mode; a real question is not", async () => {
    for (const mode of ["semantic", "hybrid", "fts"]) {
      const none = await rest("GET", `/pipelines/${pipelineId}/search?query=${encodeURIComponent(NOWHERE)}&mode=${mode}&limit=30`);
      expect(none.status).toBe(200);
      expect({ mode, hits: (none.json.hits as unknown[]).length, noMatch: none.json.noMatch }).toEqual({ mode, hits: 0, noMatch: true });
      expect(none.json.floor).toMatchObject({ mode });
      const some = await rest("GET", `/pipelines/${pipelineId}/search?query=${encodeURIComponent("lighthouse cabin key")}&mode=${mode}`);
      expect({ mode, noMatch: some.json.noMatch }).toEqual({ mode, noMatch: false });
      expect((some.json.hits as Array<{ content: string }>)[0]!.content.toLowerCase()).toContain("lighthouse");
    }
    const asked = await rest("POST", `/pipelines/${pipelineId}/ask`, { question: NOWHERE });
    expect(asked.json).toMatchObject({ abstained: true, noMatch: true, evidence: [] });
    const answered = await rest("POST", `/pipelines/${pipelineId}/ask`, { question: "Where is the spare key for the lighthouse cabin?" });
    expect(answered.json).toMatchObject({ abstained: false, noMatch: false });
  }, 120_000);

  it("README examples: walk starts from monthly on chat-memory (synthesis is the pyramid template's top); ask's citations are objects", async () => {
    const walk = (from: string) => rest("GET", `/pipelines/${pipelineId}/walk?query=${encodeURIComponent("lighthouse key")}&from=${from}`);
    expect((await walk("synthesis")).status).toBe(400);
    const monthly = await walk("monthly");
    expect(monthly.status).toBe(200);
    expect(monthly.json.path).toEqual(["monthly", "summaries", "transcripts"]);
    const asked = await rest("POST", `/pipelines/${pipelineId}/ask`, { question: "Where is the spare key for the lighthouse cabin?" });
    expect((asked.json.citations as unknown[])[0]).toMatchObject({ ref: expect.any(Number), recordId: expect.any(String), step: expect.any(String) });
  }, 60_000);
});

describe("output validation", () => {
  it("an output that fails its own schema is a 500 with a server log line, not a 400", async () => {
    const router = createTRPCRouter({
      broken: publicProcedure.output(z.object({ score: z.number() })).query(() => ({ score: Number.NaN })),
      badInput: publicProcedure.input(z.object({ n: z.number() })).query(({ input }) => input),
    });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const res = await fetchRequestHandler({ endpoint: "/api/trpc", req: new Request("http://localhost/api/trpc/broken"), router, createContext: () => ({ db: null as never, actor: null }) });
      expect(res.status).toBe(500);
      const lines = logged.mock.calls.map((args) => args.map(String).join(" "));
      expect(lines.some((l) => /broken/.test(l) && /output/i.test(l) && /score/.test(l))).toBe(true);
      // Input that fails its schema stays the caller's mistake.
      const bad = await fetchRequestHandler({
        endpoint: "/api/trpc",
        req: new Request(`http://localhost/api/trpc/badInput?input=${encodeURIComponent(JSON.stringify({ n: "x" }))}`),
        router,
        createContext: () => ({ db: null as never, actor: null }),
      });
      expect(bad.status).toBe(400);
    } finally {
      logged.mockRestore();
    }
  });
});
