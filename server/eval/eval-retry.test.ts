import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../core/db";
import { createEvalRun, executeEvalRun } from "./service";
import { evalWorkspace, type EvalWorkspace } from "./testing/eval-workspace";

let ws: EvalWorkspace;
beforeAll(async () => {
  ws = await evalWorkspace("eval-retry@example.com");
}, 180_000);
afterAll(() => ws?.close());

/** The real database, except that its first `failures` transactions cannot start (Prisma P2028 under load). */
function busyAtFirst(db: Db, failures: number): { db: Db; refused: () => number } {
  let refused = 0;
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === "$transaction") {
        return (...args: unknown[]) => {
          if (refused < failures) {
            refused++;
            return Promise.reject(Object.assign(new Error("Transaction API error: Unable to start a transaction in the given time."), { code: "P2028" }));
          }
          return (target.$transaction as (...a: unknown[]) => Promise<unknown>)(...args);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  return { db: proxy, refused: () => refused };
}

describe("an eval under a busy database", () => {
  it("waits out a transaction that cannot start in time instead of failing", async () => {
    const created = await createEvalRun(ws.db, { workspaceId: ws.workspaceId, template: "bm25-sessions", datasetId: ws.datasetId });
    const busy = busyAtFirst(ws.db, 2);
    const run = await executeEvalRun(busy.db, created.id);
    expect(busy.refused()).toBe(2);
    expect({ status: run.status, error: run.error }).toEqual({ status: "completed", error: null });
    expect(await ws.db.evalCase.count({ where: { evalRunId: run.id } })).toBe(9);
  });
});
