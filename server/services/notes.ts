/**
 * Quick add: a note (or a page's text the user pasted) stored as one item of a pipeline source,
 * through the same path imports take (`appendSourceRecords`, the SourceItem contract). Its
 * identity is a hash of its content, so adding the same note twice adds nothing. A new record asks
 * for the incremental run, as a closed ingest session does. Nothing is fetched: `url` is a label.
 */
import { createHash } from "node:crypto";
import type { z } from "zod";
import type { Db } from "../core/db";
import { notFound } from "../core/errors";
import { noteInputSchema, type NoteInput } from "../core/note";
import type { SourceItem } from "../core/source-item";
import { contentFingerprint } from "../pipeline/hashing";
import { requestIncrementalRun } from "./ingest";
import { appendSourceRecords, getBranch } from "./pipelines";

/** The source item of a note: identity and content from the text, title and url only (not the time). */
export function noteItem(input: z.output<typeof noteInputSchema>, now = new Date()): SourceItem {
  const title = input.title || null;
  const content = [title ? `# ${title}` : null, input.url ?? null, input.text].filter((part): part is string => part !== null).join("\n\n");
  const hash = createHash("sha256").update(content).digest("hex");
  return {
    externalId: `note:${hash.slice(0, 32)}`,
    content,
    ...(input.scope !== undefined ? { scope: input.scope } : {}),
    metadata: {
      time: { created_at: now.toISOString() },
      modality: "text",
      kind: "note",
      // An untitled note is labelled by its first line; `source.path` names the note as a document (the documents template groups by it).
      chat: { title: title ?? firstLine(input.text) },
      source: { type: "note", path: `note:${hash.slice(0, 12)}`, ...(input.url ? { url: input.url } : {}) },
    },
  };
}

/** Adds a note to a source of the pipeline's main branch; `added` is false when the same note is there already. */
export async function addNote(db: Db, target: { workspaceId: string; pipelineId: string; source: string }, raw: NoteInput, now = new Date()) {
  const input = noteInputSchema.parse(raw);
  const { spec } = await getBranch(db, target.pipelineId, "main");
  const def = spec.sources.find((s) => s.name === target.source);
  if (!def) throw notFound(`Source "${target.source}" is not in this pipeline. Sources: ${spec.sources.map((s) => s.name).join(", ") || "none"}.`);
  const item = noteItem(input, now);
  const { added } = await appendSourceRecords(db, target.pipelineId, def.name, [item]);
  const record = await db.record.findFirst({
    where: { pipelineId: target.pipelineId, workspaceId: target.workspaceId, step: def.name, contentFingerprint: contentFingerprint(item.content), scope: item.scope ?? def.scope ?? "" },
    orderBy: { createdAt: "desc" },
    select: { id: true, scope: true },
  });
  const runRequested = added > 0 ? await requestIncrementalRun(db, target, "quick add: a note", `a note was added to ${def.name}`) : false;
  return { pipelineId: target.pipelineId, source: def.name, recordId: record?.id ?? null, scope: record?.scope ?? item.scope ?? def.scope ?? "", added: added > 0, chars: item.content.length, runRequested };
}

/** The first line of a text, cut to 80 characters with an ellipsis. */
function firstLine(text: string): string {
  const line = text.split("\n", 1)[0]!.trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
