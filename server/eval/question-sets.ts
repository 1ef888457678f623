/**
 * A team's own question set: questions about its own memory, each with the records that answer it
 * (picked in the explorer: "add to question set") and, optionally, the expected answer. An eval of
 * a question set searches the pipeline branch's own records — no eval copy, no benchmark file —
 * and scores the hits the way benchmark evals do: a "session" is a source record (a conversation),
 * the gold "turns" are the picked records, and a hit reaches one when it is that record or was
 * made from it (through provenance).
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import type { TracedHit } from "./metrics";
import { estimateContextTokens } from "./metrics";
import { toJsonColumn } from "../core/json";
import { lineageMembers } from "../store/provenance-reads";
import type { HitRecord } from "./trace";

/** The `benchmark` of an eval run that scored a team's question set (its `datasetId` is the set). */
export const QUESTION_SET_BENCHMARK = "question-set";

export const teamQuestionSchema = z.object({
  id: z.string(),
  question: z.string().min(1).max(1000),
  /** The pipeline whose records were picked (its branches can be scored on the set). */
  pipelineId: z.string(),
  /** The expected answer (optional: without it, only retrieval is scored). */
  answer: z.string().max(2000).default(""),
  /** The records that answer the question, as picked. */
  recordIds: z.array(z.string()).min(1),
  /** The source records (conversations) those records come from. */
  sources: z.array(z.string()),
  addedAt: z.string(),
});
export type TeamQuestion = z.infer<typeof teamQuestionSchema>;

export const questionSetName = z
  .string()
  .trim()
  .min(1, "A question set needs a name.")
  .max(100)
  .regex(/^[\w.-]+$/, "A question set name is letters, digits, '.', '-' and '_' (it is typed on the command line).");

export const addToQuestionSetInput = z.object({
  /** The set's name; created when it does not exist yet. */
  set: questionSetName,
  question: z.string().trim().min(1, "The question is empty.").max(1000),
  answer: z.string().trim().max(2000).optional(),
  recordIds: z.array(z.string().min(1)).min(1, "Pick at least one record that answers the question.").max(20),
});

function questionsOf(row: { questions: unknown }): TeamQuestion[] {
  return z.array(teamQuestionSchema).parse(row.questions);
}

/** Source records (no parents) each record comes from, within the workspace. */
async function sourcesOf(db: Db, workspaceId: string, ids: string[]): Promise<string[]> {
  const tracer = new LineageTracer(db, workspaceId);
  await tracer.load(ids);
  return [...new Set(ids.flatMap((id) => tracer.trace({ id, step: "", content: "" }).sessions))];
}

export async function listQuestionSets(db: Db, workspaceId: string) {
  const rows = await db.evalQuestionSet.findMany({ where: { workspaceId, datasetId: null }, orderBy: { createdAt: "desc" } });
  return rows.map((r) => {
    const questions = questionsOf(r);
    // The pipeline whose memory the set asks (null while it is empty).
    return { id: r.id, name: r.name, questions: questions.length, pipelineId: questions[0]?.pipelineId ?? null, createdAt: r.createdAt };
  });
}

/** A set by id or name, with its questions. */
export async function getQuestionSet(db: Db, workspaceId: string, idOrName: string) {
  const row = await db.evalQuestionSet.findFirst({ where: { workspaceId, datasetId: null, OR: [{ id: idOrName }, { name: idOrName }] } });
  if (!row) throw notFound(`No question set "${idOrName}" in this workspace (benchmarks: locomo, longmemeval, synthexbench). Add questions to a set from the explorer ("Add to question set").`);
  return { id: row.id, name: row.name, createdAt: row.createdAt, questions: questionsOf(row) };
}

/**
 * Adds a question (with the records that answer it) to a set, creating the set on first use. The
 * same question asked again gains the new records instead of becoming a second question.
 */
export async function addToQuestionSet(db: Db, workspaceId: string, raw: z.input<typeof addToQuestionSetInput>) {
  const input = addToQuestionSetInput.parse(raw);
  const ids = [...new Set(input.recordIds)];
  const found = await db.record.findMany({ where: { workspaceId, id: { in: ids } }, select: { id: true, pipelineId: true } });
  const missing = ids.filter((id) => !found.some((r) => r.id === id));
  if (missing.length) throw notFound(`Record ${missing.join(", ")} not found in this workspace.`);
  const pipelineIds = [...new Set(found.map((r) => r.pipelineId))];
  if (pipelineIds.length > 1) throw badRequest("The records of one question come from one pipeline.");
  const pipelineId = pipelineIds[0]!;
  const sources = await sourcesOf(db, workspaceId, ids);
  return db.$transaction(async (tx) => {
    const existing = await tx.evalQuestionSet.findUnique({ where: { workspaceId_name: { workspaceId, name: input.set } } });
    if (existing?.datasetId) throw badRequest(`"${input.set}" is a benchmark's question set: pick another name.`);
    const questions = existing ? questionsOf(existing) : [];
    if (questions.length && questions[0]!.pipelineId !== pipelineId) {
      throw badRequest(`The question set "${input.set}" asks another pipeline's memory: add this question to a new set.`);
    }
    const same = questions.find((q) => q.question.toLowerCase() === input.question.toLowerCase());
    let question: TeamQuestion;
    if (same) {
      same.recordIds = [...new Set([...same.recordIds, ...ids])];
      same.sources = [...new Set([...same.sources, ...sources])];
      if (input.answer) same.answer = input.answer;
      question = same;
    } else {
      question = { id: randomUUID(), pipelineId, question: input.question, answer: input.answer ?? "", recordIds: ids, sources, addedAt: new Date().toISOString() };
      questions.push(question);
    }
    const data = toJsonColumn(questions);
    const set = existing
      ? await tx.evalQuestionSet.update({ where: { id: existing.id }, data: { questions: data } })
      : await tx.evalQuestionSet.create({ data: { workspaceId, name: input.set, questions: data } });
    return { set: { id: set.id, name: set.name, questions: questions.length }, question, merged: !!same };
  });
}

export async function removeFromQuestionSet(db: Db, workspaceId: string, setId: string, questionId: string) {
  const set = await getQuestionSet(db, workspaceId, setId);
  const questions = set.questions.filter((q) => q.id !== questionId);
  if (questions.length === set.questions.length) throw notFound(`Question ${questionId} is not in "${set.name}".`);
  await db.evalQuestionSet.update({ where: { id: set.id }, data: { questions: toJsonColumn(questions) } });
  return { id: set.id, name: set.name, questions: questions.length };
}

/** Renames a set (its eval runs stay with it: they point at its id). The name is unique in the workspace. */
export async function renameQuestionSet(db: Db, workspaceId: string, setId: string, rawName: string) {
  const parsed = questionSetName.safeParse(rawName);
  if (!parsed.success) throw badRequest(parsed.error.issues[0]!.message);
  const name = parsed.data;
  const set = await getQuestionSet(db, workspaceId, setId);
  if (name === set.name) return { id: set.id, name, questions: set.questions.length };
  const taken = await db.evalQuestionSet.findUnique({ where: { workspaceId_name: { workspaceId, name } }, select: { id: true } });
  if (taken) throw badRequest(`A question set named "${name}" already exists in this workspace: pick another name.`);
  await db.evalQuestionSet.update({ where: { id: set.id }, data: { name } });
  return { id: set.id, name, questions: set.questions.length };
}

/**
 * Deletes a set and its questions. Its completed eval runs keep their stored results (they are
 * listed under the set's old name); an eval of the set still in progress must end first.
 */
export async function deleteQuestionSet(db: Db, workspaceId: string, setId: string) {
  const set = await getQuestionSet(db, workspaceId, setId);
  const running = await db.evalRun.findFirst({ where: { workspaceId, datasetId: set.id, status: { in: ["queued", "running"] } }, select: { id: true } });
  if (running) throw badRequest(`An eval of "${set.name}" is in progress (${running.id}): cancel it or wait for it before deleting the set.`);
  await db.evalQuestionSet.delete({ where: { id: set.id } });
  return { id: set.id, name: set.name, questions: set.questions.length };
}

/**
 * Traces hits in a team's own memory: the source records each reaches (its "sessions") and the
 * records on its lineage, itself included (a picked record is reached by it or by anything made
 * from it).
 */
export class LineageTracer {
  private readonly lineage = new Map<string, { ancestors: string[]; sources: string[] }>();

  constructor(
    private readonly db: Db,
    private readonly workspaceId: string,
  ) {}

  async load(ids: string[]): Promise<void> {
    const missing = [...new Set(ids)].filter((id) => !this.lineage.has(id));
    if (!missing.length) return;
    const rows = await lineageMembers(this.db, this.workspaceId, missing);
    for (const id of missing) this.lineage.set(id, { ancestors: [], sources: [] });
    for (const r of rows) {
      const entry = this.lineage.get(r.top)!;
      entry.ancestors.push(r.id);
      if (r.leaf) entry.sources.push(r.id);
    }
  }

  trace(hit: HitRecord): TracedHit {
    const entry = this.lineage.get(hit.id) ?? { ancestors: [hit.id], sources: [] };
    return { id: hit.id, sessions: entry.sources, turns: entry.ancestors, tokens: estimateContextTokens(hit.content), reachesSource: entry.sources.length > 0, content: hit.content };
  }
}
