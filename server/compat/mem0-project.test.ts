/**
 * Issue 49, the rest of Mem0's integration suite, with the real `mem0ai` client over real HTTP on
 * the mem0 template (offline model): the project is the key's pipeline (getProject, updateProject's
 * custom instructions in the fact step's prompt, a new pipeline version), webhooks are the
 * pipeline's projection webhooks (create, list, update, delete: outputs of the memory step), an
 * OR filter searches the scope its branches name, and Mem0's quickstart finds its fact.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const testEnv = await (await import("./testing/compat-test-env")).compatTestEnv("mem0-project");

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { settleBackgroundWork } = await import("@/server/services/background");
const { startRouteServer } = await import("@/server/api/testing/route-server");
const { mem0Route } = await import("@/server/compat/mem0");
const { MemoryClient, WebhookEvent } = await import("mem0ai");

let server: Awaited<ReturnType<typeof startRouteServer>>;
let db: Awaited<ReturnType<typeof openMigratedDb>>;
let pipelineId = "";
let apiKey = "";
let editorKey = "";
let viewerKey = "";

beforeAll(async () => {
  db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "project@example.com", password: "project-password-1" });
  pipelineId = (await createPipeline(db, workspace.id, { name: "agent-memory", description: "The support agent's memory", spec: templateSpec("mem0") })).pipeline.id;
  const owner = { userId: user.id, role: "owner" as const };
  // Project and webhook changes save the pipeline's main, which is protected: `synthex keys create --role admin`.
  apiKey = (await createApiKey(db, workspace.id, owner, { name: "admin", role: "admin" })).secret;
  // As `synthex keys create` makes it: the default role, editor.
  editorKey = (await createApiKey(db, workspace.id, owner, { name: "default" })).secret;
  viewerKey = (await createApiKey(db, workspace.id, owner, { name: "viewer", role: "viewer" })).secret;
  server = await startRouteServer([[/^\/compat\/mem0(\/|$)/, mem0Route]]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  await settleBackgroundWork();
  await closeDb();
  await testEnv.cleanup();
});

const client = (key = apiKey) => new MemoryClient({ apiKey: key, host: `${server.url}/compat/mem0` });
const raw = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}/compat/mem0${path}`, { method, headers: { authorization: `Token ${apiKey}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });

/** The pipeline's current spec, as the app shows it. */
async function currentSpec() {
  const branch = await db.branch.findFirstOrThrow({ where: { pipelineId, name: "main" } });
  const version = await db.pipelineVersion.findUniqueOrThrow({ where: { id: branch.versionId } });
  return version.spec as unknown as { steps: Array<{ name: string; prompt?: string }>; outputs: Array<{ name: string; from: string | string[]; surface: string; webhook?: { url: string } }> };
}

async function addAndWait(messages: Array<{ role: "user" | "assistant"; content: string }>, userId: string) {
  const queued = (await client().add(messages, { userId })) as unknown as { eventId: string };
  for (let i = 0; i < 600; i++) {
    const event = (await (await raw("GET", `/v1/event/${queued.eventId}/`)).json()) as { status: string };
    if (event.status !== "PENDING") return event;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the add stayed PENDING");
}

describe("Mem0 project = the key's pipeline (issue 49)", () => {
  it("getProject answers the pipeline's fields; updateProject sets custom instructions in the fact step's prompt, and '' removes them", async () => {
    const mem0 = client();
    const project = (await mem0.getProject({ fields: ["custom_instructions"] })) as Record<string, unknown>;
    expect(project).toEqual({ customInstructions: "" });
    expect(await mem0.getProject({ fields: [] })).toMatchObject({ name: "agent-memory", description: "The support agent's memory", customInstructions: "", customCategories: [] });
    const before = (await currentSpec()).steps.find((s) => s.name === "facts")!.prompt!;

    expect(await mem0.updateProject({ customInstructions: "Only keep facts about food." })).toMatchObject({ message: expect.any(String) });
    expect(await mem0.getProject({ fields: ["custom_instructions"] })).toEqual({ customInstructions: "Only keep facts about food." });
    const prompt = (await currentSpec()).steps.find((s) => s.name === "facts")!.prompt!;
    expect(prompt.startsWith(before)).toBe(true);
    expect(prompt.endsWith("Only keep facts about food.")).toBe(true);

    await mem0.updateProject({ customInstructions: "" });
    expect((await currentSpec()).steps.find((s) => s.name === "facts")!.prompt).toBe(before);
  }, 60_000);

  it("refuses what a pipeline has no place for, another project, and an update main's protection does not allow", async () => {
    const org = ((await (await raw("GET", "/v1/ping/")).json()) as { org_id: string }).org_id;
    const path = (project: string) => `/api/v1/orgs/organizations/${org}/projects/${project}/`;
    const categories = await raw("PATCH", path("agent-memory"), { custom_categories: [{ food: "what the user eats" }] });
    expect(categories.status).toBe(400);
    expect((await categories.json()).detail).toMatch(/custom_categories: not supported by Synthex \(categories are not kept/);
    const wrongType = await raw("PATCH", path("agent-memory"), { custom_instructions: 42 });
    expect(wrongType.status).toBe(400);
    expect((await wrongType.json()).detail).toMatch(/^custom_instructions: the instructions as text/);
    const other = await raw("GET", path("someone-else"));
    expect(other.status).toBe(404);
    await expect(client(viewerKey).updateProject({ customInstructions: "x" })).rejects.toThrow(/Your role \(viewer\)/);
    // As in the app: an editor reads the project but cannot save the protected main.
    expect(await client(editorKey).getProject({ fields: ["custom_instructions"] })).toEqual({ customInstructions: "" });
    await expect(client(editorKey).updateProject({ customInstructions: "x" })).rejects.toThrow(/Main is protected on pipeline .{1,4}agent-memory.{1,4}: your role \(editor\) cannot save on it/);
  }, 60_000);
});

describe("Mem0 webhooks = the pipeline's projection webhooks (issue 49)", () => {
  it("create, list, update and delete a webhook: a projection output of the memory step with that URL", async () => {
    const mem0 = client();
    const created = await mem0.createWebhook({ name: "Memory changes", url: "https://example.com/hooks/mem0", eventTypes: [WebhookEvent.MEMORY_ADDED, WebhookEvent.MEMORY_UPDATED] });
    expect(created.webhookId).toMatch(/^mem0-webhook-[0-9a-f]{8}$/);
    const output = (await currentSpec()).outputs.find((o) => o.name === created.webhookId);
    expect(output).toMatchObject({ from: "memories", surface: "projection", webhook: { url: "https://example.com/hooks/mem0" } });

    const listed = (await mem0.getWebhooks()).find((w) => w.webhookId === created.webhookId);
    expect(listed).toMatchObject({ name: "Memory changes", url: "https://example.com/hooks/mem0", isActive: true, project: "agent-memory" });
    expect(listed!.eventTypes!.sort()).toEqual(["memory_add", "memory_update"]);

    expect(await mem0.updateWebhook({ webhookId: created.webhookId!, name: "Deletions", url: "https://example.com/hooks/deleted", eventTypes: [WebhookEvent.MEMORY_DELETED] })).toMatchObject({ message: expect.any(String) });
    expect((await mem0.getWebhooks()).find((w) => w.webhookId === created.webhookId)).toMatchObject({ name: "Deletions", url: "https://example.com/hooks/deleted", eventTypes: ["memory_delete"] });
    expect((await currentSpec()).outputs.find((o) => o.name === created.webhookId)?.webhook).toEqual({ url: "https://example.com/hooks/deleted" });

    expect(await mem0.deleteWebhook({ webhookId: created.webhookId! })).toMatchObject({ message: expect.any(String) });
    expect((await mem0.getWebhooks()).find((w) => w.webhookId === created.webhookId)).toBeUndefined();
    expect((await currentSpec()).outputs.map((o) => o.name)).toEqual(["search"]);
  }, 60_000);

  it("a webhook made with createWebhook is delivered, signed, when an add changes the memories", async () => {
    const received: Array<{ headers: Record<string, unknown>; body: Record<string, unknown> }> = [];
    const receiver = createServer((req, res) => {
      let text = "";
      req.on("data", (d: Buffer) => (text += d.toString()));
      req.on("end", () => {
        received.push({ headers: req.headers, body: JSON.parse(text) as Record<string, unknown> });
        res.end("ok");
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const created = await client().createWebhook({ name: "Local", url, eventTypes: [WebhookEvent.MEMORY_ADDED] });
      await addAndWait([{ role: "user", content: "I sail a small wooden dinghy on the lake." }], "hook-user");
      for (let i = 0; i < 300 && !received.some((r) => r.body.scope === "user:hook-user"); i++) await new Promise((r) => setTimeout(r, 100));
      const delivery = received.find((r) => r.body.scope === "user:hook-user");
      expect(delivery?.body).toMatchObject({ event: "projection.updated", output: created.webhookId, scope: "user:hook-user", text: expect.stringMatching(/dinghy/) });
      expect(delivery?.headers["x-synthex-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
      await client().deleteWebhook({ webhookId: created.webhookId! });
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  }, 120_000);

  it("refuses a bad URL, an unknown event type and an unknown webhook, each saying what is wrong", async () => {
    const project = `/api/v1/webhooks/projects/agent-memory/`;
    const badUrl = await raw("POST", project, { name: "x", url: "ftp://example.com", event_types: ["memory_add"] });
    expect(badUrl.status).toBe(400);
    expect((await badUrl.json()).detail).toMatch(/^url: an http\(s\) URL/);
    const categorize = await raw("POST", project, { name: "x", url: "https://example.com/x", event_types: ["memory_categorize"] });
    expect(categorize.status).toBe(400);
    expect((await categorize.json()).detail).toMatch(/^event_types: .*memory_categorize: memories keep no categories/);
    const unknown = await raw("DELETE", "/api/v1/webhooks/mem0-webhook-00000000/");
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).detail).toMatch(/Webhook mem0-webhook-00000000 not found/);
  }, 60_000);
});

describe("Mem0 search and quickstart, offline (issue 49)", () => {
  it("Mem0's quickstart finds its fact; an OR filter searches the user its branch names", async () => {
    await addAndWait(
      [
        { role: "user", content: "I'm a vegetarian and allergic to nuts." },
        { role: "assistant", content: "Got it! I'll remember your dietary preferences." },
      ],
      "quickstart-user",
    );
    await addAndWait([{ role: "user", content: "My favourite colour is blue." }], "someone-else");
    // As Mem0's own suite does (waitForSearchResults): the search index may follow the memories by a moment.
    const search = async (query: string, filters: object) => {
      for (let i = 0; ; i++) {
        const r = (await client().search(query, { filters })) as unknown as { results: Array<{ memory: string; userId: string }> };
        if (r.results.length || i === 50) return r.results;
        await new Promise((done) => setTimeout(done, 200));
      }
    };
    const found = await search("What are my dietary restrictions?", { user_id: "quickstart-user" });
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]!.memory).toMatch(/vegetarian|allergic to nuts/i);
    expect(found.map((m) => m.memory).join(" ")).not.toMatch(/Got it|remember your dietary/);

    const or = await search("What do you know about me?", { OR: [{ user_id: "quickstart-user" }] });
    expect(or.length).toBeGreaterThan(0);
    expect(or.every((m) => m.userId === "quickstart-user")).toBe(true);
    const both = await search("What do you know about me?", { OR: [{ user_id: "quickstart-user" }, { user_id: "someone-else" }] });
    expect(new Set(both.map((m) => m.userId))).toEqual(new Set(["quickstart-user", "someone-else"]));
  }, 120_000);
});
