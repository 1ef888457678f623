/**
 * Issue 22, item 1: the isolation matrix, generated from the router. Every tRPC procedure of
 * `appRouter` (over the fetch adapter, as the browser calls it) and every REST route (through the
 * real `/api/v1` route handler) is called by every actor that must be refused:
 *
 *   (a) a member of another workspace, naming workspace A        → NOT_FOUND
 *   (a') the same member in their own workspace, with A's ids    → refused, or an answer with nothing of A
 *   (b) another workspace's API key, naming workspace A          → NOT_FOUND
 *   (b') the same key (its workspace implied), with A's ids      → refused, or an answer with nothing of A
 *   (c) each role below the declared permission, person and key  → FORBIDDEN
 *   (d) no credentials                                           → UNAUTHORIZED
 *   (e) a key limited to a scope, on a pipeline merging two scopes → no content of the other scope
 *   (f) the key of a member removed since                       → UNAUTHORIZED
 *   (g) the key of a member demoted to viewer since              → FORBIDDEN above a viewer
 *   (h) the invite of a member removed or demoted since           → NOT_FOUND (as a revoked invite)
 *   (i) a viewer, after a purge, on the eval reads of a question about the purged data → no purged text
 *
 * Refusals carry no data of workspace A, and workspace A's rows are the same after the matrix.
 * A procedure must declare who may call it (`workspaceProcedure(permission)`, or a builder listed
 * in NOT_WORKSPACE_SCOPED below with a reason): one that does not fails the first test, so
 * procedures added later join the matrix or break it.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";

const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-matrix-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
process.env.SYNTHEX_ENCRYPTION_KEY ??= "test-encryption-secret-for-the-matrix";
delete process.env.DATABASE_URL;

const { openMigratedDb } = await import("@/server/store/runtime-env");
const { closeDb } = await import("@/server/store/db");
const { appRouter, createCaller } = await import("@/server/api/root");
const { createContext, createTRPCRouter, publicProcedure, authedProcedure, workspaceProcedure } = await import("@/server/api/trpc");
const { appRestEndpoints } = await import("@/server/api/rest-app");
const { handleRest } = await import("@/server/api/rest");
const { can, PERMISSIONS, ROLES } = await import("@/server/auth/permissions");
const { signUp } = await import("@/server/services/users");
const { createApiKey } = await import("@/server/services/api-keys");
const { createPipeline, templateSpec } = await import("@/server/services/pipelines");
const { importFile } = await import("@/server/services/imports");
const { runPipeline } = await import("@/server/services/runs");
const { createEvalRun } = await import("@/server/eval/service");
const { ingestMessages } = await import("@/server/services/ingest");
const restRoute = await import("@/app/api/v1/[...path]/route");

type Db = Awaited<ReturnType<typeof openMigratedDb>>;
type Role = (typeof ROLES)[number];
type AnyRouter = { _def: { procedures: Record<string, unknown> } };
interface ProcDef {
  type: "query" | "mutation" | "subscription";
  inputs: unknown[];
  meta?: { access?: string; permission?: string };
}

/**
 * Procedures not scoped to one workspace, and why. Anything else must be a workspace procedure
 * with a declared permission; adding one here is a decision a reviewer sees.
 */
const NOT_WORKSPACE_SCOPED: Record<string, { access: "public" | "user" | "authed"; why: string }> = {
  "user.signUp": { access: "public", why: "creating an account; answers the same for known and new emails" },
  "invite.preview": { access: "public", why: "the invite page before sign-in; the secret token is the capability" },
  "invite.accept": { access: "user", why: "the token is the capability; joins the signed-in person" },
  "user.me": { access: "user", why: "the caller's own account" },
  "user.updateProfile": { access: "user", why: "the caller's own account" },
  "user.signOutEverywhere": { access: "user", why: "ends the caller's own sessions" },
  "workspace.list": { access: "user", why: "the caller's own memberships" },
  "workspace.create": { access: "user", why: "a new workspace owned by the caller" },
  "workspace.leave": { access: "user", why: "the caller's own membership (not found when not a member)" },
  "workspace.current": { access: "authed", why: "an API key's own workspace" },
};

function proceduresOf(router: AnyRouter): Array<[string, ProcDef]> {
  return Object.entries(router._def.procedures).map(([name, p]) => [name, (p as { _def: ProcDef })._def]);
}

/** What is wrong with the router's declarations: empty when every procedure says who may call it. */
function undeclared(router: AnyRouter): string[] {
  const problems: string[] = [];
  for (const [name, def] of proceduresOf(router)) {
    const access = def.meta?.access;
    if (access === "workspace") {
      if (!(PERMISSIONS as readonly string[]).includes(def.meta?.permission ?? "")) problems.push(`${name}: workspace procedure without a known permission`);
    } else if (NOT_WORKSPACE_SCOPED[name]?.access !== access) {
      problems.push(`${name}: ${access ?? "no"} access declared, and not listed in NOT_WORKSPACE_SCOPED`);
    }
  }
  return problems;
}

// ------------------------------------------------------------------------------------------------
// Inputs: one valid input per procedure, generated from its zod schemas, with A's ids by field name.

type Values = Record<string, unknown>;

function sample(schema: z.ZodType, key: string | undefined, values: Values): unknown {
  if (key !== undefined && key in values) return values[key];
  const s = schema as z.ZodType & { minLength?: number | null; format?: string | null; minValue?: number | null; isInt?: boolean };
  const def = s._zod.def as unknown as Record<string, unknown> & { type: string };
  switch (def.type) {
    case "optional":
    case "default":
    case "prefault":
      return undefined;
    case "nullable":
      return sample(def.innerType as z.ZodType, key, values);
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries((def.shape as Record<string, z.ZodType>) ?? {})) {
        const value = sample(v, k, values);
        if (value !== undefined) out[k] = value;
      }
      return out;
    }
    case "string":
      if (s.format === "email") return "someone@example.com";
      if (s.format === "url") return "https://example.com";
      return "x".repeat(Math.max(1, s.minLength ?? 1));
    case "number":
      return Math.max(1, s.minValue ?? 1);
    case "boolean":
      return false;
    case "enum":
      return Object.values(def.entries as Record<string, unknown>)[0];
    case "literal":
      return (def.values as unknown[])[0];
    case "array": {
      const min = ((def.checks as Array<{ _zod: { def: { check: string; minimum?: number } } }> | undefined) ?? []).find((c) => c._zod.def.check === "min_length")?._zod.def.minimum ?? 0;
      return Array.from({ length: min }, () => sample(def.element as z.ZodType, undefined, values));
    }
    case "union":
      return sample((def.options as z.ZodType[])[0]!, key, values);
    case "record":
      return {};
    case "date":
      return new Date();
    case "pipe":
      return sample(def.in as z.ZodType, key, values);
    case "lazy":
      return sample((def.getter as () => z.ZodType)(), key, values);
    default:
      return {};
  }
}

function inputFor(def: ProcDef, values: Values, name?: string): Record<string, unknown> {
  if (name && PER_PROCEDURE[name]) values = { ...values, ...PER_PROCEDURE[name] };
  const shape = Object.assign({}, ...def.inputs.filter((s): s is z.ZodObject => s instanceof z.ZodObject).map((s) => s.shape)) as Record<string, z.ZodType>;
  return sample(z.object(shape), undefined, values) as Record<string, unknown>;
}

// ------------------------------------------------------------------------------------------------
// Actors and calls

type Credentials = { session: { userId: string; email: string } | null; key: string | null };
interface Outcome {
  status: number;
  code: string | null;
  body: string;
}

let db: Db;

/** One tRPC call over the fetch adapter, exactly as `/api/trpc` answers it (superjson both ways). */
async function callTrpc(name: string, def: ProcDef, input: unknown, who: Credentials): Promise<Outcome> {
  const encoded = superjson.serialize(input);
  const headers: Record<string, string> = who.key ? { authorization: `Bearer ${who.key}` } : {};
  const req =
    def.type === "query"
      ? new Request(`http://localhost/api/trpc/${name}?input=${encodeURIComponent(JSON.stringify(encoded))}`, { headers })
      : new Request(`http://localhost/api/trpc/${name}`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(encoded) });
  const res = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: () => createContext({ db, session: who.session, authorization: req.headers.get("authorization") }),
    onError: () => {},
  });
  const body = await res.text();
  const parsed = JSON.parse(body) as { error?: { json?: { data?: { code?: string } } } };
  return { status: res.status, code: parsed.error?.json?.data?.code ?? null, body };
}

/** One REST call: through the real route handler with a key or nothing; with a person's session through the same handler code. */
async function callRest(method: string, url: string, body: unknown, who: Credentials): Promise<Outcome> {
  const headers: Record<string, string> = who.key ? { authorization: `Bearer ${who.key}` } : {};
  if (method === "POST") headers["content-type"] = "application/json";
  const req = new Request(`http://localhost/api/v1${url}`, { method, headers, body: method === "POST" ? JSON.stringify(body ?? {}) : undefined });
  let res: Response;
  if (!who.key) {
    // Without a key the route resolves the session cookie with next-auth, which needs Next's request
    // scope: the session (or none) is given here, and the rest is the route's own handler.
    res = await handleRest({ router: appRouter, endpoints: appRestEndpoints(), req, path: url.split("?")[0]!, createContext: () => createContext({ db, session: who.session }) });
  } else {
    const handler = method === "GET" ? restRoute.GET : method === "POST" ? restRoute.POST : restRoute.DELETE;
    res = await handler(req);
  }
  const text = await res.text();
  const parsed = JSON.parse(text) as { error?: { code?: string } };
  return { status: res.status, code: parsed.error?.code ?? null, body: text };
}

/**
 * Queries the generated input cannot answer even for A's owner: the fixture's eval has not run (no
 * cases, no scores to compare), and its pipeline has no consolidate step (no memory history).
 */
const CONTROL_UNANSWERED: string[] = [
  "evals.compare BAD_REQUEST",
  "evals.retry BAD_REQUEST",
  "evals.case NOT_FOUND",
  "record.history BAD_REQUEST",
  "record.deletedMemories BAD_REQUEST",
];

/** Field values for one procedure where a field name means something else there. */
const PER_PROCEDURE: Record<string, Values> = {
  // Diff of a branch against main (the same branch twice is refused).
  "branch.diff": { branch: "zebra-branch" },
  "branch.pairs": { branch: "zebra-branch" },
  // `output` and `step` name a projection and a step elsewhere; search takes its defaults.
  "search.search": { output: undefined, step: undefined },
  // A walk starts from a derived step of the chat-memory pipeline, in any scope.
  "search.walk": { from: "world-model", scope: undefined },
};

const STATUS: Record<string, number> = { NOT_FOUND: 404, FORBIDDEN: 403, UNAUTHORIZED: 401 };

describe("isolation matrix", () => {
  /** Strings only workspace A's data contains: none may appear in an answer to another actor. */
  const secrets: string[] = [];
  const A: Values = {};
  let workspaceA = "";
  let sessions: Record<"ownerA" | "memberB", Credentials>;
  const roleSessions = {} as Record<Role, Credentials>;
  const roleKeys = {} as Record<Role, Credentials>;
  let keyB: Credentials;
  const anonymous: Credentials = { session: null, key: null };
  let fingerprintBefore = "";
  const pairs = { trpc: 0, rest: 0 };

  /** Everything of workspace A a refused call could have changed. */
  async function fingerprint() {
    const where = { workspaceId: workspaceA };
    const rows = await Promise.all([
      db.workspace.findUnique({ where: { id: workspaceA } }),
      db.membership.findMany({ where, orderBy: { id: "asc" } }),
      db.invite.findMany({ where, orderBy: { id: "asc" } }),
      db.apiKey.findMany({ where, orderBy: { id: "asc" }, select: { id: true, name: true, role: true, revokedAt: true } }),
      db.pipeline.findMany({ where, orderBy: { id: "asc" } }),
      db.pipelineVersion.count({ where }),
      db.branch.findMany({ where, orderBy: { id: "asc" }, select: { id: true, name: true, versionId: true } }),
      db.record.count({ where }),
      db.run.findMany({ where, orderBy: { id: "asc" }, select: { id: true, status: true, cancelRequested: true } }),
      db.providerCredential.findMany({ where, orderBy: { id: "asc" } }),
      db.modelPrice.findMany({ where, orderBy: { id: "asc" } }),
      db.evalDataset.count({ where }),
      db.evalQuestionSet.findMany({ where, orderBy: { id: "asc" } }),
      db.evalRun.count({ where }),
      db.auditEvent.count({ where }),
      // Answers the matrix legitimately gets from A (a scope-limited key of A) are logged: only labels must not change.
      db.queryLogEntry.findMany({ where: { ...where, labelRecordId: { not: null } }, orderBy: { id: "asc" } }),
      db.queryLogConfig.findMany({ where }),
      db.sourceInbox.findMany({ where }),
      // Shadows of A (its owner's answered searches add results and counts: only the settings must not change).
      db.shadowTraffic.findMany({ where, orderBy: { id: "asc" }, select: { id: true, branch: true, startsAt: true, endsAt: true, stoppedAt: true } }),
    ]);
    return JSON.stringify(rows);
  }

  beforeAll(async () => {
    db = await openMigratedDb();
    const a = await signUp(db, { email: "owner-a@matrix.test", password: "matrix-password-a" });
    const b = await signUp(db, { email: "member-b@matrix.test", password: "matrix-password-b" });
    workspaceA = a.workspace.id;
    await db.workspace.update({ where: { id: workspaceA }, data: { name: "Zebra Secret Workspace" } });
    sessions = { ownerA: { session: { userId: a.user.id, email: a.user.email }, key: null }, memberB: { session: { userId: b.user.id, email: b.user.email }, key: null } };
    keyB = { session: null, key: (await createApiKey(db, b.workspace.id, { userId: b.user.id, role: "owner" }, { name: "b-owner-key", role: "owner" })).secret };
    for (const role of ROLES) {
      const person = role === "owner" ? a : await signUp(db, { email: `${role}-a@matrix.test`, password: `matrix-password-${role}` });
      if (role !== "owner") await db.membership.create({ data: { workspaceId: workspaceA, userId: person.user.id, role } });
      roleSessions[role] = { session: { userId: person.user.id, email: person.user.email }, key: null };
      roleKeys[role] = { session: null, key: (await createApiKey(db, workspaceA, { userId: a.user.id, role: "owner" }, { name: `a-${role}-key`, role })).secret };
    }

    // Workspace A's data, made by its owner through the same procedures.
    const owner = createCaller(await createContext({ db, session: sessions.ownerA.session }));
    const { pipeline } = await createPipeline(db, workspaceA, { name: "zebra-memory", spec: templateSpec("chat-memory") });
    await importFile(db, { workspaceId: workspaceA, pipelineId: pipeline.id, source: "chats", path: path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json") });
    const run = await runPipeline(db, { workspaceId: workspaceA, pipelineId: pipeline.id });
    const record = await db.record.findFirstOrThrow({ where: { pipelineId: pipeline.id, step: "summaries" } });
    await ingestMessages(db, { workspaceId: workspaceA, pipelineId: pipeline.id, source: "chats" }, { sessionId: "zebra-session", scope: "zebra-scope", messages: [{ role: "user", content: "zebra-7731 is the door code" }] });
    await owner.branch.create({ workspaceId: workspaceA, pipelineId: pipeline.id, name: "zebra-branch" });
    const invite = await owner.invite.create({ workspaceId: workspaceA, role: "viewer" });
    const key = await owner.apiKey.create({ workspaceId: workspaceA, name: "zebra-key" });
    await owner.provider.upsert({ workspaceId: workspaceA, name: "zebracorp", kind: "openai-compatible", baseUrl: "https://zebra-models.example.com/v1", apiKey: "sk-zebra-secret" });
    await owner.provider.setPrice({ workspaceId: workspaceA, model: "zebracorp/zebra-model", inputPerMillion: 1, outputPerMillion: 2 });
    const set = await owner.evals.addToQuestionSet({ workspaceId: workspaceA, set: "zebra-questions", question: "What is the zebra door code?", recordIds: [record.id] });
    const members = await owner.member.list({ workspaceId: workspaceA });
    const memberId = members.find((m) => m.role === "viewer")!.id;
    const evalRun = await createEvalRun(db, { workspaceId: workspaceA, pipeline: pipeline.id, questionSet: "zebra-questions" });
    // Issue 37: a logged query of A (its text and scope must never reach another workspace) and an inbox folder (issue 35).
    await db.queryLogConfig.create({ data: { workspaceId: workspaceA, pipelineId: pipeline.id, enabled: true } });
    const logged = await db.queryLogEntry.create({
      data: { workspaceId: workspaceA, pipelineId: pipeline.id, surface: "rest", kind: "search", caller: "user:a", scope: "zebra-scope", query: "zebra-7731 door code", branch: "main", latencyMs: 3, recordIds: [record.id], cited: [] },
    });
    await db.sourceInbox.create({ data: { workspaceId: workspaceA, pipelineId: pipeline.id, source: "chats", path: dataDir } });
    // Issue 37: zebra-branch shadows main; its result quotes A's query and names A's record.
    const shadow = await db.shadowTraffic.create({ data: { workspaceId: workspaceA, pipelineId: pipeline.id, branch: "zebra-branch", endsAt: new Date(Date.now() + 86_400_000), createdBy: "user:a" } });
    await db.shadowResult.create({
      data: { workspaceId: workspaceA, pipelineId: pipeline.id, shadowId: shadow.id, kind: "search", query: "zebra-7731 door code", scope: "zebra-scope", k: 5, main: { ids: [record.id], latencyMs: 3 }, branch: { ids: [record.id], latencyMs: 4 }, cited: [], recordIds: [record.id] },
    });
    // The compare views read completed runs: the same run, completed with one question (no build needed).
    const queued = await db.evalRun.findUniqueOrThrow({ where: { id: evalRun.id }, omit: { id: true, createdAt: true, aggregates: true } });
    const scored = await db.evalRun.create({ data: { ...queued, status: "completed", judge: {}, progress: {}, metrics: {}, perCategory: {}, cost: {}, latency: {}, skips: [] } });
    await db.evalCase.create({ data: { workspaceId: workspaceA, evalRunId: scored.id, position: 0, questionId: "zebra-q1", sample: "zebra", category: "team", question: "What is the zebra door code?", gold: "zebra-7731", evidence: { turns: [], sessions: [] }, scores: { "session_hit@5": 1 } } });
    Object.assign(PER_PROCEDURE, {
      "log.label": { entryId: logged.id, recordId: record.id },
      "shadow.start": { branch: "zebra-branch", minutes: 60 },
      "shadow.stop": { branch: "zebra-branch" },
      "shadow.report": { branch: "zebra-branch", id: undefined },
      "source.setInbox": { source: "chats", path: null },
      "evals.questionSet": { id: set.set.id },
      "evals.get": { id: evalRun.id },
      "evals.cancel": { id: evalRun.id },
      "evals.compare": { baselineId: evalRun.id, otherIds: [evalRun.id] },
      "evals.leaderboard": { runIds: [evalRun.id] },
      "evals.retry": { id: evalRun.id },
      "evals.compareCharts": { baselineId: scored.id, otherIds: [scored.id] },
      "evals.compareQuestions": { baselineId: scored.id, otherId: scored.id },
      "evals.question": { runIds: [scored.id], questionId: "zebra-q1" },
    });
    const versions = await owner.pipeline.versions({ workspaceId: workspaceA, pipelineId: pipeline.id });
    // The entity graph's reads need a pipeline that builds one (synapsis), with an entity and a belief of it.
    const graph = await createPipeline(db, workspaceA, { name: "zebra-graph", spec: templateSpec("synapsis") });
    await importFile(db, { workspaceId: workspaceA, pipelineId: graph.pipeline.id, source: "sessions", path: path.join(import.meta.dirname, "../../e2e/fixtures/chatgpt-export.json") });
    await runPipeline(db, { workspaceId: workspaceA, pipelineId: graph.pipeline.id });
    // A graph step also writes a manifest record per scope: pick an entity and a belief themselves.
    const custom = (r: { metadata: unknown }) => (r.metadata as { custom?: { entity?: { id: string }; belief?: { id: string } } }).custom;
    const graphRecords = await db.record.findMany({ where: { pipelineId: graph.pipeline.id, step: { in: ["entities", "relations"] } }, orderBy: { id: "asc" } });
    const entityRecord = graphRecords.find((r) => custom(r)?.entity?.id)!;
    const beliefRecord = graphRecords.find((r) => custom(r)?.belief?.id)!;
    expect(entityRecord && beliefRecord, "the synapsis pipeline built an entity and a belief").toBeTruthy();
    const entityId = custom(entityRecord)!.entity!.id;
    const beliefId = custom(beliefRecord)!.belief!.id;
    for (const proc of ["graph.entities", "graph.entity", "graph.belief", "graph.beliefs", "graph.insights"]) {
      PER_PROCEDURE[proc] = { pipelineId: graph.pipeline.id, scope: undefined, entityId, beliefId, ids: [beliefId] };
    }

    // The memory API reads a consolidate step: a mem0 pipeline with one memory of the zebra scope.
    const mem0 = await createPipeline(db, workspaceA, { name: "zebra-mem0", spec: templateSpec("mem0") });
    const closed = await ingestMessages(db, { workspaceId: workspaceA, pipelineId: mem0.pipeline.id, source: "chats" }, { sessionId: "zebra-mem0-session", scope: "zebra-scope", messages: [{ role: "user", content: "zebra-7731 opens the mem0 door" }], close: true });
    // Closing the session started its run.
    await (await import("@/server/services/background")).settleBackgroundWork();
    // The step writes memory records and bookkeeping ones (no metadata.memory): pick a memory itself.
    const memoryOf = (r: { metadata: unknown }) => (r.metadata as { memory?: { id: string } }).memory;
    const memories = await db.record.findMany({ where: { pipelineId: mem0.pipeline.id, step: "memories", content: { contains: "zebra-7731", mode: "insensitive" } }, orderBy: { id: "asc" } });
    const memory = memories.find((r) => memoryOf(r)?.id);
    expect(memory, "the mem0 pipeline made a memory of the zebra scope").toBeTruthy();
    for (const proc of ["memory.list", "memory.get", "memory.ofSource", "memory.sessions", "memory.update", "memory.delete"]) {
      PER_PROCEDURE[proc] = { pipelineId: mem0.pipeline.id, step: undefined, id: memory!.id, memoryId: memoryOf(memory!)!.id, recordId: closed.recordId!, idPrefix: undefined };
    }

    Object.assign(A, {
      workspaceId: workspaceA,
      pipelineId: pipeline.id,
      branch: "main",
      id: record.id,
      recordIds: [record.id],
      runId: run.id,
      keyId: key.id,
      inviteId: invite.id,
      memberId,
      name: "zebracorp",
      model: "zebracorp/zebra-model",
      source: "chats",
      sessionId: "zebra-session",
      scope: "zebra-scope",
      output: "context",
      step: "summaries",
      setId: set.set.id,
      questionId: set.question.id,
      questionSet: "zebra-questions",
      fromVersionId: versions.at(-1)?.id ?? "v",
      toVersionId: versions[0]?.id ?? "v",
      versionId: versions.at(-1)?.id ?? "v",
      token: "not-a-real-invite-token",
      query: "door code",
      role: "viewer",
    });
    secrets.push("Zebra Secret Workspace", a.workspace.slug, "zebra-memory", "zebra-7731", "zebra-branch", "zebra-key", "zebra-models.example.com", "sk-zebra-secret", "zebra-questions", "owner-a@matrix.test", pipeline.id, record.id, run.id, key.id, invite.id, graph.pipeline.id, entityRecord.id, beliefRecord.id);
    fingerprintBefore = await fingerprint();
  }, 240_000);

  afterAll(async () => {
    console.log(`isolation matrix: ${pairs.trpc} tRPC procedure × actor calls, ${pairs.rest} REST route × actor calls, ${pairs.trpc + pairs.rest} in all`);
    await closeDb();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** No string of A in the answer, except ids the caller sent itself (an error may name what it could not find). */
  function expectNoSecrets(what: string, body: string, sent: unknown) {
    // Case-insensitive: an operator may capitalise a fact's first word ("Zebra-7731 opens …").
    const echoed = JSON.stringify(sent ?? null).toLowerCase();
    const lower = body.toLowerCase();
    for (const s of secrets) {
      if (echoed.includes(s.toLowerCase())) continue;
      expect(lower.includes(s.toLowerCase()), `${what}: the answer contains "${s}" of workspace A: ${body.slice(0, 300)}`).toBe(false);
    }
  }

  function expectRefused(what: string, outcome: Outcome, code: string, sent: unknown) {
    expect({ what, status: outcome.status, code: outcome.code }).toEqual({ what, status: STATUS[code], code });
    expectNoSecrets(what, outcome.body, sent);
  }

  /** (a') and (b'): refused, or an answer of the caller's own workspace with nothing of A. */
  function expectNothingOfA(what: string, outcome: Outcome, sent: unknown) {
    if (outcome.status >= 400) expect({ what, code: outcome.code }).toEqual({ what, code: expect.stringMatching(/^(NOT_FOUND|BAD_REQUEST|FORBIDDEN|CONFLICT)$/) });
    expectNoSecrets(what, outcome.body, sent);
  }

  it("every procedure declares who may call it; an undeclared one is reported", () => {
    expect(undeclared(appRouter as unknown as AnyRouter)).toEqual([]);
    // A procedure someone adds later without a permission is caught by the same check.
    const grown = createTRPCRouter({
      leaky: publicProcedure.query(() => "everything"),
      loggedIn: authedProcedure.query(() => "everything"),
      fine: workspaceProcedure("pipelines:read").query(() => "mine"),
    });
    expect(undeclared(grown as unknown as AnyRouter)).toEqual([
      "leaky: public access declared, and not listed in NOT_WORKSPACE_SCOPED",
      "loggedIn: authed access declared, and not listed in NOT_WORKSPACE_SCOPED",
    ]);
  });

  it("refuses every tRPC procedure to other workspaces, lower roles and anonymous callers, with no data of A", async () => {
    const procedures = proceduresOf(appRouter as unknown as AnyRouter);
    expect(procedures.length).toBeGreaterThanOrEqual(70);
    // Control: A's owner gets answers to the same generated inputs, so the refusals below are
    // isolation, not inputs that could never have worked.
    const answered: string[] = [];
    const unanswered: string[] = [];
    for (const [name, def] of procedures) {
      if (def.meta?.access !== "workspace" || def.type !== "query") continue;
      const outcome = await callTrpc(name, def, inputFor(def, A, name), sessions.ownerA);
      (outcome.status === 200 ? answered : unanswered).push(`${name} ${outcome.code ?? ""}`.trim());
    }
    // Known: what the fixture cannot answer. A new query the generated input cannot answer is
    // listed here, and the control fails once more than a tenth of the queries go unanswered.
    const unexpected = unanswered.filter((u) => !CONTROL_UNANSWERED.includes(u));
    if (unexpected.length) console.warn(`isolation matrix control: A's owner got no answer from ${unexpected.join(", ")} (add fixture values in PER_PROCEDURE)`);
    expect(answered.length).toBeGreaterThanOrEqual(30);
    expect(unanswered.length / (answered.length + unanswered.length)).toBeLessThan(0.1);
    for (const [name, def] of procedures) {
      const input = inputFor(def, A, name);
      if (def.meta?.access === "workspace") {
        const permission = def.meta.permission as (typeof PERMISSIONS)[number];
        const calls: Array<[string, Credentials, Record<string, unknown>, string | null]> = [
          ["(a) member of B", sessions.memberB, input, "NOT_FOUND"],
          ["(b) key of B", keyB, input, "NOT_FOUND"],
          ["(d) anonymous", anonymous, input, "UNAUTHORIZED"],
          ["(a') member of B in B with A's ids", sessions.memberB, { ...input, workspaceId: undefined }, null],
          ["(b') key of B with A's ids", keyB, { ...input, workspaceId: undefined }, null],
        ];
        // (a') names B explicitly: a person must say which workspace.
        const own = await db.membership.findFirstOrThrow({ where: { userId: sessions.memberB.session!.userId } });
        calls[3]![2] = { ...input, workspaceId: own.workspaceId };
        for (const role of ROLES.filter((r) => !can(r, permission))) {
          calls.push([`(c) ${role} of A`, roleSessions[role], input, "FORBIDDEN"]);
          calls.push([`(c) ${role} key of A`, roleKeys[role], input, "FORBIDDEN"]);
        }
        for (const [actor, who, callInput, code] of calls) {
          const outcome = await callTrpc(name, def, callInput, who);
          pairs.trpc += 1;
          if (code) expectRefused(`${name} ${actor}`, outcome, code, callInput);
          else expectNothingOfA(`${name} ${actor}`, outcome, callInput);
        }
      } else {
        const access = def.meta?.access;
        // Not workspace-scoped: anonymous callers are refused unless public; keys cannot act as people.
        if (access !== "public") {
          expectRefused(`${name} (d) anonymous`, await callTrpc(name, def, input, anonymous), "UNAUTHORIZED", input);
          pairs.trpc += 1;
        }
        if (access === "user") {
          expectRefused(`${name} (b) key of B`, await callTrpc(name, def, input, keyB), "FORBIDDEN", input);
          pairs.trpc += 1;
        }
        const asB = await callTrpc(name, def, input, access === "authed" ? keyB : sessions.memberB);
        pairs.trpc += 1;
        if (name === "workspace.leave") expectRefused(`${name} (a) member of B`, asB, "NOT_FOUND", input);
        else expectNothingOfA(`${name} (a) another workspace's actor`, asB, input);
      }
    }
    expect(await fingerprint()).toBe(fingerprintBefore);
  }, 600_000);

  it("refuses every REST route to other workspaces, lower roles and anonymous callers, with only an error in the body", async () => {
    const endpoints = appRestEndpoints();
    expect(endpoints.length).toBeGreaterThanOrEqual(12);
    const own = await db.membership.findFirstOrThrow({ where: { userId: sessions.memberB.session!.userId } });
    for (const e of endpoints) {
      const def = (appRouter._def.procedures as unknown as Record<string, { _def: ProcDef }>)[e.procedure]!._def;
      const permission = def.meta!.permission as (typeof PERMISSIONS)[number];
      const build = (workspaceId: string | undefined) => {
        const input: Record<string, unknown> = { ...inputFor(def, A, e.procedure), workspaceId };
        const url = e.route.path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(String(input[p])));
        const rest = Object.fromEntries(Object.entries(input).filter(([k, v]) => !e.pathParams.includes(k) && v !== undefined));
        if (e.route.method === "POST") return { url, body: rest };
        const qs = new URLSearchParams();
        for (const [k, v] of Object.entries(rest)) {
          if (Array.isArray(v)) for (const item of v) qs.append(k, String(item));
          else if (typeof v !== "object") qs.append(k, String(v));
        }
        return { url: qs.size ? `${url}?${qs}` : url, body: undefined };
      };
      const calls: Array<[string, Credentials, string | undefined, string | null]> = [
        ["(a) member of B", sessions.memberB, workspaceA, "NOT_FOUND"],
        ["(b) key of B", keyB, workspaceA, "NOT_FOUND"],
        ["(d) anonymous", anonymous, workspaceA, "UNAUTHORIZED"],
        ["(a') member of B in B with A's ids", sessions.memberB, own.workspaceId, null],
        ["(b') key of B with A's ids", keyB, undefined, null],
      ];
      for (const role of ROLES.filter((r) => !can(r, permission))) {
        calls.push([`(c) ${role} of A`, roleSessions[role], workspaceA, "FORBIDDEN"]);
        calls.push([`(c) ${role} key of A`, roleKeys[role], undefined, "FORBIDDEN"]);
      }
      for (const [actor, who, workspaceId, code] of calls) {
        const { url, body } = build(workspaceId);
        const outcome = await callRest(e.route.method, url, body, who);
        pairs.rest += 1;
        const what = `${e.route.method} ${e.route.path} ${actor}`;
        if (code) {
          expectRefused(what, outcome, code, { url, body });
          expect(Object.keys(JSON.parse(outcome.body) as object)).toEqual(["error"]);
        } else expectNothingOfA(what, outcome, { url, body });
      }
    }
    expect(await fingerprint()).toBe(fingerprintBefore);
  }, 600_000);

  /**
   * Issue 30, item 1: a key limited to a scope, on a pipeline that merges two scopes' copies of one
   * conversation (workspace C, so A's fingerprint stays as it was). The merged record sits in the
   * key's scope with the other scope's copy as a source; every procedure and REST route the key can
   * call is called, and no answer holds the other scope's text, while the answers that return
   * records hold the key's own text.
   */
  describe("(e) a key limited to a scope, on a merge pipeline", () => {
    const OUT_OF_SCOPE = ["QUOKKA-SALES-5521", "Quokkacorp", "acme:sales"];
    const IN_SCOPE = "WOMBAT-ENG-3318";
    const C: Values = {};
    /** Where a field name means something else (as PER_PROCEDURE above): search reads its own output and steps, and `from` is a date there. */
    // A quick-added note (in the key's scope) holds this scope's marker: a note "x" would be the best evidence for ask's question "x".
    const inputC = (def: ProcDef, name: string) =>
      inputFor(def, { ...C, ...(name === "search.search" ? { output: undefined, step: undefined, from: undefined } : {}), ...(name === "ingest.addItem" ? { text: `A note of ${IN_SCOPE}.` } : {}) });
    let scopedKey: Credentials;
    let ownerKeyC: Credentials;

    beforeAll(async () => {
      const { Pipeline } = await import("@/server/pipeline/sdk");
      const { settleBackgroundWork } = await import("@/server/services/background");
      const c = await signUp(db, { email: "scope-owner@matrix.test", password: "matrix-password-c" });
      const spec = new Pipeline("scope-merge")
        .source("eng", { format: "api" })
        .source("sales", { format: "api" })
        .merge("merged", { from: ["eng", "sales"], dedupe: { metadataMatch: ["chat.conversation_id"] } })
        .split("turns", { from: "merged", operator: { kind: "turns", size: 1, stride: 1 } })
        .entities("entities", { from: "turns" })
        .relations("relations", { from: ["turns", "entities"] })
        .insights("proactive", { from: ["relations", "entities"] })
        .output("search", { from: ["merged", "turns", "relations", "entities"], surface: "search" })
        .output("context", { from: "merged", surface: "projection" })
        .toSpec();
      const { pipeline } = await createPipeline(db, c.workspace.id, { name: "scope-merge", spec });
      const target = (source: string) => ({ workspaceId: c.workspace.id, pipelineId: pipeline.id, source });
      // One customer call in both scopes (eng's copy is newer and wins the merge), and a sales-only deal.
      await ingestMessages(db, target("sales"), { sessionId: "call-1", scope: "acme:sales", messages: [{ role: "Dana", content: `QUOKKA-SALES-5521: Quokkacorp gets 40 percent off the ledger renewal.`, time: "2026-03-01T10:00:00Z" }] });
      await ingestMessages(db, target("eng"), { sessionId: "call-1", scope: "acme:eng", messages: [{ role: "Priya", content: `${IN_SCOPE}: Wombatco ships the ledger fix on Friday.`, time: "2026-03-02T10:00:00Z" }] });
      await ingestMessages(db, target("sales"), { sessionId: "deal-7", scope: "acme:sales", messages: [{ role: "Dana", content: "QUOKKA-SALES-5521: Quokkacorp renews the ledger before the audit.", time: "2026-03-03T10:00:00Z" }] });
      const { closeIdleSessions } = await import("@/server/services/ingest");
      await closeIdleSessions(db, { pipelineId: pipeline.id, now: new Date(Date.now() + 86_400_000), idleMs: 1 });
      await settleBackgroundWork();
      while (await db.run.findFirst({ where: { pipelineId: pipeline.id, status: { in: ["queued", "running"] } } })) await new Promise((r) => setTimeout(r, 100));
      const run = await runPipeline(db, { workspaceId: c.workspace.id, pipelineId: pipeline.id });
      const merged = await db.record.findFirstOrThrow({ where: { pipelineId: pipeline.id, step: "merged", scope: "acme:eng" } });
      const salesCopy = await db.record.findFirstOrThrow({ where: { pipelineId: pipeline.id, step: "sales", content: { contains: "40 percent" } } });
      // The leak's shape: an acme:eng record made from an acme:sales one.
      expect((await db.recordEdge.findMany({ where: { childId: merged.id } })).map((e) => e.parentId)).toContain(salesCopy.id);
      // Graph steps also write a manifest record per scope: pick an entity and a belief themselves.
      const graphMeta = (await db.record.findMany({ where: { pipelineId: pipeline.id, step: { in: ["entities", "relations"] }, scope: "acme:eng" }, orderBy: { id: "asc" } })).map(
        (r) => (r.metadata as { custom?: { entity?: { id: string }; belief?: { id: string } } }).custom,
      );
      const entityId = graphMeta.map((m) => m?.entity?.id).find(Boolean);
      const beliefId = graphMeta.map((m) => m?.belief?.id).find(Boolean) ?? "bel_none";
      expect(entityId, "the merge pipeline built an entity in acme:eng").toBeTruthy();
      const secret = async (name: string, limit: string | undefined) =>
        (await createApiKey(db, c.workspace.id, { userId: c.user.id, role: "owner" }, { name, role: "owner", ...(limit ? { scopePrefix: limit } : {}) })).secret;
      scopedKey = { session: null, key: await secret("eng-agent", "acme:eng") };
      ownerKeyC = { session: null, key: await secret("c-owner", undefined) };
      Object.assign(C, {
        workspaceId: c.workspace.id,
        pipelineId: pipeline.id,
        branch: "main",
        id: merged.id,
        recordIds: [merged.id],
        runId: run.id,
        source: "eng",
        // A conversation of both scopes: ingesting under it would pull the sales copy in (refused).
        sessionId: "call-1",
        scope: "acme:eng",
        output: "context",
        step: "merged",
        from: "turns",
        query: "ledger renewal",
        question: "What happens with the ledger renewal?",
        entityId: entityId!,
        beliefId,
        ids: [beliefId],
      });
    }, 240_000);

    function expectNothingOutOfScope(what: string, outcome: Outcome) {
      for (const s of OUT_OF_SCOPE) expect(outcome.body.includes(s), `${what}: the answer holds "${s}" of acme:sales: ${outcome.body.slice(0, 300)}`).toBe(false);
      if (outcome.status >= 400) expect({ what, code: outcome.code }).toEqual({ what, code: expect.stringMatching(/^(NOT_FOUND|BAD_REQUEST|FORBIDDEN|CONFLICT)$/) });
    }

    it("answers no tRPC procedure and no REST route with the other scope's content, and shows its own", async () => {
      const { settleBackgroundWork } = await import("@/server/services/background");
      // Control: the workspace's unrestricted key does reach the sales copy through the merged record.
      const control = await callTrpc("record.sources", { type: "query", inputs: [] }, { id: C.id }, ownerKeyC);
      expect(control.body).toContain("QUOKKA-SALES-5521");

      const withOwnText: string[] = [];
      for (const [name, def] of proceduresOf(appRouter as unknown as AnyRouter)) {
        if (def.meta?.access !== "workspace") continue;
        const outcome = await callTrpc(name, def, inputC(def, name), scopedKey);
        pairs.trpc += 1;
        expectNothingOutOfScope(`${name} (e) scope-limited key`, outcome);
        if (outcome.status === 200 && outcome.body.includes(IN_SCOPE)) withOwnText.push(name);
      }
      expect(withOwnText).toEqual(
        expect.arrayContaining(["record.get", "record.sources", "record.leaves", "record.lineage", "search.search", "search.ask", "search.projection", "search.brief", "ingest.session"]),
      );

      const restWithOwnText: string[] = [];
      for (const e of appRestEndpoints()) {
        const def = (appRouter._def.procedures as unknown as Record<string, { _def: ProcDef }>)[e.procedure]!._def;
        const input = inputC(def, e.procedure);
        const url = e.route.path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(String(input[p])));
        const rest = Object.entries(input).filter(([k, v]) => !e.pathParams.includes(k) && v !== undefined);
        const qs = new URLSearchParams(rest.flatMap(([k, v]) => (Array.isArray(v) ? v.map((item) => [k, String(item)]) : typeof v === "object" ? [] : [[k, String(v)]])));
        const outcome =
          e.route.method === "POST" ? await callRest("POST", url, Object.fromEntries(rest), scopedKey) : await callRest(e.route.method, qs.size ? `${url}?${qs}` : url, undefined, scopedKey);
        pairs.rest += 1;
        const what = `${e.route.method} ${e.route.path} (e) scope-limited key`;
        expectNothingOutOfScope(what, outcome);
        if (outcome.status === 200 && outcome.body.includes(IN_SCOPE)) restWithOwnText.push(`${e.route.method} ${e.route.path}`);
      }
      expect(restWithOwnText).toEqual(
        expect.arrayContaining(["GET /records/{id}/sources", "GET /records/{id}/leaves", "GET /records/{id}/lineage", "POST /pipelines/{pipelineId}/ask", "GET /pipelines/{pipelineId}/brief"]),
      );
      // The pull-in attempt (ingest under "call-1") was refused: no session of the key's scope joined it.
      expect(await db.ingestSession.count({ where: { pipelineId: String(C.pipelineId), sessionId: "call-1" } })).toBe(2);
      await settleBackgroundWork();
      while (await db.run.findFirst({ where: { pipelineId: String(C.pipelineId), status: { in: ["queued", "running"] } } })) await new Promise((r) => setTimeout(r, 100));
    }, 600_000);

    /**
     * An id belongs to the scope that made it, per procedure: to the key limited to acme:eng, every
     * procedure that names a session, record or memory answers another scope's id exactly like an
     * id that does not exist (status, code and message, the id aside); a write under an id of
     * another scope is refused (nothing stored), and an unrestricted key naming another scope for
     * an existing session gets CONFLICT naming the session's scope.
     */
    it("answers another scope's ids like unknown ones, per procedure; another scope's session is never written", async () => {
      const salesRecord = (await db.record.findFirstOrThrow({ where: { pipelineId: String(C.pipelineId), step: "sales" } })).id;
      const pipelineId = String(C.pipelineId);
      const answer = async (name: string, type: ProcDef["type"], input: Record<string, unknown>, who: Credentials, id: string) => {
        const outcome = await callTrpc(name, { type, inputs: [] }, input, who);
        const error = (JSON.parse(outcome.body) as { error?: { json?: { message?: string; data?: { code?: string } } } }).error?.json;
        return { name, status: outcome.status, code: outcome.code, message: (error?.message ?? outcome.body).replaceAll(id, "<id>") };
      };
      const cases: Array<[string, ProcDef["type"], (id: string) => Record<string, unknown>, string]> = [
        ["ingest.session", "query", (id) => ({ pipelineId, source: "sales", sessionId: id }), "call-1"],
        ["ingest.session", "query", (id) => ({ pipelineId, source: "sales", sessionId: id }), "deal-7"],
        // Naming the other scope is refused before the id is looked up.
        ["ingest.messages", "mutation", (id) => ({ pipelineId, source: "eng", sessionId: id, scope: "acme:sales", messages: [{ role: "user", content: "x" }] }), "deal-7"],
        ["record.get", "query", (id) => ({ id }), salesRecord],
        ["record.sources", "query", (id) => ({ id }), salesRecord],
        ["record.leaves", "query", (id) => ({ id }), salesRecord],
        ["record.lineage", "query", (id) => ({ id }), salesRecord],
        ["record.original", "query", (id) => ({ id }), salesRecord],
        ["record.history", "query", (id) => ({ id }), salesRecord],
        ["memory.ofSource", "query", (id) => ({ pipelineId, recordId: id }), salesRecord],
        ["memory.update", "mutation", (id) => ({ id, content: "x" }), salesRecord],
        ["memory.delete", "mutation", (id) => ({ id }), salesRecord],
      ];
      for (const [name, type, input, otherId] of cases) {
        const unknownId = `zz-unknown-${name.replace(".", "-")}`;
        const other = await answer(name, type, input(otherId), scopedKey, otherId);
        const unknown = await answer(name, type, input(unknownId), scopedKey, unknownId);
        expect(other.status, `${name}: refused`).toBeGreaterThanOrEqual(400);
        expect(other).toEqual(unknown);
        // (A refusal may quote the scope the caller itself named.)
        for (const s of OUT_OF_SCOPE) if (!JSON.stringify(input(otherId)).includes(s)) expect(other.message).not.toContain(s);
      }
      const messagesBefore = await db.ingestMessage.count({ where: { workspaceId: String(C.workspaceId) } });
      // A write under a sales conversation's id, in its own source or another: one refusal, naming nothing of sales.
      const sameSource = await answer("ingest.messages", "mutation", { pipelineId, source: "sales", sessionId: "deal-7", messages: [{ role: "user", content: "x" }] }, scopedKey, "deal-7");
      const otherSource = await answer("ingest.messages", "mutation", { pipelineId, source: "eng", sessionId: "deal-7", messages: [{ role: "user", content: "x" }] }, scopedKey, "deal-7");
      expect(sameSource).toMatchObject({ status: 403, code: "FORBIDDEN" });
      expect(sameSource).toEqual(otherSource);
      for (const s of OUT_OF_SCOPE) expect(sameSource.message).not.toContain(s);
      // The workspace's unrestricted key naming another scope for an existing session: CONFLICT, naming the session's scope.
      const conflict = await answer("ingest.messages", "mutation", { pipelineId, source: "sales", sessionId: "deal-7", scope: "acme:eng", messages: [{ role: "user", content: "x" }] }, ownerKeyC, "deal-7");
      expect(conflict).toEqual({ name: "ingest.messages", status: 409, code: "CONFLICT", message: `Session "<id>" belongs to scope "acme:sales"; pass that scope or use another sessionId.` });
      expect(await db.ingestMessage.count({ where: { workspaceId: String(C.workspaceId) } })).toBe(messagesBefore);
    }, 120_000);
  });

  /**
   * Issue 30, item 2: keys belong to the member who made them. Two more actors, each an admin of A
   * who made an admin key: (f) one removed from A, (g) one demoted to viewer. (f) is refused by every
   * procedure and route (401), (g) by everything above a viewer (403) while it still reads.
   */
  describe("keys of removed and demoted members", () => {
    const keyPairs = { trpc: 0, rest: 0, removed: 0, demoted: 0 };
    let removedKey: Credentials;
    let demotedKey: Credentials;
    let fingerprintKeys = "";
    /** (h) The admin invite each made, and the removed admin's own session. */
    let removedInvite = "";
    let demotedInvite = "";
    let removedSession: Credentials;

    beforeAll(async () => {
      const owner = createCaller(await createContext({ db, session: sessions.ownerA.session }));
      const adminKey = async (email: string) => {
        const { user } = await signUp(db, { email, password: `${email}-password` });
        const member = await db.membership.create({ data: { workspaceId: workspaceA, userId: user.id, role: "admin" } });
        const admin = createCaller(await createContext({ db, session: { userId: user.id, email } }));
        const { secret, id } = await admin.apiKey.create({ workspaceId: workspaceA, name: `${email}-key`, role: "admin" });
        const invite = await admin.invite.create({ workspaceId: workspaceA, role: "admin" });
        return { memberId: member.id, keyId: id, creds: { session: null, key: secret }, invite, session: { session: { userId: user.id, email }, key: null } };
      };
      const removed = await adminKey("removed-admin@matrix.test");
      expect(await owner.member.remove({ workspaceId: workspaceA, memberId: removed.memberId })).toMatchObject({ keysRevoked: 1, invitesRevoked: 1 });
      // The removal revoked the key and the invite; the matrix un-revokes them, so what refuses them
      // below is the per-request (per-accept) check that their creator is no longer a member (any path out of the workspace).
      await db.apiKey.update({ where: { id: removed.keyId }, data: { revokedAt: null } });
      await db.invite.update({ where: { id: removed.invite.id }, data: { revokedAt: null } });
      removedKey = removed.creds;
      removedInvite = removed.invite.token;
      removedSession = removed.session;
      const demoted = await adminKey("demoted-admin@matrix.test");
      expect(await owner.member.changeRole({ workspaceId: workspaceA, memberId: demoted.memberId, role: "viewer" })).toMatchObject({ invitesRevoked: 1 });
      await db.invite.update({ where: { id: demoted.invite.id }, data: { revokedAt: null } });
      demotedKey = demoted.creds;
      demotedInvite = demoted.invite.token;
      fingerprintKeys = await fingerprint();
    }, 60_000);

    afterAll(() => {
      console.log(`isolation matrix, keys of removed and demoted members: ${keyPairs.trpc} tRPC procedure × actor calls, ${keyPairs.rest} REST route × actor calls, ${keyPairs.trpc + keyPairs.rest} in all (removed member's key ${keyPairs.removed}, demoted member's key ${keyPairs.demoted})`);
    });

    /** (g) below its creator's new role: refused; at or under it: answered (a query only, so nothing changes). */
    function expectDemoted(what: string, outcome: Outcome, permission: (typeof PERMISSIONS)[number], sent: unknown) {
      if (!can("viewer", permission)) expectRefused(`${what} (g) key of a demoted member`, outcome, "FORBIDDEN", sent);
      else expect([401, 403], `${what} (g) key of a demoted member, a read: ${outcome.body.slice(0, 200)}`).not.toContain(outcome.status);
    }

    it("refuses every tRPC procedure to a removed member's key, and everything above a viewer to a demoted member's", async () => {
      for (const [name, def] of proceduresOf(appRouter as unknown as AnyRouter)) {
        const input = inputFor(def, A, name);
        // The key implies its workspace, and it is A's.
        const own = { ...input, workspaceId: undefined };
        expectRefused(`${name} (f) key of a removed member`, await callTrpc(name, def, own, removedKey), "UNAUTHORIZED", own);
        keyPairs.trpc += 1;
        keyPairs.removed += 1;
        if (def.meta?.access !== "workspace") continue;
        const permission = def.meta.permission as (typeof PERMISSIONS)[number];
        if (can("viewer", permission) && def.type !== "query") continue;
        expectDemoted(name, await callTrpc(name, def, own, demotedKey), permission, own);
        keyPairs.trpc += 1;
        keyPairs.demoted += 1;
      }
      expect(await fingerprint()).toBe(fingerprintKeys);
    }, 600_000);

    it("(h) refuses the admin invite of a removed admin (to herself) and of an admin demoted to viewer, as a revoked invite, with nothing of A", async () => {
      const { user } = await signUp(db, { email: "invite-joiner@matrix.test", password: "matrix-password-joiner" });
      const joiner: Credentials = { session: { userId: user.id, email: user.email }, key: null };
      const def = (name: string) => (appRouter._def.procedures as unknown as Record<string, { _def: ProcDef }>)[name]!._def;
      for (const [what, token, who] of [
        ["a removed admin's own invite, by herself", removedInvite, removedSession],
        ["a demoted admin's invite, by a newcomer", demotedInvite, joiner],
      ] as const) {
        for (const name of ["invite.preview", "invite.accept"]) {
          const outcome = await callTrpc(name, def(name), { token }, who);
          pairs.trpc += 1;
          expectRefused(`${name} (h) ${what}`, outcome, "NOT_FOUND", { token });
          expect(outcome.body).toContain("This invite link is not valid. Ask for a new one.");
        }
      }
      expect(await db.membership.count({ where: { workspaceId: workspaceA, userId: { in: [removedSession.session!.userId, user.id] } } })).toBe(0);
      expect(await fingerprint()).toBe(fingerprintKeys);
    }, 60_000);

    it("refuses every REST route to a removed member's key, and everything above a viewer to a demoted member's", async () => {
      for (const e of appRestEndpoints()) {
        const def = (appRouter._def.procedures as unknown as Record<string, { _def: ProcDef }>)[e.procedure]!._def;
        const permission = def.meta!.permission as (typeof PERMISSIONS)[number];
        const input: Record<string, unknown> = inputFor(def, A, e.procedure);
        const url = e.route.path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(String(input[p])));
        const body = Object.fromEntries(Object.entries(input).filter(([k, v]) => !e.pathParams.includes(k) && k !== "workspaceId" && v !== undefined));
        const qs = new URLSearchParams();
        for (const [k, v] of Object.entries(body)) {
          if (Array.isArray(v)) for (const item of v) qs.append(k, String(item));
          else if (typeof v !== "object") qs.append(k, String(v));
        }
        const target = e.route.method === "POST" ? url : qs.size ? `${url}?${qs}` : url;
        const sent = { url: target, body };
        const removed = await callRest(e.route.method, target, body, removedKey);
        expectRefused(`${e.route.method} ${e.route.path} (f) key of a removed member`, removed, "UNAUTHORIZED", sent);
        expect(Object.keys(JSON.parse(removed.body) as object)).toEqual(["error"]);
        keyPairs.rest += 1;
        keyPairs.removed += 1;
        if (can("viewer", permission) && def.type !== "query") continue;
        expectDemoted(`${e.route.method} ${e.route.path}`, await callRest(e.route.method, target, body, demotedKey), permission, sent);
        keyPairs.rest += 1;
        keyPairs.demoted += 1;
      }
      expect(await fingerprint()).toBe(fingerprintKeys);
    }, 600_000);
  });

  /**
   * (i) Purge and the eval reads (workspace D, so A's fingerprint stays as it was): a team question
   * set picked on one scope's records, scored; the scope is purged over REST (the real route, an
   * admin key) and one record of another question over REST too. A viewer's `evals.case`,
   * `evals.question` and `evals.compareQuestions` then hold neither the question nor the expected
   * answer (before the fix both stayed), while the question about kept data reads as before.
   */
  describe("(i) eval questions about purged data", () => {
    const marker = `zq${randomBytes(5).toString("hex")}x`;
    const D: Values = {};
    let viewerD: Credentials;
    let adminKeyD: Credentials;
    const def = (name: string) => (appRouter._def.procedures as unknown as Record<string, { _def: ProcDef }>)[name]!._def;

    beforeAll(async () => {
      const { addToQuestionSet } = await import("@/server/eval/question-sets");
      const { runEval } = await import("@/server/eval/service");
      const d = await signUp(db, { email: "purge-owner@matrix.test", password: "matrix-password-d" });
      const reader = await signUp(db, { email: "purge-viewer@matrix.test", password: "matrix-password-dv" });
      await db.membership.create({ data: { workspaceId: d.workspace.id, userId: reader.user.id, role: "viewer" } });
      viewerD = { session: { userId: reader.user.id, email: reader.user.email }, key: null };
      adminKeyD = { session: null, key: (await createApiKey(db, d.workspace.id, { userId: d.user.id, role: "owner" }, { name: "d-admin", role: "admin" })).secret };
      const { pipeline } = await createPipeline(db, d.workspace.id, { name: "purge-memory", spec: templateSpec("chat-memory") });
      const file = path.join(dataDir, "purge-questions.jsonl");
      const line = (id: string, scope: string, text: string) => JSON.stringify({ id, scope, messages: [{ role: "user", content: text }, { role: "assistant", content: "Noted." }] });
      writeFileSync(file, [line("v1", "acme:victim", `My locker is ${marker}-locker.`), line("k1", "acme:kept", "Lunch is on Fridays."), line("k2", "acme:kept", "The printer is upstairs.")].join("\n"));
      await importFile(db, { workspaceId: d.workspace.id, pipelineId: pipeline.id, source: "chats", path: file, format: "jsonl" });
      const records = await db.record.findMany({ where: { pipelineId: pipeline.id, step: "chats" }, select: { id: true, content: true } });
      const of = (text: string) => records.find((r) => r.content.includes(text))!.id;
      const victim = await addToQuestionSet(db, d.workspace.id, { set: "purge-set", question: `Which locker is ${marker}-question?`, answer: `${marker}-gold`, recordIds: [of(`${marker}-locker`)] });
      const printer = await addToQuestionSet(db, d.workspace.id, { set: "purge-set", question: `Where is the ${marker}-printer?`, answer: `${marker}-upstairs`, recordIds: [of("printer")] });
      await addToQuestionSet(db, d.workspace.id, { set: "purge-set", question: "When is lunch?", answer: "Fridays", recordIds: [of("Lunch")] });
      const run = await runEval(db, { workspaceId: d.workspace.id, pipeline: pipeline.id, questionSet: "purge-set", mode: "fts" });
      expect(run.status).toBe("completed");
      const cases = await db.evalCase.findMany({ where: { evalRunId: run.id }, orderBy: { position: "asc" } });
      Object.assign(D, {
        workspaceId: d.workspace.id,
        pipelineId: pipeline.id,
        runId: run.id,
        printerRecord: of("printer"),
        cases: Object.fromEntries(cases.map((c) => [c.questionId, c.id])),
        victimQuestion: victim.question.id,
        printerQuestion: printer.question.id,
        keptCase: cases.find((c) => c.question === "When is lunch?")!.id,
      });
    }, 120_000);

    /** What a viewer of D reads of one question through each eval read that shows cases. */
    async function viewerReads(questionId: string): Promise<Array<[string, Outcome]>> {
      const cases = D.cases as Record<string, string>;
      const calls: Array<[string, Record<string, unknown>]> = [
        ["evals.case", { workspaceId: D.workspaceId, id: cases[questionId] }],
        ["evals.question", { workspaceId: D.workspaceId, runIds: [D.runId], questionId }],
        ["evals.compareQuestions", { workspaceId: D.workspaceId, baselineId: D.runId, otherId: D.runId }],
      ];
      const out: Array<[string, Outcome]> = [];
      for (const [name, input] of calls) {
        const outcome = await callTrpc(name, def(name), input, viewerD);
        pairs.trpc += 1;
        expect(outcome.status, `${name}: ${outcome.body.slice(0, 200)}`).toBe(200);
        out.push([name, outcome]);
      }
      return out;
    }

    it("after a scope purge and a record purge (REST), a viewer's evals.case, evals.question and evals.compareQuestions hold no purged question or expected answer", async () => {
      // Control: before the purges the viewer reads both questions and their expected answers.
      for (const q of [D.victimQuestion, D.printerQuestion] as string[]) {
        for (const [name, outcome] of await viewerReads(q)) expect(outcome.body, `${name} before the purge`).toContain(marker);
      }
      const scope = await callRest("POST", `/pipelines/${String(D.pipelineId)}/purge`, { scope: "acme:victim", dryRun: false }, adminKeyD);
      expect(scope.status, scope.body).toBe(200);
      const record = await callRest("POST", `/records/${String(D.printerRecord)}/purge`, {}, adminKeyD);
      expect(record.status, record.body).toBe(200);
      pairs.rest += 2;
      for (const q of [D.victimQuestion, D.printerQuestion] as string[]) {
        for (const [name, outcome] of await viewerReads(q)) expect(outcome.body.includes(marker), `${name} after the purge: ${outcome.body.slice(0, 300)}`).toBe(false);
      }
      // The question about kept data reads as before, and the run keeps its three cases.
      expect((await callTrpc("evals.case", def("evals.case"), { workspaceId: D.workspaceId, id: D.keptCase }, viewerD)).body).toContain("When is lunch?");
      expect(await db.evalCase.count({ where: { evalRunId: String(D.runId) } })).toBe(3);
    }, 120_000);
  });
});
