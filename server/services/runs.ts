import type { Prisma } from "../generated/prisma/client";
import type { ModelProvider } from "../engine/model";
import { executeRun, planRun, type RunOptions, type StepStats } from "../engine/runner";
import { OfflineModel } from "../llm/offline-model";
import { workspaceModel } from "../llm/workspace-model";
import { PostgresRecordStore } from "../store/record-store";
import type { Db } from "../core/db";
import { badRequest, notFound } from "../core/errors";
import { afterRun } from "./after-run";
import { dispatchRun, requestRunCancellation } from "./executor";
import { getBranch } from "./pipelines";

export type RunRequest = Pick<RunOptions, "steps" | "from" | "full" | "replay" | "concurrency" | "batchSize">;

export async function createRun(
  db: Db,
  input: { workspaceId: string; pipelineId: string; branch?: string; options?: RunRequest; triggeredBy?: string | null },
) {
  const { branch, version } = await getBranch(db, input.pipelineId, input.branch ?? "main");
  const running = await db.run.findFirst({ where: { branchId: branch.id, status: { in: ["queued", "running"] } } });
  if (running) throw badRequest(`A run is already in progress on branch "${branch.name}" (${running.id}). Wait for it or cancel it.`);
  return db.run.create({
    data: {
      workspaceId: input.workspaceId,
      pipelineId: input.pipelineId,
      branchId: branch.id,
      versionId: version.id,
      status: "queued",
      options: (input.options ?? {}) as Prisma.InputJsonValue,
      triggeredBy: input.triggeredBy ?? null,
    },
  });
}

/** Executes a queued run in this process. Progress lands on the Run row so every UI reads the same thing. */
export async function executeRunRow(
  db: Db,
  runId: string,
  deps: {
    model?: ModelProvider;
    onEvent?: RunOptions["onEvent"];
    signal?: AbortSignal;
    runOptions?: Partial<RunOptions>;
    /** Index for search and notify webhooks after the run (default true). */
    afterRun?: boolean;
  } = {},
) {
  const run = await db.run.findUnique({ where: { id: runId } });
  if (!run) throw notFound(`Run ${runId} not found.`);
  const version = await db.pipelineVersion.findUniqueOrThrow({ where: { id: run.versionId } });
  await db.run.update({ where: { id: runId }, data: { status: "running", startedAt: new Date() } });
  const stats = new Map<string, StepStats>();
  let lastWrite = 0;
  const persist = async (force = false) => {
    if (!force && Date.now() - lastWrite < 500) return;
    lastWrite = Date.now();
    await db.run.update({ where: { id: runId }, data: { stats: { steps: [...stats.values()] } as unknown as Prisma.InputJsonValue } });
  };
  const result = await executeRun(
    {
      store: new PostgresRecordStore(db),
      model: deps.model ?? workspaceModel(db, run.workspaceId),
      workspaceId: run.workspaceId,
      pipelineId: run.pipelineId,
      branchId: run.branchId,
      runId,
      spec: version.spec as never,
    },
    {
      ...(run.options as RunRequest),
      ...deps.runOptions,
      signal: deps.signal,
      onEvent: (event) => {
        if (event.type === "step-progress" || event.type === "step-finished") {
          stats.set(event.step, event.stats);
          void persist(event.type === "step-finished");
        }
        deps.onEvent?.(event);
      },
    },
  );
  const finished = await db.run.update({
    where: { id: runId },
    data: {
      status: result.status,
      error: result.error ?? null,
      finishedAt: new Date(),
      stats: { steps: result.steps } as unknown as Prisma.InputJsonValue,
    },
  });
  // Index what the run made for search and notify projection webhooks (never throws).
  if (deps.afterRun !== false) await afterRun(db, finished);
  return finished;
}

export async function runPipeline(
  db: Db,
  input: Parameters<typeof createRun>[1],
  deps: Parameters<typeof executeRunRow>[2] = {},
) {
  const run = await createRun(db, input);
  return executeRunRow(db, run.id, deps);
}

export async function cancelRun(db: Db, workspaceId: string, runId: string) {
  const result = await db.run.updateMany({
    where: { id: runId, workspaceId, status: { in: ["queued", "running"] } },
    data: { cancelRequested: true },
  });
  if (result.count === 0) throw badRequest("That run is not in progress.");
  // The in-process runner polls the flag; Inngest also gets the event so cancelOn stops it between steps.
  await requestRunCancellation(runId);
  return { cancelling: runId };
}

export async function planPipeline(db: Db, pipelineId: string, branchName = "main", options: RunRequest = {}) {
  const { branch, version } = await getBranch(db, pipelineId, branchName);
  return planRun(
    {
      store: new PostgresRecordStore(db),
      model: new OfflineModel(),
      workspaceId: branch.workspaceId,
      pipelineId,
      branchId: branch.id,
      runId: "plan",
      spec: version.spec as never,
    },
    options,
  );
}

/**
 * Starts a run without waiting for it, on the configured executor (`SYNTHEX_EXECUTOR`, see
 * executor.ts): in this server process (local, the default) or on Inngest.
 */
export async function startRun(db: Db, input: Parameters<typeof createRun>[1]) {
  const run = await createRun(db, input);
  await dispatchRun(db, run);
  return run;
}

export async function listRuns(db: Db, workspaceId: string, pipelineId: string, take = 50) {
  return db.run.findMany({ where: { workspaceId, pipelineId }, orderBy: { createdAt: "desc" }, take });
}

export async function getRun(db: Db, workspaceId: string, runId: string) {
  const run = await db.run.findFirst({
    where: { id: runId, workspaceId },
    include: { failures: { orderBy: { createdAt: "asc" }, take: 200 } },
  });
  if (!run) throw notFound(`Run ${runId} not found.`);
  const branch = await db.branch.findUnique({ where: { id: run.branchId }, select: { name: true } });
  return { ...run, branchName: branch?.name ?? "?" };
}
