import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import type { ModelProvider, ModelRequest, ModelResponse } from "../engine/model";
import { Pipeline } from "../pipeline/sdk";
import type { PipelineSpec } from "../pipeline/spec";
import type { Db } from "../core/db";
import { DomainError } from "../core/errors";
import { appendSourceRecords, createPipeline, getBranch } from "../services/pipelines";
import type { SourceItem } from "../core/source-item";
import { projection } from "../services/projections";
import { runPipeline } from "../services/runs";
import { signUp } from "../services/users";
import { deliverPending, getWebhookSecret, verifyWebhookSignature } from "../services/webhooks";
import { createTestDb } from "../store/test-db";
import { afterRun } from "../services/after-run";
import { indexPipeline } from "./indexing";
import { getRecord, leaves, lineage, listByStep, sources } from "./provenance";
import { sqlTrace } from "./context";
import { search, type SearchInput, type SearchMode } from "./search";

/**
 * A deterministic model for these tests: summaries keep the first sentence; the monthly aggregate
 * writes a reflection made of its summaries plus a trend word nobody else wrote ("zeitgeistia");
 * the fold appends each month to its state.
 */
class MemoryModel implements ModelProvider {
  async complete(req: ModelRequest): Promise<ModelResponse> {
    let text: string;
    if (req.prompt.startsWith("SUMMARY")) text = (req.inputs[0]?.content.split(". ")[0] ?? "") + ".";
    else if (req.prompt.startsWith("MONTHLY")) text = `Monthly reflection. ${req.inputs.map((i) => i.content).join(" ")} Trend: zeitgeistia.`;
    else if (req.task === "fold") text = `${req.state ?? ""}\n${req.inputs[0]?.content ?? ""}`.trim();
    else text = req.inputs.map((i) => i.content).join(" ");
    return { text, raw: text, model: req.model, tokensIn: 1, tokensOut: 1, costUsd: 0, latencyMs: 0 };
  }
}

let db: Db;
let close: () => Promise<void>;
let workspaceId: string;
let userId: string;
let pipelineId: string;
let n = 0;

function memorySpec(webhookUrl?: string): PipelineSpec {
  return new Pipeline("mem")
    .source("chats", { format: "jsonl" })
    .transform("transcripts", { from: "chats", operator: { kind: "identity" } })
    .transform("summaries", { from: "transcripts", prompt: "SUMMARY {{ record.content }}" })
    .aggregate("monthly", { from: "summaries", period: "month", prompt: "MONTHLY {% for r in records %}{{ r.content }}{% endfor %}" })
    .fold("world", { from: "monthly", prompt: "FOLD {{ state }} {{ record.content }}" })
    .output("context", {
      from: "world",
      surface: "projection",
      template: "## Memory for {{ scope }}\n{{ record.content }}",
      ...(webhookUrl ? { webhook: { url: webhookUrl } } : {}),
    })
    .output("search", { from: ["transcripts", "summaries", "monthly"], surface: "search" })
    .toSpec();
}

const TOPICS = ["rust borrow checker", "python packaging", "postgres indexes"];

function chat(i: number, scope: string, month: string, extra = ""): SourceItem {
  return {
    externalId: `${scope}-conv-${i}`,
    scope,
    content: `Conversation ${i} about ${TOPICS[i % 3]}. The user and the assistant went through details ${extra}. They agreed on next steps.`,
    metadata: {
      time: { created_at: `${month}-${String((i % 27) + 1).padStart(2, "0")}T10:00:00Z` },
      chat: { conversation_id: `${scope}-conv-${i}` },
    },
  };
}

async function newPipeline(spec: PipelineSpec, items: SourceItem[]) {
  n += 1;
  const created = await createPipeline(db, workspaceId, { name: `search${n}`, spec });
  const id = created.pipeline.id;
  await appendSourceRecords(db, id, "chats", items);
  const run = await runPipeline(db, { workspaceId, pipelineId: id }, { model: new MemoryModel(), runOptions: { retryBaseMs: 1 }, afterRun: false });
  expect(run.status).toBe("completed");
  return { id, run };
}

const SCOPES = ["acme:eng:alice", "acme:eng:bob", "acme:engineering:carol", "acme:sales:dan"];

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { workspace, user } = await signUp(db, { email: "search@example.com", password: "search-password-1" });
  workspaceId = workspace.id;
  userId = user.id;
  const items: SourceItem[] = [];
  for (const scope of SCOPES) {
    for (let i = 0; i < 6; i++) items.push(chat(i, scope, i < 3 ? "2024-01" : "2024-02", scope === "acme:eng:alice" && i === 4 ? "flibbertigibbet" : ""));
  }
  const { id, run } = await newPipeline(memorySpec(), items);
  pipelineId = id;
  const after = await afterRun(db, run, { deliver: "none" });
  expect(after.errors).toEqual([]);
  expect(after.indexed!.embedded).toBe(24 * 2 + SCOPES.length * 2);
});
afterAll(async () => close());

const q = (query: string, extra: Partial<SearchInput> = {}) => search(db, { workspaceId, pipelineId, query, ...extra });

async function expectDomainError(p: Promise<unknown>, pattern: RegExp) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect((err as Error).message).toMatch(pattern);
}

describe("indexing", () => {
  it("is incremental: a second pass embeds nothing", async () => {
    expect((await indexPipeline(db, pipelineId)).embedded).toBe(0);
  });

  it("finds what is missing in pages and embeds it in batches, each record once", async () => {
    const stored = async () =>
      db.$queryRawUnsafe<Array<{ recordId: string; model: string; step: string; scope: string }>>(
        `SELECT "recordId", model, step, scope FROM "Embedding" WHERE "pipelineId" = $1 ORDER BY "recordId", model`,
        pipelineId,
      );
    const before = await stored();
    expect(before).toHaveLength(24 * 2 + SCOPES.length * 2);
    await db.$executeRawUnsafe(`DELETE FROM "Embedding" WHERE "pipelineId" = $1`, pipelineId);
    // Pages of 7 ids, batches of 3: many pages, a short last batch and a short last page. A full
    // pass: the embeddings went behind the index's back (no pointer changed).
    expect((await indexPipeline(db, pipelineId, "main", { pageSize: 7, batchSize: 3, full: true })).embedded).toBe(before.length);
    expect(await stored()).toEqual(before);
  });
});

describe("altitude", () => {
  it("a word only in one transcript is found at transcripts, not at monthly", async () => {
    for (const mode of ["fts", "semantic", "hybrid"] as SearchMode[]) {
      const t = await q("flibbertigibbet", { step: "transcripts", mode });
      expect(t.hits[0]?.content).toContain("flibbertigibbet");
      expect(t.hits[0]?.scope).toBe("acme:eng:alice");
    }
    const fts = await q("flibbertigibbet", { step: "transcripts", mode: "fts" });
    expect(fts.hits).toHaveLength(1);
    expect(fts.hits[0]!.highlights.length).toBeGreaterThan(0);
    const [s, e] = fts.hits[0]!.highlights[0]!;
    expect(fts.hits[0]!.snippet.slice(s, e).toLowerCase()).toBe("flibbertigibbet");
    expect((await q("flibbertigibbet", { step: "monthly", mode: "fts" })).hits).toHaveLength(0);
    expect((await q("flibbertigibbet", { step: "summaries", mode: "fts" })).hits).toHaveLength(0);
  });

  it("snippets: false finds the same hits without highlighting (the snippet is the content's start)", async () => {
    const full = await q("flibbertigibbet", { step: "transcripts", mode: "hybrid" });
    const plain = await q("flibbertigibbet", { step: "transcripts", mode: "hybrid", snippets: false });
    expect(plain.hits.map((h) => [h.id, h.score.fused])).toEqual(full.hits.map((h) => [h.id, h.score.fused]));
    expect(full.hits[0]!.highlights.length).toBeGreaterThan(0);
    expect(plain.hits[0]!.highlights).toEqual([]);
    expect(plain.hits[0]!.content.startsWith(plain.hits[0]!.snippet.replace(/…$/, ""))).toBe(true);
  });

  it("the trend word the monthly aggregate wrote exists only at monthly (emergent knowledge)", async () => {
    const monthly = await q("zeitgeistia", { step: "monthly", mode: "fts" });
    expect(monthly.hits).toHaveLength(SCOPES.length * 2);
    expect(monthly.hits.every((h) => h.step === "monthly" && h.altitude === 3 && h.sourceCount === 3)).toBe(true);
    expect((await q("zeitgeistia", { step: ["transcripts", "summaries"], mode: "fts" })).hits).toHaveLength(0);
    expect((await q("zeitgeistia", { step: "chats", exact: true })).hits).toHaveLength(0);
  });

  it("unscoped search returns the monthly record, with the summary reachable by drill-down", async () => {
    const res = await q("borrow checker", { mode: "fts", scope: "acme:eng:alice" });
    expect(res.steps).toEqual(["transcripts", "summaries", "monthly"]);
    expect(res.hits.map((h) => h.step)).toEqual(["monthly", "monthly"]);
    const jan = res.hits.find((h) => (h.metadata.time as { period: string }).period === "2024-01")!;
    expect(jan.lowerHits.map((h) => h.step)).toEqual(["summaries", "transcripts"]);
    const summaryId = jan.lowerHits.find((h) => h.step === "summaries")!.id;
    const src = await sources(db, workspaceId, jan.id, { pipelineId });
    expect(src).toHaveLength(3);
    expect(src.map((s) => s.id)).toContain(summaryId);
    expect(src.every((s) => s.step === "summaries" && s.onBranch)).toBe(true);
    // Scores carry their parts.
    expect(jan.score.fts).toBeGreaterThan(0);
    expect(jan.score.fused).toBeGreaterThan(0);
    // Without dedupe, every altitude is listed.
    const flat = await q("borrow checker", { mode: "fts", scope: "acme:eng:alice", dedupe: false });
    expect(new Set(flat.hits.map((h) => h.step))).toEqual(new Set(["monthly", "summaries", "transcripts"]));
    // Hybrid: same altitude rule.
    const hybrid = await q("borrow checker", { mode: "hybrid", scope: "acme:eng:alice", limit: 5 });
    expect(hybrid.hits[0]!.step).toBe("monthly");
    expect(hybrid.hits[0]!.score.semantic).not.toBeNull();
  });
});

describe("drill-down", () => {
  it("leaves() of a world-model record are exactly the source conversations that fed it", async () => {
    const { branch } = await getBranch(db, pipelineId);
    const world = await db.record.findFirstOrThrow({ where: { pipelineId, step: "world", scope: "acme:eng:alice" } });
    const res = await leaves(db, workspaceId, world.id, {}, { pipelineId });
    const chats = await db.record.findMany({ where: { pipelineId, step: "chats", scope: "acme:eng:alice" } });
    expect(res.leaves.map((l) => l.id).sort()).toEqual(chats.map((c) => c.id).sort());
    expect(res.leaves.every((l) => l.depth === 4 && l.step === "chats")).toBe(true);
    expect(res.truncated).toBe(false);
    expect(branch.id).toBeTruthy();
    const few = await leaves(db, workspaceId, world.id, { maxCount: 2 });
    expect(few.leaves).toHaveLength(2);
    expect(few.truncated).toBe(true);
    const shallow = await leaves(db, workspaceId, world.id, { maxDepth: 2 });
    expect(shallow.leaves).toHaveLength(0);
    expect(shallow.depthLimited).toBe(true);
  });

  it("lineage() is a bounded tree down to the sources", async () => {
    const world = await db.record.findFirstOrThrow({ where: { pipelineId, step: "world", scope: "acme:eng:bob" } });
    const l = await lineage(db, workspaceId, world.id);
    expect(l.nodes).toHaveLength(1 + 2 + 6 + 6 + 6);
    expect(l.tree.children.map((c) => c.step)).toEqual(["monthly", "monthly"]);
    expect(l.tree.children[0]!.children[0]!.children[0]!.children[0]!.step).toBe("chats");
    const bounded = await lineage(db, workspaceId, world.id, { maxNodes: 5 });
    expect(bounded.nodes.length).toBeLessThanOrEqual(5);
    expect(bounded.truncated).toBe(true);
  });

  it("get, listByStep with filters and cursor pagination", async () => {
    const page1 = await listByStep(db, { workspaceId, pipelineId, step: "transcripts", scope: "acme:eng", limit: 5 });
    expect(page1.records).toHaveLength(5);
    const page2 = await listByStep(db, { workspaceId, pipelineId, step: "transcripts", scope: "acme:eng", limit: 5, cursor: page1.nextCursor });
    const page3 = await listByStep(db, { workspaceId, pipelineId, step: "transcripts", scope: "acme:eng", limit: 5, cursor: page2.nextCursor });
    const all = [...page1.records, ...page2.records, ...page3.records];
    expect(new Set(all.map((r) => r.id)).size).toBe(12);
    expect(page3.nextCursor).toBeNull();
    expect(all.every((r) => r.scope.startsWith("acme:eng:"))).toBe(true);
    const feb = await listByStep(db, { workspaceId, pipelineId, step: "monthly", period: "2024-02" });
    expect(feb.records).toHaveLength(4);
    const conv = await listByStep(db, { workspaceId, pipelineId, step: "summaries", conversationId: "acme:eng:bob-conv-1" });
    expect(conv.records).toHaveLength(1);
    const detail = await getRecord(db, workspaceId, feb.records[0]!.id);
    expect(detail.audit).toMatchObject({ model: "offline/extractive" });
    expect(detail.sourceCount).toBe(3);
    expect(detail.childCount).toBe(1);
    expect(detail.embeddings.map((e) => e.model)).toEqual(["offline/hash2-512"]);
    await expectDomainError(listByStep(db, { workspaceId, pipelineId, step: "monthly", cursor: "garbage" }), /Invalid cursor/);
  });
});

describe("scope isolation", () => {
  it("no result from a sibling scope, in every mode", async () => {
    const modes: Array<Partial<SearchInput>> = [
      { mode: "fts" },
      { mode: "semantic" },
      { mode: "hybrid" },
      { mode: "fts", step: "monthly" },
      { mode: "semantic", step: "transcripts" },
      { exact: true },
    ];
    for (const m of modes) {
      const res = await q("rust borrow checker", { ...m, scope: "acme:eng", limit: 100, dedupe: false });
      expect(res.hits.length).toBeGreaterThan(0);
      // Both scopes under acme:eng, and only those (no record is in acme:eng itself).
      expect(new Set(res.hits.map((h) => h.scope))).toEqual(new Set(["acme:eng:alice", "acme:eng:bob"]));
      const exactScope = await q("rust borrow checker", { ...m, scope: "acme:eng:bob", limit: 100 });
      expect(exactScope.hits.length).toBeGreaterThan(0);
      for (const h of exactScope.hits) expect(h.scope).toBe("acme:eng:bob");
      for (const bad of ["acme:eng%", "acme:eng_", "acme_eng", "%", "_", "acme:eng:%"]) {
        expect((await q("rust borrow checker", { ...m, scope: bad })).hits).toHaveLength(0);
      }
    }
  });

  it("a scope alone is searched from the embeddings' own scope: the same ranking as through the records, and only records the branch shows", async () => {
    const labels: string[] = [];
    sqlTrace.fn = (label) => labels.push(label);
    const byScope = await q("rust borrow checker", { mode: "semantic", step: "transcripts", scope: "acme:eng", limit: 20, dedupe: false });
    // A time bound that excludes nothing takes the general path (records, then their embeddings).
    const byRecords = await q("rust borrow checker", { mode: "semantic", step: "transcripts", scope: "acme:eng", from: "2000-01-01", limit: 20, dedupe: false });
    sqlTrace.fn = null;
    expect(labels).toContain("semantic-scope-half");
    expect(labels).toContain("semantic-exact");
    expect(byScope.hits.length).toBeGreaterThan(2);
    expect(byScope.hits.map((h) => h.id)).toEqual(byRecords.hits.map((h) => h.id));

    // A record of the pipeline in that scope that no branch points at (as a superseded version
    // is), with the top hit's very vector: never a hit.
    const top = byScope.hits[0]!;
    const stray = await db.record.create({
      data: { id: "stray-transcript", workspaceId, pipelineId, step: "transcripts", stepVersionHash: "old", workKey: "stray", materializationKey: "stray", contentFingerprint: "stray", content: "rust borrow checker", scope: top.scope },
    });
    try {
      await db.$executeRawUnsafe(
        `INSERT INTO "Embedding" ("workspaceId", "recordId", "pipelineId", step, scope, model, dimensions, vector)
         SELECT "workspaceId", $2, "pipelineId", step, scope, model, dimensions, vector FROM "Embedding" WHERE "recordId" = $1`,
        top.id,
        stray.id,
      );
      const again = await q("rust borrow checker", { mode: "semantic", step: "transcripts", scope: "acme:eng", limit: 20, dedupe: false });
      expect(again.hits.map((h) => h.id)).toEqual(byScope.hits.map((h) => h.id));
    } finally {
      await db.$executeRawUnsafe(`DELETE FROM "Embedding" WHERE "recordId" = $1`, stray.id);
      await db.record.delete({ where: { id: stray.id } });
    }
  });

  it("time, period, conversation and metadata filters", async () => {
    const jan = await q("conversation", { mode: "fts", step: "transcripts", from: "2024-01-01", to: "2024-01-31", limit: 100 });
    expect(jan.hits).toHaveLength(12);
    const feb = await q("zeitgeistia", { mode: "fts", step: "monthly", period: "2024-02", limit: 100 });
    expect(feb.hits).toHaveLength(4);
    const conv = await q("conversation", { mode: "hybrid", step: "transcripts", conversationId: "acme:sales:dan-conv-2" });
    expect(conv.hits.map((h) => h.scope)).toEqual(["acme:sales:dan"]);
    const meta = await q("conversation", { mode: "fts", step: "chats", metadata: { "source.type": "jsonl", "chat.conversation_id": "acme:eng:bob-conv-0" } });
    expect(meta.hits).toHaveLength(1);
  });
});

describe("leaf search", () => {
  it("finds a literal phrase, case-insensitively, not stemmed, safe for % and _", async () => {
    const hit = await q("BORROW CHECKER", { exact: true });
    expect(hit.hits.length).toBe(8);
    expect(hit.hits.every((h) => h.step === "chats")).toBe(true);
    const [s, e] = hit.hits[0]!.highlights[0]!;
    expect(hit.hits[0]!.snippet.slice(s, e)).toBe("borrow checker");
    expect((await q("borrow checkers", { exact: true })).hits).toHaveLength(0); // not stemmed
    expect((await q("borrow%checker", { exact: true })).hits).toHaveLength(0);
    expect((await q("borrow_checker", { exact: true })).hits).toHaveLength(0);
    expect((await q("_", { exact: true })).hits).toHaveLength(0);
  });
});

describe("bad input", () => {
  it("gives clear errors or safe results, never SQL errors", async () => {
    await expectDomainError(q(""), /empty/);
    await expectDomainError(q("   "), /empty/);
    await expectDomainError(q("rust ".repeat(2000)), /too long/);
    await expectDomainError(q("rust", { step: "nope" }), /Unknown step "nope".*transcripts/);
    await expectDomainError(q("rust", { output: "context" }), /not a search index/);
    await expectDomainError(q("rust", { mode: "semantic", step: "world" }), /not in a search output/);
    const stop = await q("the and of", { mode: "fts" });
    expect(stop.hits).toHaveLength(0);
    expect(stop.notice).toMatch(/stop words/);
    // Nothing to match by meaning either (issue #33 item 7): no hits and a noMatch, in every mode.
    for (const mode of ["hybrid", "semantic"] as SearchMode[]) {
      const stopped = await q("the and of", { mode });
      expect(stopped).toMatchObject({ hits: [], noMatch: true });
      expect(stopped.notice).toMatch(/stop words/);
    }
    for (const mode of ["fts", "semantic", "hybrid"] as SearchMode[]) {
      for (const text of ["&|!():*'", "rust & (python | !go):* 'x'", "'", "\\", "rust:*", "!!!", "a <-> b", "%_%"]) {
        const res = await q(text, { mode });
        expect(Array.isArray(res.hits)).toBe(true);
      }
      await q("rust", { mode, scope: "'; DROP TABLE \"Record\"; --" });
    }
    const tricky = await q("rust & (python | !go):*", { mode: "fts", step: "transcripts", limit: 50 });
    expect(tricky.hits.every((h) => /rust|python/i.test(h.content))).toBe(true);
    await expectDomainError(sources(db, workspaceId, "no-such-record"), /not found/);
    await expectDomainError(leaves(db, workspaceId, "no-such-record"), /not found/);
    await expectDomainError(lineage(db, workspaceId, "'; --"), /not found/);
    await expectDomainError(getRecord(db, workspaceId, "%"), /not found/);
    await expectDomainError(q("rust", { from: "not a date" }), /ISO date/);
  });

  it("graph mode on a pipeline without an entity graph says what is missing", async () => {
    await expectDomainError(q("where does alice live", { mode: "graph" }), /Graph search needs an "entities" step, and this pipeline has none \(steps: transcripts \(transform\)/);
    await expectDomainError(q("rust", { mode: "nope" as SearchMode }), /Unknown search mode "nope": use fts, semantic, hybrid, graph/);
  });
});

describe("tRPC", () => {
  it("search and record routers are permission-checked and workspace-filtered", async () => {
    const me = createCaller(await createContext({ db, session: { userId, email: "search@example.com" } }));
    const res = await me.search.search({ workspaceId, pipelineId, query: "zeitgeistia", mode: "fts", step: "monthly" });
    expect(res.hits).toHaveLength(8);
    const rec = await me.record.get({ workspaceId, id: res.hits[0]!.id });
    expect(rec.step).toBe("monthly");
    expect((await me.record.sources({ workspaceId, id: rec.id, pipelineId })).length).toBe(3);
    expect((await me.record.leaves({ workspaceId, id: rec.id })).leaves).toHaveLength(3);
    await expect(me.search.search({ workspaceId, pipelineId, query: "" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(me.record.get({ workspaceId, id: "nope" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    const ctx = await me.search.projection({ workspaceId, pipelineId, output: "context", scope: "acme:eng:alice" });
    expect(ctx.text).toMatch(/^## Memory for acme:eng:alice\n/);
    expect(ctx.text).toContain("zeitgeistia");

    // Another team sees nothing of it.
    const other = await signUp(db, { email: "other@example.com", password: "other-password-1" });
    const them = createCaller(await createContext({ db, session: { userId: other.user.id, email: "other@example.com" } }));
    await expect(them.search.search({ workspaceId, pipelineId, query: "rust" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(them.search.search({ workspaceId: other.workspace.id, pipelineId, query: "rust" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(them.record.get({ workspaceId: other.workspace.id, id: rec.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(them.record.leaves({ workspaceId: other.workspace.id, id: rec.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("projection", () => {
  it("renders the latest record per scope through the template", async () => {
    const all = await projection(db, pipelineId, "main", "context", "acme:eng");
    expect(all.blocks.map((b) => b.scope)).toEqual(["acme:eng:alice", "acme:eng:bob"]);
    expect(all.text).toContain("## acme:eng:alice");
    await expectDomainError(projection(db, pipelineId, "main", "search"), /not a projection/);
    await expectDomainError(projection(db, pipelineId, "main", "nope"), /Unknown output/);
  });

  it("webhook fires once per change, signed, retried on 500", async () => {
    const received: Array<{ body: string; signature: string; timestamp: string }> = [];
    let failNext = 1;
    const server: Server = createServer((req: IncomingMessage, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString("utf8")));
      req.on("end", () => {
        received.push({ body, signature: String(req.headers["x-synthex-signature"]), timestamp: String(req.headers["x-synthex-timestamp"]) });
        res.statusCode = failNext-- > 0 ? 500 : 200;
        res.end("ok");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const port = (server.address() as AddressInfo).port;
      const { id, run } = await newPipeline(memorySpec(`http://127.0.0.1:${port}/hook`), [0, 1, 2].map((i) => chat(i, "acme:ops", "2024-01")));
      expect((await afterRun(db, run, { deliver: "none" })).enqueued).toBe(1);
      // Same state again: nothing new.
      expect((await afterRun(db, run, { deliver: "none" })).enqueued).toBe(0);

      const first = await deliverPending(db, { backoffMs: 1 });
      expect(first).toMatchObject({ attempted: 1, retrying: 1, delivered: 0 });
      await new Promise((r) => setTimeout(r, 20));
      const second = await deliverPending(db, { backoffMs: 1 });
      expect(second).toMatchObject({ attempted: 1, delivered: 1 });
      expect(await deliverPending(db, { backoffMs: 1 })).toMatchObject({ attempted: 0 });
      expect(received).toHaveLength(2);

      const secret = await getWebhookSecret(db, workspaceId);
      for (const r of received) expect(verifyWebhookSignature(secret, r.signature, r.timestamp, r.body)).toBe(true);
      expect(verifyWebhookSignature(secret, received[1]!.signature, received[1]!.timestamp, received[1]!.body + " ")).toBe(false);
      expect(verifyWebhookSignature("wrong", received[1]!.signature, received[1]!.timestamp, received[1]!.body)).toBe(false);
      const payload = JSON.parse(received[1]!.body) as { event: string; scope: string; text: string; previousRecordId: string | null };
      expect(payload).toMatchObject({ event: "projection.updated", scope: "acme:ops", previousRecordId: null });
      expect(payload.text).toMatch(/^## Memory for acme:ops/);
      const delivery = await db.webhookDelivery.findFirstOrThrow({ where: { pipelineId: id } });
      expect(delivery).toMatchObject({ status: "delivered", attempts: 2, responseStatus: 200 });

      // A change (a new month) fires exactly once more.
      await appendSourceRecords(db, id, "chats", [chat(3, "acme:ops", "2024-02")]);
      const run2 = await runPipeline(db, { workspaceId, pipelineId: id }, { model: new MemoryModel(), runOptions: { retryBaseMs: 1 }, afterRun: false });
      expect((await afterRun(db, run2, { deliver: "await" })).enqueued).toBe(1);
      expect(received).toHaveLength(3);
      expect(JSON.parse(received[2]!.body).previousRecordId).toBeTruthy();
      expect(await db.webhookDelivery.count({ where: { pipelineId: id } })).toBe(2);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
