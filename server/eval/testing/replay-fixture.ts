/**
 * The small replay fixture (issue 37), computed by hand: a RAG pipeline whose main chunks each note
 * whole (1,200-character chunks) and a branch "small-chunks" that cuts them into 100-character
 * pieces, plus a branch "same" identical to main. Two logged asks ("zebra vault combination",
 * "heron garden ferns") cited main's chunk of their note.
 */
import type { Db } from "../../core/db";
import { ragBaselineSpec } from "../../pipeline/templates/rag";
import { createBranch } from "../../services/branches";
import { settleBackgroundWork } from "../../services/background";
import { addNote } from "../../services/notes";
import { createPipeline, saveVersion } from "../../services/pipelines";
import { runPipeline } from "../../services/runs";
import { signUp } from "../../services/users";
import { insertQueryLogEntry } from "../../store/query-log";
import { createTestDb } from "../../store/test-db";

export const REPLAY_NOTES = {
  zebra: "The zebra vault opens with the combination 4471. ".repeat(5),
  heron: "The heron garden ferns are watered every Tuesday morning. ".repeat(5),
  otter: "The otter boat is moored at pier nine near the lighthouse. ".repeat(5),
};

export interface ReplayFixture {
  db: Db;
  close: () => Promise<void>;
  workspaceId: string;
  userId: string;
  pipelineId: string;
  /** Note word → main's chunk id of that note. */
  chunkOf: Record<string, string>;
}

export async function replayFixture(email: string): Promise<ReplayFixture> {
  const { db, close } = await createTestDb();
  const {
    workspace: { id: workspaceId },
    user: { id: userId },
  } = await signUp(db, { email, password: "replay-password-1" });
  const {
    pipeline: { id: pipelineId },
  } = await createPipeline(db, workspaceId, { name: "replay", spec: ragBaselineSpec("folder") });
  for (const text of Object.values(REPLAY_NOTES)) await addNote(db, { workspaceId, pipelineId, source: "chats" }, { text });
  // Each note requested a run: let them finish, then bring main up to date.
  await settleBackgroundWork();
  while (await db.run.findFirst({ where: { pipelineId, status: { in: ["queued", "running"] } } })) await new Promise((r) => setTimeout(r, 200));
  await runPipeline(db, { workspaceId, pipelineId });
  await settleBackgroundWork();
  await createBranch(db, pipelineId, { name: "same" });
  await createBranch(db, pipelineId, { name: "small-chunks" });
  await saveVersion(db, pipelineId, { spec: ragBaselineSpec("folder", { chunkSize: 100 }), branch: "small-chunks", message: "100-character chunks" });
  await runPipeline(db, { workspaceId, pipelineId, branch: "small-chunks" });
  await settleBackgroundWork();
  const chunkOf: Record<string, string> = {};
  for (const [word, text] of Object.entries(REPLAY_NOTES)) {
    const chunk = await db.record.findFirstOrThrow({ where: { pipelineId, step: "chunks", content: text.trim() } });
    chunkOf[word] = chunk.id;
  }
  for (const [query, word] of [["zebra vault combination", "zebra"], ["heron garden ferns", "heron"]] as const) {
    await insertQueryLogEntry(db, {
      workspaceId, pipelineId, surface: "rest", kind: "ask", caller: "apiKey:agent", scope: null, mode: "fts", params: { k: 3 }, query, branch: "main", versionId: null,
      hits: [{ id: chunkOf[word]!, rank: 1, score: 0.9, step: "chunks" }], cited: [chunkOf[word]!], confidence: 0.8, latencyMs: 12,
    });
  }
  return { db, close, workspaceId, userId, pipelineId, chunkOf };
}
