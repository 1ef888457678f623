/**
 * A memory's history and restore, over the tRPC procedures (the same ones REST serves) against a
 * real database: a fact deletes a memory, a person lists the deleted memories, reads the history,
 * restores it (search finds it again), and a later run keeps the restore.
 */
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller } from "../api/root";
import { createContext } from "../api/trpc";
import type { Db } from "../core/db";
import { Pipeline } from "../pipeline/sdk";
import { search } from "../search/search";
import { createTestDb } from "../store/test-db";
import { appendSourceRecords, createPipeline } from "./pipelines";
import { runPipeline } from "./runs";
import { signUp } from "./users";

let db: Db;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ db, close } = await createTestDb());
});
afterAll(async () => close());

const day = (d: number) => ({ time: { created_at: `2024-05-${String(d).padStart(2, "0")}T09:00:00Z` } });

describe("memory history and restore", () => {
  it("lists a deleted memory, shows its history, restores it for search, and a later run keeps it", async () => {
    const { user, workspace } = await signUp(db, { email: "memories@example.com", password: "memories-password" });
    const api = createCaller(await createContext({ db, session: { userId: user.id, email: user.email } }));
    const spec = new Pipeline("mem", { agent: "test" })
      .source("facts", { format: "jsonl" })
      .consolidate("memories", { from: "facts", prompt: "{{ record.content }}" })
      .output("search", { from: "memories", surface: "search" })
      .toSpec();
    const { pipeline } = await createPipeline(db, workspace.id, { name: "mem", spec });
    await appendSourceRecords(db, pipeline.id, "facts", [
      { externalId: "1", content: "Gina collects vintage typewriters", scope: "gina", metadata: day(1) },
      { externalId: "2", content: "Gina collects vintage typewriters from Italy", scope: "gina", metadata: day(2) },
      { externalId: "3", content: "Gina no longer collects vintage typewriters from Italy", scope: "gina", metadata: day(3) },
    ]);
    expect((await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id })).status).toBe("completed");

    const deleted = await api.record.deletedMemories({ workspaceId: workspace.id, pipelineId: pipeline.id, step: "memories" });
    expect(deleted).toHaveLength(1);
    expect(deleted[0]!.content).toBe("Gina collects vintage typewriters from Italy");
    const found = async () =>
      (await search(db, { workspaceId: workspace.id, pipelineId: pipeline.id, query: "typewriters", mode: "fts" })).hits.map((r) => r.content);
    expect(await found()).toEqual([]);

    const history = await api.record.history({ workspaceId: workspace.id, id: deleted[0]!.recordId });
    expect(history).toMatchObject({ status: "deleted", restorable: true, scope: "gina" });
    expect(history.versions.map((v) => [v.event, v.version, v.content])).toEqual([
      ["DELETE", 3, "Gina collects vintage typewriters from Italy"],
      ["UPDATE", 2, "Gina collects vintage typewriters from Italy"],
      ["ADD", 1, "Gina collects vintage typewriters"],
    ]);
    expect(history.versions.map((v) => v.fact?.content)).toEqual([
      "Gina no longer collects vintage typewriters from Italy",
      "Gina collects vintage typewriters from Italy",
      "Gina collects vintage typewriters",
    ]);
    expect(history.versions[0]!.at).toBe("2024-05-03T09:00:00Z");

    // A viewer may read the history but not restore.
    const viewer = await signUp(db, { email: "memories-viewer@example.com", password: "memories-password" });
    await db.membership.create({ data: { userId: viewer.user.id, workspaceId: workspace.id, role: "viewer" } });
    const viewerApi = createCaller(await createContext({ db, session: { userId: viewer.user.id, email: viewer.user.email } }));
    expect((await viewerApi.record.history({ workspaceId: workspace.id, id: deleted[0]!.recordId })).memoryId).toBe(history.memoryId);
    await expect(viewerApi.record.restore({ workspaceId: workspace.id, id: deleted[0]!.recordId })).rejects.toMatchObject({ code: "FORBIDDEN" });

    const restored = await api.record.restore({ workspaceId: workspace.id, id: deleted[0]!.recordId });
    expect(restored).toMatchObject({ status: "active", restorable: false });
    expect(restored.versions.map((v) => v.event)).toEqual(["RESTORE", "DELETE", "UPDATE", "ADD"]);
    expect(restored.versions[0]!.by).toBe(user.id);
    expect(await found()).toEqual(["Gina collects vintage typewriters from Italy"]);
    expect(await api.record.deletedMemories({ workspaceId: workspace.id, pipelineId: pipeline.id, step: "memories" })).toEqual([]);
    // Restoring twice is a clear conflict, not a second copy.
    const again = await api.record.restore({ workspaceId: workspace.id, id: deleted[0]!.recordId }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(TRPCError);
    expect((again as TRPCError).code).toBe("CONFLICT");

    // A later run (a new fact in another scope, and a near-duplicate of the restored memory) keeps it.
    await appendSourceRecords(db, pipeline.id, "facts", [
      { externalId: "4", content: "Hugo bakes sourdough bread", scope: "hugo", metadata: day(4) },
      { externalId: "5", content: "Gina collects vintage typewriters from Italy", scope: "gina", metadata: day(5) },
    ]);
    expect((await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id })).status).toBe("completed");
    const after = await api.record.history({ workspaceId: workspace.id, id: deleted[0]!.recordId });
    expect(after).toMatchObject({ status: "active", headRecordId: restored.headRecordId });
    expect(await found()).toEqual(["Gina collects vintage typewriters from Italy"]);

    // Not a memory: a clear error.
    const factId = history.versions[0]!.fact!.id;
    await expect(api.record.history({ workspaceId: workspace.id, id: factId })).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/not a memory/) });
  });
});
