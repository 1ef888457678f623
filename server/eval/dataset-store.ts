/**
 * Benchmark datasets as workspace rows: a loaded benchmark (datasets.ts) is stored once per
 * workspace, addressed by its content (the same file imported twice is one row), listed, and read
 * back parsed (its JSON columns through zod) when an eval is created or built.
 */
import { createHash } from "node:crypto";
import type { Db } from "../core/db";
import { notFound } from "../core/errors";
import { toJsonColumn } from "../core/json";
import { loadDataset, type DatasetSource } from "./datasets";
import { loadSkipsSchema } from "./stored";
import { datasetSchema, type Dataset, type LoadSkip } from "./types";

/** SHA-256 of the normalized dataset (not its file name): the same benchmark imported twice is one row. */
export function datasetHash(dataset: Dataset): string {
  const { benchmark, samples, questions } = dataset;
  return createHash("sha256").update(JSON.stringify({ benchmark, samples, questions })).digest("hex");
}

/** Stores a loaded dataset once per workspace (content-addressed); returns the row. */
export async function saveDataset(db: Db, workspaceId: string, loaded: { dataset: Dataset; skips: LoadSkip[] }) {
  const contentHash = datasetHash(loaded.dataset);
  const existing = await db.evalDataset.findUnique({ where: { workspaceId_contentHash: { workspaceId, contentHash } } });
  if (existing) return existing;
  return db.evalDataset.create({
    data: {
      workspaceId,
      benchmark: loaded.dataset.benchmark,
      name: loaded.dataset.name,
      contentHash,
      data: toJsonColumn(loaded.dataset),
      samples: loaded.dataset.samples.length,
      questions: loaded.dataset.questions.length,
      skips: toJsonColumn(loaded.skips),
    },
  });
}

/** Parses a benchmark file's text (or generates SynthexBench) and stores it. */
export async function importDataset(db: Db, workspaceId: string, input: DatasetSource) {
  return saveDataset(db, workspaceId, loadDataset(input));
}

export async function listDatasets(db: Db, workspaceId: string) {
  return db.evalDataset.findMany({
    where: { workspaceId },
    orderBy: { createdAt: "desc" },
    select: { id: true, benchmark: true, name: true, samples: true, questions: true, contentHash: true, skips: true, createdAt: true },
  });
}

/** A stored dataset of this workspace, parsed. */
export async function getDataset(db: Db, workspaceId: string, id: string) {
  const row = await db.evalDataset.findFirst({ where: { id, workspaceId } });
  if (!row) throw notFound(`Eval dataset ${id} not found in this workspace.`);
  return { row, dataset: datasetSchema.parse(row.data), skips: loadSkipsSchema.parse(row.skips) };
}
