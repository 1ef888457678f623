/**
 * Issue 30, item 1: a key limited to a scope reads nothing of another scope through provenance.
 *
 * A pipeline merges two sources by conversation id: `eng` (scope acme:eng) and `sales` (scope
 * acme:sales) both hold conversation "call-1"; the eng copy is newer, so the merged record sits in
 * acme:eng with both copies as its sources. A key limited to acme:eng calls every route that returns
 * record content — REST through the real `/api/v1` handler, tRPC over the fetch adapter, MCP through
 * the SDK's client and the real `/api/mcp` handler — and no answer holds the sales text, while the
 * eng text is there where it belongs (so the answers are the right content, not just empty).
 * Then the pull-in attack: the key ingests a message under the id of a sales conversation, which
 * would merge that conversation into a new acme:eng record; it is refused and nothing is stored.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpClient, toolText } from "@/server/api/testing/route-clients";

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-scope-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, appendSourceRecords } = await import("@/server/services/pipelines");
const { runPipeline } = await import("@/server/services/runs");
const { ingestMessages } = await import("@/server/services/ingest");
const { settleBackgroundWork } = await import("@/server/services/background");
const { appRouter } = await import("@/server/api/root");
const { createContext } = await import("@/server/api/trpc");
const restRoute = await import("@/app/api/v1/[...path]/route");
const mcpRoute = await import("@/app/api/mcp/route");

type Db = Awaited<ReturnType<typeof openMigratedDb>>;

/** Only the sales conversations hold this; only the eng conversation holds the other. */
const SALES = "SALESPLANT-9083";
const ENG = "ENGPLANT-4417";

const spec = {
  sources: [
    { name: "eng", format: "api" },
    { name: "sales", format: "api" },
  ],
  steps: [{ type: "merge", name: "merged", from: ["eng", "sales"], dedupe: { metadataMatch: ["chat.conversation_id"] }, conflict: "prefer_latest" }],
  outputs: [
    { name: "search", from: "merged", surface: "search" },
    { name: "context", from: "merged", surface: "projection" },
  ],
};

let db: Db;
let workspaceId = "";
let pipelineId = "";
let key = "";
let merged = "";
let salesCopy = "";
let engCopy = "";

async function waitForRuns() {
  await settleBackgroundWork();
  while (await db.run.findFirst({ where: { pipelineId, status: { in: ["queued", "running"] } } })) await new Promise((r) => setTimeout(r, 100));
}

async function rest(method: "GET" | "POST", url: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const req = new Request(`http://localhost/api/v1${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const res = await (method === "GET" ? restRoute.GET : restRoute.POST)(req);
  return { status: res.status, body: await res.text() };
}

async function trpc(name: string, type: "query" | "mutation", input: unknown) {
  const encoded = JSON.stringify(superjson.serialize(input));
  const headers = { authorization: `Bearer ${key}` };
  const req =
    type === "query"
      ? new Request(`http://localhost/api/trpc/${name}?input=${encodeURIComponent(encoded)}`, { headers })
      : new Request(`http://localhost/api/trpc/${name}`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: encoded });
  const res = await fetchRequestHandler({ endpoint: "/api/trpc", req, router: appRouter, createContext: () => createContext({ db, authorization: headers.authorization }), onError: () => {} });
  return { status: res.status, body: await res.text() };
}

const connectMcp = () => mcpClient(mcpRoute, key, "scope-test");

beforeAll(async () => {
  db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "scope@example.com", password: "scope-password-1" });
  workspaceId = workspace.id;
  ({ pipeline: { id: pipelineId } } = await createPipeline(db, workspaceId, { name: "shared", spec }));
  const say = (source: string, sessionId: string, scope: string, time: string, content: string) =>
    ingestMessages(db, { workspaceId, pipelineId, source }, { sessionId, scope, messages: [{ role: "user", content, time }], close: true });
  // The same customer call, logged by both teams; eng's copy is the later one and wins the merge.
  await say("sales", "call-1", "acme:sales", "2026-03-01T10:00:00Z", `${SALES}: Initech gets a 40 percent discount on the ledger renewal.`);
  await say("eng", "call-1", "acme:eng", "2026-03-02T10:00:00Z", `${ENG}: the ledger renewal call; eng ships the ledger fix on Friday.`);
  // Sales-only conversations: one pushed live, one imported (a record with no session).
  await say("sales", "deal-7", "acme:sales", "2026-03-03T10:00:00Z", `${SALES}: Globex wants the ledger renewal before the audit.`);
  await appendSourceRecords(db, pipelineId, "sales", [
    { externalId: "import-9", scope: "acme:sales", content: `${SALES}: imported ledger pricing sheet.`, metadata: { chat: { conversation_id: "import-9" }, time: { created_at: "2026-03-04T10:00:00Z" } } },
  ]);
  await waitForRuns();
  expect((await runPipeline(db, { workspaceId, pipelineId })).status).toBe("completed");
  await waitForRuns();

  const mergedRow = await db.record.findFirstOrThrow({ where: { pipelineId, step: "merged", scope: "acme:eng" } });
  merged = mergedRow.id;
  salesCopy = (await db.record.findFirstOrThrow({ where: { pipelineId, step: "sales", content: { contains: "Initech" } } })).id;
  engCopy = (await db.record.findFirstOrThrow({ where: { pipelineId, step: "eng" } })).id;
  // The fixture is the leak's shape: an acme:eng record made from an acme:sales one.
  expect((await db.recordEdge.findMany({ where: { childId: merged } })).map((e) => e.parentId).sort()).toEqual([engCopy, salesCopy].sort());
  key = (await createApiKey(db, workspaceId, { userId: user.id, role: "owner" }, { name: "eng-agent", role: "editor", scopePrefix: "acme:eng" })).secret;
}, 180_000);

afterAll(async () => {
  await closeDb();
  rmSync(dataDir, { recursive: true, force: true });
});

function expectNoSales(what: string, body: string) {
  expect(body.includes(SALES), `${what} leaks the acme:sales text: ${body.slice(0, 400)}`).toBe(false);
  expect(body.includes("Initech"), `${what} leaks the acme:sales text: ${body.slice(0, 400)}`).toBe(false);
}

describe("a key limited to acme:eng, on a pipeline that merges acme:eng and acme:sales", () => {
  it("REST: sources, leaves, lineage, ask, search, outputs, brief and walk hold the eng text and none of the sales text", async () => {
    const p = `/pipelines/${pipelineId}`;
    const withEng: Array<[string, Awaited<ReturnType<typeof rest>>]> = [
      ["GET /records/{id}", await rest("GET", `/records/${merged}`)],
      ["GET /records/{id}/sources", await rest("GET", `/records/${merged}/sources`)],
      ["GET /records/{id}/leaves", await rest("GET", `/records/${merged}/leaves`)],
      ["GET /records/{id}/lineage", await rest("GET", `/records/${merged}/lineage`)],
      ["POST /ask", await rest("POST", `${p}/ask`, { question: "What happens with the ledger renewal?" })],
      ["GET /search", await rest("GET", `${p}/search?query=ledger%20renewal&mode=fts`)],
      ["POST /search", await rest("POST", `${p}/search`, { query: "ledger renewal", mode: "hybrid" })],
      ["GET /outputs/context", await rest("GET", `${p}/outputs/context`)],
      ["GET /brief", await rest("GET", `${p}/brief?scope=acme:eng`)],
    ];
    for (const [what, res] of withEng) {
      expect({ what, status: res.status }).toEqual({ what, status: 200 });
      expect(res.body, what).toContain(ENG);
      expectNoSales(what, res.body);
    }
    // The walk follows single-input steps only (a merge stops it): refused, and says nothing of sales.
    const walked = await rest("GET", `${p}/walk?query=ledger&from=merged`);
    expect(walked.status).toBe(400);
    expectNoSales("GET /walk", walked.body);
    // Sources are listed without the sales copy; the lineage keeps its place as a redacted node.
    expect((JSON.parse((await rest("GET", `/records/${merged}/sources`)).body) as Array<{ id: string }>).map((r) => r.id)).toEqual([engCopy]);
    const lineage = JSON.parse((await rest("GET", `/records/${merged}/lineage`)).body) as { nodes: Array<{ id: string; scope: string; preview: string; redacted?: boolean }> };
    expect(lineage.nodes.find((n) => n.id === salesCopy)).toEqual(expect.objectContaining({ id: salesCopy, preview: "", scope: "", redacted: true }));
    expect(lineage.nodes.find((n) => n.id === engCopy)).toEqual(expect.objectContaining({ scope: "acme:eng", preview: expect.stringContaining(ENG) }));
    const packet = JSON.parse((await rest("POST", `${p}/ask`, { question: "What happens with the ledger renewal?" })).body) as { evidence: Array<{ id: string; sources: Array<{ id: string; preview: string }> }> };
    const evidence = packet.evidence.find((e) => e.id === merged)!;
    expect(evidence.sources.map((s) => s.id)).toEqual([engCopy]);
    // The sales records themselves answer 404, like another workspace's.
    for (const route of ["", "/sources", "/leaves", "/lineage"]) {
      const res = await rest("GET", `/records/${salesCopy}${route}`);
      expect({ route, status: res.status }).toEqual({ route, status: 404 });
      expectNoSales(`GET /records/{sales}${route}`, res.body);
    }
  });

  it("tRPC: the same procedures over the fetch adapter hold none of the sales text", async () => {
    const calls: Array<[string, "query" | "mutation", unknown, boolean]> = [
      ["record.get", "query", { id: merged }, true],
      ["record.sources", "query", { id: merged }, true],
      ["record.leaves", "query", { id: merged }, true],
      ["record.lineage", "query", { id: merged }, true],
      ["record.sources", "query", { id: merged, pipelineId, branch: "main" }, true],
      ["search.ask", "mutation", { pipelineId, question: "What happens with the ledger renewal?" }, true],
      ["search.search", "query", { pipelineId, query: "ledger renewal" }, true],
      ["search.projection", "query", { pipelineId, output: "context" }, true],
      ["search.brief", "query", { pipelineId, scope: "acme:eng" }, true],
      ["search.walk", "query", { pipelineId, query: "ledger", from: "merged" }, false],
      ["ingest.session", "query", { pipelineId, source: "eng", sessionId: "call-1" }, true],
      ["ingest.session", "query", { pipelineId, source: "sales", sessionId: "call-1" }, false],
      ["record.neighbourhood", "query", { id: merged }, false],
      ["record.ancestry", "query", { id: merged }, false],
    ];
    for (const [name, type, input, eng] of calls) {
      const res = await trpc(name, type, input);
      const what = `${name} ${JSON.stringify(input)}`;
      if (eng) {
        expect({ what, status: res.status }).toEqual({ what, status: 200 });
        expect(res.body, what).toContain(ENG);
      } else expect({ what, refused: res.status >= 400 }).toEqual({ what, refused: true });
      expectNoSales(what, res.body);
    }
  });

  it("MCP: lineage, get_record, ask, search, read_output, brief and walk hold none of the sales text", async () => {
    const agent = await connectMcp();
    const text = (r: Awaited<ReturnType<typeof agent.callTool>>) => (r.content as Array<{ text: string }>).map((c) => c.text).join("\n");
    const calls: Array<[string, Record<string, unknown>, boolean]> = [
      ["lineage", { id: merged }, true],
      ["get_record", { id: merged }, true],
      ["ask", { pipeline: "shared", question: "What happens with the ledger renewal?" }, true],
      ["search", { pipeline: "shared", query: "ledger renewal" }, true],
      ["read_output", { pipeline: "shared", output: "context" }, true],
      ["brief", { pipeline: "shared", scope: "acme:eng" }, true],
      ["walk", { pipeline: "shared", query: "ledger", from: "merged" }, false],
      ["lineage", { id: salesCopy }, false],
    ];
    for (const [tool, args, eng] of calls) {
      const res = await agent.callTool({ name: tool, arguments: args });
      const body = text(res);
      const what = `MCP ${tool} ${JSON.stringify(args)}`;
      expect({ what, isError: Boolean(res.isError) }).toEqual({ what, isError: !eng });
      if (eng) expect(body, what).toContain(ENG);
      expectNoSales(what, body);
    }
    await agent.close();
  });
});

describe("the pull-in attack: ingesting under another scope's conversation id", () => {
  it("is refused for a live session or an imported conversation of acme:sales, in any source; nothing is stored and no merged record pulls the sales text in", async () => {
    const messagesBefore = await db.ingestMessage.count();
    const sessionsBefore = await db.ingestSession.count();
    for (const [source, sessionId] of [
      ["eng", "deal-7"],
      ["eng", "import-9"],
      ["sales", "import-9"],
    ] as const) {
      const res = await rest("POST", `/pipelines/${pipelineId}/sources/${source}/messages`, { sessionId, messages: [{ role: "user", content: "pull it in" }], close: true });
      const what = `${source}/${sessionId}`;
      expect({ what, status: res.status }).toEqual({ what, status: 403 });
      expect(JSON.parse(res.body)).toEqual({ error: { code: "FORBIDDEN", message: expect.stringMatching(new RegExp(`sessionId: "${sessionId}" is a conversation outside this API key's scope "acme:eng"`)) } });
      expectNoSales(what, res.body);
    }
    // The same over MCP.
    const agent = await connectMcp();
    const viaMcp = await agent.callTool({ name: "ingest", arguments: { pipeline: "shared", source: "eng", sessionId: "deal-7", messages: [{ role: "user", content: "pull it in" }], close: true } });
    expect(viaMcp.isError).toBe(true);
    expect(toolText(viaMcp)).toMatch(/^FORBIDDEN: sessionId: "deal-7" is a conversation outside/);
    await agent.close();
    expect(await db.ingestMessage.count()).toBe(messagesBefore);
    expect(await db.ingestSession.count()).toBe(sessionsBefore);
    await waitForRuns();
    await runPipeline(db, { workspaceId, pipelineId });
    // No acme:eng record derives from a sales record except the fixture's own merged call-1.
    const engMerged = await db.record.findMany({ where: { pipelineId, step: "merged", scope: "acme:eng" }, select: { id: true } });
    expect(engMerged.map((r) => r.id)).toEqual([merged]);

    // A fresh conversation id still works, and lands in the key's scope.
    const fresh = await rest("POST", `/pipelines/${pipelineId}/sources/eng/messages`, { sessionId: "eng-standup", messages: [{ role: "user", content: "standup notes" }] });
    expect(fresh.status).toBe(200);
    expect((await db.ingestSession.findFirstOrThrow({ where: { pipelineId, sessionId: "eng-standup" } })).scope).toBe("acme:eng");
  });

  it("even when the pull-in record exists (made by an unrestricted caller), its sources show the key nothing of sales", async () => {
    // A sales conversation, then an unrestricted agent files it under acme:eng too: the newer eng copy wins the merge.
    await ingestMessages(db, { workspaceId, pipelineId, source: "sales" }, { sessionId: "deal-8", scope: "acme:sales", messages: [{ role: "user", content: `${SALES}: Initech audit pricing`, time: "2026-03-05T09:00:00Z" }], close: true });
    await ingestMessages(db, { workspaceId, pipelineId, source: "eng" }, { sessionId: "deal-8", scope: "acme:eng", messages: [{ role: "user", content: `${ENG}: audit prep`, time: "2026-03-05T10:00:00Z" }], close: true });
    await waitForRuns();
    await runPipeline(db, { workspaceId, pipelineId });
    const pulled = await db.record.findFirstOrThrow({ where: { pipelineId, step: "merged", scope: "acme:eng", content: { contains: "audit prep" } } });
    expect(await db.recordEdge.count({ where: { childId: pulled.id } })).toBe(2);
    for (const route of ["/sources", "/leaves", "/lineage"]) {
      const res = await rest("GET", `/records/${pulled.id}${route}`);
      expect(res.status).toBe(200);
      expect(res.body).toContain("audit prep");
      expectNoSales(`GET /records/{pulled}${route}`, res.body);
    }
  });
});
