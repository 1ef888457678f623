/**
 * Issue 33 item 4 on PGlite, through the tRPC procedures the canvas calls: a version diff carries
 * each changed prompt as text; "restore" saves an older version again as the branch's newest
 * (history kept, audited) and checks who may: viewers never, editors not on a protected main,
 * other workspaces not at all; a version of another pipeline is not found.
 */
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import type { Role } from "../auth/permissions";
import type { Db } from "../core/db";
import { Pipeline } from "../pipeline/sdk";
import type { PipelineSpec } from "../pipeline/spec";
import { createTestDb } from "../store/test-db";
import { createPipeline } from "./pipelines";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;
let owner: { userId: string; email: string; workspaceId: string };
let n = 0;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
  const { user, workspace } = await signUp(db, { email: "history@example.com", password: "history-password" });
  owner = { userId: user.id, email: user.email, workspaceId: workspace.id };
});
afterAll(async () => close());

const spec = (summary: string): PipelineSpec =>
  new Pipeline("history").source("chats", { format: "jsonl" }).transform("summaries", { from: "chats", prompt: summary }).toSpec();

const callerFor = async (userId: string, email: string) => createCaller(await createContext({ db, session: { userId, email } }));

async function member(role: Role) {
  n += 1;
  const { user } = await signUp(db, { email: `history-member-${n}@example.com`, password: "member-password" });
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

/** A pipeline with two versions on main: "Summarize: …" then "Summarize the decisions: …". */
async function twoVersions(protectedMain: boolean) {
  n += 1;
  const { pipeline, version: first } = await createPipeline(db, owner.workspaceId, { name: `history-${n}`, spec: spec("Summarize: {{ record.content }}"), protectedMain });
  const api = await callerFor(owner.userId, owner.email);
  const ref = { workspaceId: owner.workspaceId, pipelineId: pipeline.id };
  const { version: second } = await api.pipeline.saveVersion({ ...ref, spec: spec("Summarize the decisions: {{ record.content }}"), message: "decisions" });
  return { pipeline, first, second, api, ref };
}

describe("prompt history", () => {
  it("a version diff carries each changed prompt as an inline text diff", async () => {
    const { first, second, api, ref } = await twoVersions(false);
    const diff = await api.pipeline.diff({ ...ref, fromVersionId: first.id, toVersionId: second.id });
    expect(diff.prompts).toHaveLength(1);
    const [p] = diff.prompts;
    expect(p).toMatchObject({ step: "summaries", before: "Summarize: {{ record.content }}", after: "Summarize the decisions: {{ record.content }}" });
    const added = p!.segments.filter((s) => s.op === "added").map((s) => s.text).join("");
    expect(added).toContain("the decisions");
    expect(added.length).toBeLessThan(20);
    expect(p!.added).toBe(added.length);
    // The diff reads back into both texts.
    expect(p!.segments.filter((s) => s.op !== "added").map((s) => s.text).join("")).toBe(p!.before);
    expect(p!.segments.filter((s) => s.op !== "removed").map((s) => s.text).join("")).toBe(p!.after);
    // Unchanged prompts are not listed.
    expect((await api.pipeline.diff({ ...ref, fromVersionId: second.id, toVersionId: second.id })).prompts).toEqual([]);
  });

  it("restore saves the older version again as the newest, keeps the history, and is audited", async () => {
    const { first, second, api, ref } = await twoVersions(true);
    const restored = await api.pipeline.restoreVersion({ ...ref, versionId: first.id });
    expect(restored.version.parentId).toBe(second.id);
    expect(restored.version.hash).toBe(first.hash);
    expect(restored.version.message).toBe("Restore " + first.hash.slice(0, 8) + " (Initial version)");
    const head = await api.pipeline.get({ ...ref, branch: "main" });
    expect(head.version.id).toBe(restored.version.id);
    expect((head.version.spec.steps[0] as { prompt: string }).prompt).toBe("Summarize: {{ record.content }}");
    const versions = await api.pipeline.versions(ref);
    expect(versions.map((v) => v.id)).toEqual([restored.version.id, second.id, first.id]);
    const { entries } = await api.audit.list({ workspaceId: owner.workspaceId, action: "pipeline.restoreVersion" });
    expect(entries.find((e) => e.target === `pipeline:${ref.pipelineId}/branch:main`)).toMatchObject({
      actor: `user:${owner.userId}`,
      summary: { restoredVersionId: first.id, restoredHash: first.hash, versionId: restored.version.id },
    });
    // The head again: nothing to restore.
    await expectCode(api.pipeline.restoreVersion({ ...ref, versionId: restored.version.id }), "BAD_REQUEST", /already the current version/);
  });

  it("restore checks the role, a protected main, the workspace and the pipeline; a refusal writes nothing", async () => {
    const { pipeline, first, ref } = await twoVersions(true);
    const versionsBefore = await db.pipelineVersion.count({ where: { pipelineId: pipeline.id } });
    const viewer = await member("viewer");
    await expectCode(viewer.pipeline.restoreVersion({ ...ref, versionId: first.id }), "FORBIDDEN");
    const editor = await member("editor");
    await expectCode(editor.pipeline.restoreVersion({ ...ref, versionId: first.id }), "FORBIDDEN", /Main is protected/);
    const { user: strangerUser, workspace: strangerWs } = await signUp(db, { email: `history-stranger-${n}@example.com`, password: "stranger-password" });
    const stranger = await callerFor(strangerUser.id, strangerUser.email);
    await expectCode(stranger.pipeline.restoreVersion({ ...ref, versionId: first.id }), "NOT_FOUND");
    await expectCode(stranger.pipeline.restoreVersion({ workspaceId: strangerWs.id, pipelineId: pipeline.id, versionId: first.id }), "NOT_FOUND");
    // A version of another pipeline of the same workspace is not this pipeline's.
    const other = await twoVersions(false);
    const api = await callerFor(owner.userId, owner.email);
    await expectCode(api.pipeline.restoreVersion({ ...ref, versionId: other.first.id }), "NOT_FOUND", /not found in this pipeline/);
    expect(await db.pipelineVersion.count({ where: { pipelineId: pipeline.id } })).toBe(versionsBefore);
    expect((await api.audit.list({ workspaceId: owner.workspaceId, action: "pipeline.restoreVersion" })).entries.filter((e) => e.target.includes(pipeline.id))).toEqual([]);

    // On a branch the editor may restore.
    await editor.branch.create({ ...ref, name: "try" });
    const onBranch = await editor.pipeline.restoreVersion({ ...ref, branch: "try", versionId: first.id });
    expect(onBranch.version.hash).toBe(first.hash);
    expect((await api.pipeline.get({ ...ref, branch: "main" })).version.hash).not.toBe(first.hash);
  });
});
