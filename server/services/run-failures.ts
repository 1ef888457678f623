/**
 * A run's failures grouped by step and identical error: a provider outage or a missing key fails
 * every item the same way, and 200 copies of one message hide the one that differs.
 */
import type { Db } from "../core/db";
import { notFound } from "../core/errors";

export interface FailureGroup {
  step: string;
  error: string;
  count: number;
  attempts: number;
  /** The first failure of the group, to inspect. */
  example: { id: string; inputKey: string; rawResponse: string | null; createdAt: Date };
}

/** Groups, largest first (then by step); at most `limit` groups. */
export async function failureGroups(db: Db, workspaceId: string, runId: string, limit = 100): Promise<{ total: number; groups: FailureGroup[] }> {
  const run = await db.run.findFirst({ where: { id: runId, workspaceId }, select: { id: true } });
  if (!run) throw notFound(`Run ${runId} not found.`);
  const rows = await db.runFailure.groupBy({
    by: ["step", "error"],
    where: { runId, workspaceId },
    _count: { _all: true },
    _sum: { attempts: true },
    _min: { createdAt: true },
  });
  rows.sort((a, b) => b._count._all - a._count._all || a.step.localeCompare(b.step) || a.error.localeCompare(b.error));
  const groups: FailureGroup[] = [];
  for (const g of rows.slice(0, limit)) {
    const example = await db.runFailure.findFirstOrThrow({
      where: { runId, workspaceId, step: g.step, error: g.error },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      select: { id: true, inputKey: true, rawResponse: true, createdAt: true },
    });
    groups.push({ step: g.step, error: g.error, count: g._count._all, attempts: g._sum.attempts ?? 0, example });
  }
  return { total: rows.reduce((n, g) => n + g._count._all, 0), groups };
}
