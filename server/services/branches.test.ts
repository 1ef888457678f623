/**
 * Issue 18 on PGlite, through the tRPC procedures a person, the CLI and an agent use: create is a
 * pointer copy, a run on a branch computes only what changed, diff explains why and counts, promote
 * upserts and marks stale, delete + gc, protected main, and the permission matrix.
 */
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import type { Role } from "../auth/permissions";
import type { Db } from "../core/db";
import type { SourceItem } from "../core/source-item";
import { ScriptedModel } from "../llm/fake-model";
import { Pipeline } from "../pipeline/sdk";
import type { PipelineSpec } from "../pipeline/spec";
import { createTestDb } from "../store/test-db";
import { createApiKey } from "./api-keys";
import { appendSourceRecords, createPipeline, stepStatus } from "./pipelines";
import { planPipeline, runPipeline } from "./runs";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let owner: { userId: string; email: string; workspaceId: string };
let n = 0;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { user, workspace } = await signUp(db, { email: "branches@example.com", password: "branches-password" });
  owner = { userId: user.id, email: user.email, workspaceId: workspace.id };
});
afterAll(async () => close());

const FAST = { retryBaseMs: 1 };

function chatSpec(summaryPrompt = "Summarize: {{ record.content }}", monthlyPrompt = "Month {{ group.key }}: {% for r in records %}{{ r.content }}{% endfor %}"): PipelineSpec {
  return new Pipeline("chat", { agent: "test" })
    .source("chats", { format: "jsonl" })
    .transform("summaries", { from: "chats", prompt: summaryPrompt })
    .aggregate("monthly", { from: "summaries", period: "month", prompt: monthlyPrompt })
    .fold("world", { from: "monthly", prompt: "State: {{ state }} New: {{ record.content }}", checkpointEvery: 2 })
    .output("context", { from: "world", surface: "projection" })
    .toSpec();
}

const conversation = (i: number): SourceItem => ({
  externalId: `conv-${i}`,
  content: `Conversation ${i} about topic ${i % 3}. The user asked question number ${i}. They decided to plant tomatoes in week ${i}.`,
  metadata: { time: { created_at: `2024-0${1 + (i % 3)}-${String(i + 1).padStart(2, "0")}T10:00:00Z` } },
});

async function callerFor(userId: string, email: string) {
  return createCaller(await createContext({ db, session: { userId, email } }));
}

/** A pipeline with 6 conversations over 3 months, run on main. */
async function ranPipeline(options: { protectedMain?: boolean } = {}) {
  n += 1;
  const { pipeline } = await createPipeline(db, owner.workspaceId, { name: `branchy-${n}`, spec: chatSpec(), protectedMain: options.protectedMain });
  await appendSourceRecords(db, pipeline.id, "chats", [0, 1, 2, 3, 4, 5].map(conversation));
  const run = await runPipeline(db, { workspaceId: owner.workspaceId, pipelineId: pipeline.id }, { runOptions: FAST, afterRun: false });
  expect(run.status).toBe("completed");
  return pipeline;
}

async function member(role: Role) {
  n += 1;
  const { user } = await signUp(db, { email: `member-${n}@example.com`, password: "member-password" });
  await db.membership.create({ data: { workspaceId: owner.workspaceId, userId: user.id, role } });
  return callerFor(user.id, user.email);
}

async function expectCode(promise: Promise<unknown>, code: TRPCError["code"], message?: RegExp) {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `expected ${code}`).toBeInstanceOf(TRPCError);
  expect((err as TRPCError).code).toBe(code);
  if (message) expect((err as TRPCError).message).toMatch(message);
}

type Stats = { steps: Array<{ step: string; output: number; skipped: number; modelCalls: number }> };
const statsBy = (run: { stats: unknown }) => new Map((run.stats as Stats).steps.map((s) => [s.step, s]));

/** Everything that a failed request must leave alone. */
async function snapshot(pipelineId: string) {
  const branches = await db.branch.findMany({ where: { pipelineId }, orderBy: { name: "asc" }, select: { name: true, versionId: true } });
  return {
    branches,
    pointers: await db.branchPointer.count({ where: { branchId: { in: (await db.branch.findMany({ where: { pipelineId } })).map((b) => b.id) } } }),
    records: await db.record.count({ where: { pipelineId } }),
    versions: await db.pipelineVersion.count({ where: { pipelineId } }),
    promotions: await db.branchPromotion.count({ where: { pipelineId } }),
  };
}

describe("create", () => {
  it("copies pointers, writes no record, and says so", async () => {
    const pipeline = await ranPipeline();
    const api = await callerFor(owner.userId, owner.email);
    const ref = { workspaceId: owner.workspaceId, pipelineId: pipeline.id };
    const records = await db.record.count({ where: { pipelineId: pipeline.id } });
    const main = await db.branch.findFirstOrThrow({ where: { pipelineId: pipeline.id, name: "main" } });
    const mainPointers = await db.branchPointer.findMany({ where: { branchId: main.id }, orderBy: [{ step: "asc" }, { groupKey: "asc" }] });

    const created = await api.branch.create({ ...ref, name: "better-summaries", description: "try decisions" });
    expect(created.recordsComputed).toBe(0);
    expect(created.recordsShared).toBe(mainPointers.length);
    expect(created.message).toBe(`Created branch "better-summaries" from main: 0 records computed, ${mainPointers.length} records shared with main.`);
    expect(await db.record.count({ where: { pipelineId: pipeline.id } })).toBe(records);
    const copied = await db.branchPointer.findMany({ where: { branchId: created.branch.id }, orderBy: [{ step: "asc" }, { groupKey: "asc" }] });
    expect(copied.map((p) => [p.step, p.groupKey, p.recordId])).toEqual(mainPointers.map((p) => [p.step, p.groupKey, p.recordId]));
    expect(created.branch).toMatchObject({ versionId: main.versionId, baseVersionId: main.versionId, description: "try decisions", createdById: owner.userId });

    // From another branch and from a saved version (by hash prefix).
    const fromBranch = await api.branch.create({ ...ref, name: "second", from: "better-summaries" });
    expect(fromBranch.from).toMatchObject({ kind: "branch", name: "better-summaries" });
    const version = await db.pipelineVersion.findUniqueOrThrow({ where: { id: main.versionId } });
    const fromVersion = await api.branch.create({ ...ref, name: "from-version", from: version.hash.slice(0, 10) });
    expect(fromVersion.from.kind).toBe("version");
    expect(fromVersion.branch.versionId).toBe(version.id);
    expect(fromVersion.recordsShared).toBe(mainPointers.length);

    const list = await api.branch.list(ref);
    expect(list.protectedMain).toBe(true);
    expect(list.branches.map((b) => [b.name, b.pointers])).toEqual([
      ["main", mainPointers.length],
      ["better-summaries", mainPointers.length],
      ["second", mainPointers.length],
      ["from-version", mainPointers.length],
    ]);
  });

  it("refuses a duplicate or invalid name, an unknown origin, and another pipeline's or workspace's branch, changing nothing", async () => {
    const pipeline = await ranPipeline();
    const other = await ranPipeline();
    const api = await callerFor(owner.userId, owner.email);
    const ref = { workspaceId: owner.workspaceId, pipelineId: pipeline.id };
    await api.branch.create({ ...ref, name: "exp" });
    await api.branch.create({ workspaceId: owner.workspaceId, pipelineId: other.id, name: "only-there" });
    const before = await snapshot(pipeline.id);
    await expectCode(api.branch.create({ ...ref, name: "exp" }), "CONFLICT", /Branch "exp" already exists/);
    await expectCode(api.branch.create({ ...ref, name: "main" }), "CONFLICT", /already exists/);
    await expectCode(api.branch.create({ ...ref, name: "bad name!" }), "BAD_REQUEST", /Invalid branch name "bad name!".*letters, digits/);
    await expectCode(api.branch.create({ ...ref, name: "" }), "BAD_REQUEST", /Branch name is required/);
    await expectCode(api.branch.create({ ...ref, name: "x", from: "nope" }), "NOT_FOUND", /neither a branch nor a saved version/);
    // A branch of another pipeline is not a branch of this one.
    await expectCode(api.branch.create({ ...ref, name: "x", from: "only-there" }), "NOT_FOUND");
    await expectCode(api.branch.diff({ ...ref, branch: "only-there" }), "NOT_FOUND", /Branch "only-there" not found/);
    await expectCode(api.branch.promote({ ...ref, branch: "only-there" }), "NOT_FOUND");
    // Another workspace: its pipeline is not found in this one, and its members cannot reach ours.
    const stranger = await signUp(db, { email: `stranger-${n}@example.com`, password: "stranger-password" });
    const strangerApi = await callerFor(stranger.user.id, stranger.user.email);
    await expectCode(strangerApi.branch.create({ workspaceId: owner.workspaceId, pipelineId: pipeline.id, name: "mine" }), "NOT_FOUND");
    await expectCode(strangerApi.branch.create({ workspaceId: stranger.workspace.id, pipelineId: pipeline.id, name: "mine" }), "NOT_FOUND", /Pipeline .* not found/);
    expect(await snapshot(pipeline.id)).toEqual(before);
  });
});

describe("run on a branch after a prompt change", () => {
  it("computes exactly that step and what is downstream; nothing on main changes", async () => {
    const pipeline = await ranPipeline();
    const api = await callerFor(owner.userId, owner.email);
    const ref = { workspaceId: owner.workspaceId, pipelineId: pipeline.id };
    await api.branch.create({ ...ref, name: "decisions" });
    const main = await db.branch.findFirstOrThrow({ where: { pipelineId: pipeline.id, name: "main" } });
    const mainPointers = await db.branchPointer.findMany({ where: { branchId: main.id }, orderBy: [{ step: "asc" }, { groupKey: "asc" }] });

    // An unchanged branch run: 0 model calls.
    const idle = new ScriptedModel();
    await runPipeline(db, { ...ref, branch: "decisions" }, { model: idle, runOptions: FAST, afterRun: false });
    expect(idle.calls).toHaveLength(0);

    // The summaries prompt changes on the branch (editors may save on branches of a protected main).
    const editor = await member("editor");
    await editor.pipeline.saveVersion({ ...ref, branch: "decisions", spec: chatSpec("List the decisions: {{ record.content }}"), message: "decisions" });
    const plan = await planPipeline(db, pipeline.id, "decisions");
    expect(Object.fromEntries(plan.map((p) => [p.step, p.pending]))).toEqual({ summaries: 6, monthly: 3, world: 1 });

    const model = new ScriptedModel();
    const run = await runPipeline(db, { ...ref, branch: "decisions" }, { model, runOptions: FAST, afterRun: false });
    const stats = statsBy(run);
    expect(stats.get("summaries")).toMatchObject({ output: 6, modelCalls: 6 });
    expect(stats.get("monthly")).toMatchObject({ output: 3, modelCalls: 3 });
    expect(stats.get("world")!.modelCalls).toBe(3); // one fold call per month folded
    expect(model.calls.every((c) => !c.prompt.startsWith("Summarize:"))).toBe(true);
    expect(model.calls.filter((c) => c.prompt.startsWith("List the decisions:"))).toHaveLength(6);

    // Main still points where it did.
    const after = await db.branchPointer.findMany({ where: { branchId: main.id }, orderBy: [{ step: "asc" }, { groupKey: "asc" }] });
    expect(after.map((p) => [p.step, p.groupKey, p.recordId])).toEqual(mainPointers.map((p) => [p.step, p.groupKey, p.recordId]));
    // A second branch with the same change reuses every record the first one made: 0 model calls.
    await api.branch.create({ ...ref, name: "decisions-again" });
    await api.pipeline.saveVersion({ ...ref, branch: "decisions-again", spec: chatSpec("List the decisions: {{ record.content }}") });
    const again = new ScriptedModel();
    await runPipeline(db, { ...ref, branch: "decisions-again" }, { model: again, runOptions: FAST, afterRun: false });
    expect(again.calls).toHaveLength(0);
  });
});

describe("diff", () => {
  it("says why each step differs, counts only-A / only-B / shared, and pairs the records of the same inputs", async () => {
    const pipeline = await ranPipeline();
    const api = await callerFor(owner.userId, owner.email);
    const ref = { workspaceId: owner.workspaceId, pipelineId: pipeline.id };
    await api.branch.create({ ...ref, name: "exp" });
    await api.pipeline.saveVersion({ ...ref, branch: "exp", spec: chatSpec("List the decisions: {{ record.content }}") });
    await runPipeline(db, { ...ref, branch: "exp" }, { runOptions: FAST, afterRun: false });

    const diff = await api.branch.diff({ ...ref, branch: "exp" });
    expect(diff.a.name).toBe("main");
    expect(diff.b.name).toBe("exp");
    const by = new Map(diff.steps.map((s) => [s.name, s]));
    expect(by.get("chats")).toMatchObject({ status: "unchanged", onlyA: 0, onlyB: 0, shared: 6 });
    expect(by.get("summaries")).toMatchObject({ status: "changed", reasons: [{ kind: "template" }], onlyA: 6, onlyB: 6, shared: 0, differingGroups: 6 });
    expect(by.get("monthly")).toMatchObject({ status: "changed", reasons: [{ kind: "upstream", names: ["summaries"] }], onlyA: 3, onlyB: 3, shared: 0 });
    expect(by.get("world")).toMatchObject({ status: "changed", reasons: [{ kind: "upstream", names: ["monthly"] }], onlyA: 1, onlyB: 1 });
    expect(diff.totals).toEqual({ onlyA: 10, onlyB: 10, shared: 6 });

    // Either direction.
    const reverse = await api.branch.diff({ ...ref, branch: "main", against: "exp" });
    expect(reverse.steps.find((s) => s.name === "summaries")).toMatchObject({ onlyA: 6, onlyB: 6 });
    await expectCode(api.branch.diff({ ...ref, branch: "main" }), "BAD_REQUEST", /two different branches/);

    // The pairs of one step: same inputs (group key), both contents, and a word diff.
    const page = await api.branch.pairs({ ...ref, branch: "exp", step: "summaries", limit: 4 });
    expect(page.pairs).toHaveLength(4);
    expect(page.nextCursor).not.toBeNull();
    const rest = await api.branch.pairs({ ...ref, branch: "exp", step: "summaries", limit: 4, cursor: page.nextCursor });
    expect(rest.pairs).toHaveLength(2);
    expect(rest.nextCursor).toBeNull();
    const pair = page.pairs[0]!;
    const mainRecord = await db.record.findUniqueOrThrow({ where: { id: pair.a.id } });
    const branchRecord = await db.record.findUniqueOrThrow({ where: { id: pair.b.id } });
    expect(mainRecord.content).toBe(pair.a.content);
    expect(branchRecord.content).toBe(pair.b.content);
    const edgesA = await db.recordEdge.findMany({ where: { childId: pair.a.id } });
    const edgesB = await db.recordEdge.findMany({ where: { childId: pair.b.id } });
    expect(edgesA.map((e) => e.parentId)).toEqual(edgesB.map((e) => e.parentId)); // same input
    expect(pair.diff.left.map((s) => s.text).join("")).toBe(pair.a.content);
    expect(pair.diff.right.map((s) => s.text).join("")).toBe(pair.b.content);
    const one = await api.branch.pairs({ ...ref, branch: "exp", step: "summaries", groupKey: pair.groupKey });
    expect(one.pairs.map((p) => p.b.id)).toEqual([pair.b.id]);
  });
});

describe("promote", () => {
  it("upserts the branch's pointers into main by materialization key, records who did it, and leaves main up to date", async () => {
    const pipeline = await ranPipeline();
    const api = await callerFor(owner.userId, owner.email);
    const ref = { workspaceId: owner.workspaceId, pipelineId: pipeline.id };
    await api.branch.create({ ...ref, name: "exp" });
    const branchSpec = chatSpec("List the decisions: {{ record.content }}");
    await api.pipeline.saveVersion({ ...ref, branch: "exp", spec: branchSpec });

    // Stale (not run yet): refused, nothing changes.
    const before = await snapshot(pipeline.id);
    await expectCode(api.branch.promote({ ...ref, branch: "exp" }), "CONFLICT", /Branch "exp" is stale \(summaries: 6 record\(s\) from an older version; monthly: 3 .*\)\. Run it first/);
    expect(await snapshot(pipeline.id)).toEqual(before);

    await runPipeline(db, { ...ref, branch: "exp" }, { runOptions: FAST, afterRun: false });
    const exp = await db.branch.findFirstOrThrow({ where: { pipelineId: pipeline.id, name: "exp" } });
    const branchPointers = await db.branchPointer.findMany({ where: { branchId: exp.id }, orderBy: [{ step: "asc" }, { groupKey: "asc" }] });
    const records = await db.record.count({ where: { pipelineId: pipeline.id } });

    const result = await api.branch.promote({ ...ref, branch: "exp" });
    expect(result.staleSteps).toEqual([]);
    expect(Object.fromEntries(result.steps.map((s) => [s.step, s.upserted]))).toEqual({ summaries: 6, monthly: 3, world: 1 });
    expect(result.message).toMatch(/^Promoted "exp" into main: summaries, monthly, world now show the branch's records/);
    expect(result.diff.steps.find((s) => s.name === "summaries")!.reasons).toEqual([{ kind: "template" }]);

    const main = await db.branch.findFirstOrThrow({ where: { pipelineId: pipeline.id, name: "main" } });
    expect(main.versionId).toBe(result.version.id);
    const mainPointers = await db.branchPointer.findMany({ where: { branchId: main.id }, orderBy: [{ step: "asc" }, { groupKey: "asc" }] });
    expect(mainPointers.map((p) => [p.step, p.groupKey, p.recordId])).toEqual(branchPointers.map((p) => [p.step, p.groupKey, p.recordId]));
    expect(await db.record.count({ where: { pipelineId: pipeline.id } })).toBe(records); // pointers move, records do not
    expect((await planPipeline(db, pipeline.id, "main")).every((p) => p.pending === 0)).toBe(true);

    const audit = await api.branch.promotions(ref);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ branchName: "exp", targetName: "main", promotedBy: owner.email, fromVersionId: exp.versionId, toVersionId: result.version.id });
    expect(audit[0]!.steps.find((s) => s.step === "summaries")).toEqual({ step: "summaries", upserted: 6, removed: 0 });

    await expectCode(api.branch.promote({ ...ref, branch: "main" }), "BAD_REQUEST", /Cannot promote main into itself/);
  });

  it("marks main's downstream steps whose inputs changed as stale when main moved on since the branch forked", async () => {
    const pipeline = await ranPipeline();
    const api = await callerFor(owner.userId, owner.email);
    const ref = { workspaceId: owner.workspaceId, pipelineId: pipeline.id };
    await api.branch.create({ ...ref, name: "exp" });
    await api.pipeline.saveVersion({ ...ref, branch: "exp", spec: chatSpec("List the decisions: {{ record.content }}") });
    await runPipeline(db, { ...ref, branch: "exp" }, { runOptions: FAST, afterRun: false });
    // Meanwhile main changes the monthly prompt and runs it.
    const mainMonthly = "By month {{ group.key }}: {% for r in records %}{{ r.content }}{% endfor %}";
    await api.pipeline.saveVersion({ ...ref, spec: chatSpec(undefined, mainMonthly) });
    await runPipeline(db, ref, { runOptions: FAST, afterRun: false });

    const result = await api.branch.promote({ ...ref, branch: "exp" });
    // summaries come from the branch; monthly keeps main's prompt over the branch's summaries: nobody computed that yet.
    expect(result.steps.map((s) => s.step)).toEqual(["summaries"]);
    expect(result.staleSteps).toEqual(["monthly", "world"]);
    expect(result.message).toMatch(/stale on main until its next run: monthly, world\./);
    const main = await api.pipeline.get(ref);
    const steps = main.version.spec.steps as Array<{ name: string; prompt?: string }>;
    expect(steps.find((s) => s.name === "summaries")!.prompt).toBe("List the decisions: {{ record.content }}");
    expect(steps.find((s) => s.name === "monthly")!.prompt).toBe(mainMonthly);
    const status = new Map((await stepStatus(db, pipeline.id, "main")).map((s) => [s.name, s]));
    expect(status.get("summaries")!.stale).toBe(0);
    expect(status.get("monthly")!.stale).toBe(3);
    expect(status.get("world")!.stale).toBe(1);
    // Main's next run re-processes exactly the stale steps.
    const model = new ScriptedModel();
    const run = await runPipeline(db, ref, { model, runOptions: FAST, afterRun: false });
    const stats = statsBy(run);
    expect(stats.get("summaries")!.modelCalls).toBe(0);
    expect(stats.get("monthly")!.modelCalls).toBe(3);
  });

  it("refuses a conflicting change, a running branch, and an editor into a protected main; an unprotected main takes an editor's promotion", async () => {
    const pipeline = await ranPipeline();
    const api = await callerFor(owner.userId, owner.email);
    const editor = await member("editor");
    const ref = { workspaceId: owner.workspaceId, pipelineId: pipeline.id };
    await api.branch.create({ ...ref, name: "exp" });
    await editor.pipeline.saveVersion({ ...ref, branch: "exp", spec: chatSpec("List the decisions: {{ record.content }}") });
    await runPipeline(db, { ...ref, branch: "exp" }, { runOptions: FAST, afterRun: false });

    // Protected main: the editor may neither save on main nor promote into it.
    const before = await snapshot(pipeline.id);
    await expectCode(editor.branch.promote({ ...ref, branch: "exp" }), "FORBIDDEN", /Main is protected.*editor.*cannot promote into it/);
    await expectCode(editor.pipeline.saveVersion({ ...ref, spec: chatSpec("x {{ record.content }}") }), "FORBIDDEN", /Main is protected.*cannot save on it/);
    await expectCode(editor.branch.setProtection({ ...ref, protectedMain: false }), "FORBIDDEN", /branches:admin/);
    expect(await snapshot(pipeline.id)).toEqual(before);

    // A run in progress on the branch.
    const exp = await db.branch.findFirstOrThrow({ where: { pipelineId: pipeline.id, name: "exp" } });
    const main = await db.branch.findFirstOrThrow({ where: { pipelineId: pipeline.id, name: "main" } });
    const running = await db.run.create({ data: { workspaceId: owner.workspaceId, pipelineId: pipeline.id, branchId: exp.id, versionId: exp.versionId, status: "running" } });
    await expectCode(api.branch.promote({ ...ref, branch: "exp" }), "CONFLICT", /A run is in progress on branch "exp"/);
    await expectCode(api.branch.delete({ ...ref, branch: "exp" }), "CONFLICT", /A run is in progress/);
    await db.run.update({ where: { id: running.id }, data: { status: "completed" } });

    // Both changed summaries differently since the fork: a conflict, never an overwrite.
    await api.pipeline.saveVersion({ ...ref, spec: chatSpec("Main's own: {{ record.content }}") });
    await runPipeline(db, ref, { runOptions: FAST, afterRun: false });
    const beforeConflict = await snapshot(pipeline.id);
    await expectCode(api.branch.promote({ ...ref, branch: "exp" }), "CONFLICT", /both changed step summaries/);
    expect(await snapshot(pipeline.id)).toEqual(beforeConflict);

    // Unprotected: the editor saves on main and promotes.
    await api.branch.setProtection({ ...ref, protectedMain: false });
    await editor.pipeline.saveVersion({ ...ref, spec: chatSpec("List the decisions: {{ record.content }}") });
    await runPipeline(db, ref, { runOptions: FAST, afterRun: false });
    await editor.branch.create({ ...ref, name: "exp2" });
    await editor.pipeline.saveVersion({ ...ref, branch: "exp2", spec: chatSpec("Decisions only: {{ record.content }}") });
    await runPipeline(db, { ...ref, branch: "exp2" }, { runOptions: FAST, afterRun: false });
    const promoted = await editor.branch.promote({ ...ref, branch: "exp2" });
    expect(promoted.steps.find((s) => s.step === "summaries")!.upserted).toBe(6);
    expect((await db.branch.findUniqueOrThrow({ where: { id: main.id } })).versionId).toBe(promoted.version.id);
  });
});

describe("delete and gc", () => {
  it("deleting drops pointers and keeps records; gc's dry run reports exactly what gc deletes; main cannot be deleted", async () => {
    const pipeline = await ranPipeline();
    const api = await callerFor(owner.userId, owner.email);
    const ref = { workspaceId: owner.workspaceId, pipelineId: pipeline.id };
    await api.branch.create({ ...ref, name: "doomed" });
    await api.pipeline.saveVersion({ ...ref, branch: "doomed", spec: chatSpec("List the decisions: {{ record.content }}") });
    await runPipeline(db, { ...ref, branch: "doomed" }, { runOptions: FAST, afterRun: false });
    const records = await db.record.count({ where: { pipelineId: pipeline.id } });
    expect((await api.branch.gc({ ...ref, dryRun: true })).records).toBe(0); // everything is reached

    await expectCode(api.branch.delete({ ...ref, branch: "main" }), "BAD_REQUEST", /Main cannot be deleted/);
    const deleted = await api.branch.delete({ ...ref, branch: "doomed" });
    expect(deleted.pointersRemoved).toBeGreaterThan(0);
    expect(deleted.message).toMatch(/no record deleted/);
    expect(await db.record.count({ where: { pipelineId: pipeline.id } })).toBe(records);
    expect(await db.branch.findFirst({ where: { pipelineId: pipeline.id, name: "doomed" } })).toBeNull();

    const dry = await api.branch.gc({ ...ref, dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, deleted: 0, records: 10, byStep: { summaries: 6, monthly: 3, world: 1 } });
    expect(await db.record.count({ where: { pipelineId: pipeline.id } })).toBe(records);
    const editor = await member("editor");
    await expectCode(editor.branch.gc({ ...ref, dryRun: false }), "FORBIDDEN", /preview gc/);
    const real = await api.branch.gc({ ...ref, dryRun: false });
    expect({ ...real, dryRun: true, deleted: 0 }).toEqual(dry);
    expect(real.deleted).toBe(dry.records);
    expect(await db.record.count({ where: { pipelineId: pipeline.id } })).toBe(records - dry.records);
    // Main still has every record it shows, with its lineage, and nothing left to collect.
    expect((await planPipeline(db, pipeline.id, "main")).every((p) => p.pending === 0)).toBe(true);
    expect((await api.branch.gc({ ...ref, dryRun: true })).records).toBe(0);
  });
});

describe("permission matrix of the branch procedures", () => {
  const expected: Record<Role, Record<string, boolean>> = {
    owner: { list: true, diff: true, pairs: true, promotions: true, create: true, delete: true, gcDry: true, gc: true, promote: true, protect: true },
    admin: { list: true, diff: true, pairs: true, promotions: true, create: true, delete: true, gcDry: true, gc: true, promote: true, protect: true },
    editor: { list: true, diff: true, pairs: true, promotions: true, create: true, delete: true, gcDry: true, gc: false, promote: false, protect: false },
    viewer: { list: true, diff: true, pairs: true, promotions: true, create: false, delete: false, gcDry: false, gc: false, promote: false, protect: false },
  };

  async function exercise(api: Awaited<ReturnType<typeof callerFor>>, pipelineId: string, tag: string) {
    const ref = { workspaceId: owner.workspaceId, pipelineId };
    const attempt = async (p: Promise<unknown>) =>
      p.then(
        () => true,
        (e: unknown) => {
          if (e instanceof TRPCError && e.code === "FORBIDDEN") return false;
          throw e;
        },
      );
    return {
      list: await attempt(api.branch.list(ref)),
      diff: await attempt(api.branch.diff({ ...ref, branch: "ready" })),
      pairs: await attempt(api.branch.pairs({ ...ref, branch: "ready", step: "summaries" })),
      promotions: await attempt(api.branch.promotions(ref)),
      create: await attempt(api.branch.create({ ...ref, name: `made-by-${tag}` })),
      delete: await attempt(api.branch.delete({ ...ref, branch: "to-delete" })),
      gcDry: await attempt(api.branch.gc({ ...ref, dryRun: true })),
      gc: await attempt(api.branch.gc({ ...ref, dryRun: false })),
      // Into a protected main (the default for new pipelines).
      promote: await attempt(api.branch.promote({ ...ref, branch: "ready" })),
      protect: await attempt(api.branch.setProtection({ ...ref, protectedMain: true })),
    };
  }

  async function fixture() {
    const pipeline = await ranPipeline();
    const api = await callerFor(owner.userId, owner.email);
    const ref = { workspaceId: owner.workspaceId, pipelineId: pipeline.id };
    await api.branch.create({ ...ref, name: "ready" });
    await api.pipeline.saveVersion({ ...ref, branch: "ready", spec: chatSpec("List the decisions: {{ record.content }}") });
    await runPipeline(db, { ...ref, branch: "ready" }, { runOptions: FAST, afterRun: false });
    await api.branch.create({ ...ref, name: "to-delete" });
    return pipeline;
  }

  it.each(["owner", "admin", "editor", "viewer"] as const)("a signed-in %s", async (role) => {
    const pipeline = await fixture();
    const api = role === "owner" ? await callerFor(owner.userId, owner.email) : await member(role);
    expect(await exercise(api, pipeline.id, role)).toEqual(expected[role]);
  });

  it.each(["admin", "editor", "viewer"] as const)("an API key with role %s gets the same answers", async (role) => {
    const pipeline = await fixture();
    const key = await createApiKey(db, owner.workspaceId, { userId: owner.userId, role: "owner" }, { name: `k-${role}`, role });
    const api = createCaller(await createContext({ db, authorization: `Bearer ${key.secret}` }));
    expect(await exercise(api, pipeline.id, `key-${role}`)).toEqual(expected[role]);
  });
});
