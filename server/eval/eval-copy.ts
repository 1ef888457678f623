/**
 * The hidden *eval copy* a benchmark is scored on: a pipeline with the scored spec and branch
 * names but its own records (the team's memory is never touched), one per target and dataset, and
 * the source items a dataset's sessions become in it (one per session, scoped to its sample).
 */
import { createHash } from "node:crypto";
import type { Db } from "../core/db";
import type { SourceItem } from "../core/source-item";
import { specHash } from "../pipeline/hashing";
import type { PipelineSpec } from "../pipeline/spec";
import { createBranch } from "../services/branches";
import { createPipeline, getBranch, saveVersion } from "../services/pipelines";
import { sampleScope, sessionContent, type Dataset } from "./types";

function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 10);
}

/** The hidden copy of a pipeline (or template) an eval of this dataset runs on, on `branch` with `spec`. */
export async function ensureEvalCopy(
  db: Db,
  workspaceId: string,
  target: { pipelineId: string | null; template: string | null; label: string },
  dataset: { id: string; contentHash: string },
  branch: string,
  spec: PipelineSpec,
) {
  const name = `eval-${shortHash(target.pipelineId ?? `template:${target.template}`)}-${dataset.contentHash.slice(0, 10)}`;
  let copy = await db.pipeline.findFirst({ where: { workspaceId, name } });
  if (!copy) {
    const created = await createPipeline(db, workspaceId, { name, spec, description: `Eval copy of ${target.label} on dataset ${dataset.id}` });
    copy = await db.pipeline.update({ where: { id: created.pipeline.id }, data: { evalOfId: target.pipelineId ?? `template:${target.template}` } });
  }
  if (!(await db.branch.findUnique({ where: { pipelineId_name: { pipelineId: copy.id, name: branch } } }))) {
    await createBranch(db, copy.id, { name: branch, from: "main" });
  }
  const head = await getBranch(db, copy.id, branch);
  if (head.version.hash !== specHash(spec)) await saveVersion(db, copy.id, { spec, branch, message: "Spec of the scored branch" });
  return copy;
}

/** A dataset's sessions as source records of its eval copy. */
export function sourceItems(dataset: Dataset): SourceItem[] {
  const items: SourceItem[] = [];
  for (const sample of dataset.samples) {
    for (const session of sample.sessions) {
      const conversationId = `${sample.id}-s${session.id}`;
      items.push({
        externalId: `${dataset.benchmark}:${conversationId}`,
        content: sessionContent(session),
        scope: sampleScope(dataset.benchmark, sample.id),
        metadata: {
          time: session.time ? { created_at: session.time } : {},
          chat: { conversation_id: conversationId, title: `${sample.id} session ${session.id}`, roles: sample.speakers, message_count: session.turns.length },
          custom: { eval: { benchmark: dataset.benchmark, sample: sample.id, session: session.id } },
        },
      });
    }
  }
  return items;
}
