/**
 * Scoring again what was already built reuses it: a template (or a pipeline's branch) scored a second
 * time on the same data with the same spec starts no pipeline run — it searches what the first eval
 * built and ranks the same; a changed spec builds again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPipeline, saveVersion } from "../services/pipelines";
import { runEval } from "./service";
import { evalCostSchema } from "./stored";
import { TWO_ALTITUDE_SPEC } from "./testing/two-altitude-spec";
import { evalWorkspace, type EvalWorkspace } from "./testing/eval-workspace";

let ws: EvalWorkspace;
beforeAll(async () => {
  ws = await evalWorkspace("reuse@example.com");
}, 120_000);
afterAll(() => ws?.close());

const buildRuns = (pipelineId: string) => ws.db.run.count({ where: { pipelineId } });
const reusedOf = (cost: unknown) => (evalCostSchema.parse(cost) as { reusedBuildRunId?: string }).reusedBuildRunId;

describe("eval build reuse", () => {
  it("scores a template a second time without rebuilding it, with the same results", async () => {
    const { db, workspaceId, datasetId } = ws;
    const first = await runEval(db, { workspaceId, template: "bm25-windows", datasetId });
    expect(first.status, first.error ?? "").toBe("completed");
    const built = await buildRuns(first.evalPipelineId);
    expect(built).toBe(1);
    expect(reusedOf(first.cost)).toBeUndefined();

    const again = await runEval(db, { workspaceId, template: "bm25-windows", datasetId });
    expect(again.status, again.error ?? "").toBe("completed");
    expect(again.evalPipelineId).toBe(first.evalPipelineId);
    expect(await buildRuns(first.evalPipelineId)).toBe(built); // no pipeline run started
    const lastRun = await db.run.findFirstOrThrow({ where: { pipelineId: first.evalPipelineId }, orderBy: { createdAt: "desc" } });
    expect(reusedOf(again.cost)).toBe(lastRun.id);
    expect(again.metrics).toEqual(first.metrics);
    expect((again.cost as { thisRun: { modelCalls: number; tokens: number } }).thisRun).toMatchObject({ modelCalls: 0, tokens: 0 });
  }, 120_000);

  it("builds a pipeline's branch again when its spec changed, and reuses that build after", async () => {
    const { db, workspaceId, datasetId } = ws;
    const { pipeline } = await createPipeline(db, workspaceId, { name: "reuse-team", spec: TWO_ALTITUDE_SPEC });
    const score = () => runEval(db, { workspaceId, pipeline: "reuse-team", datasetId, mode: "bm25", step: "windows" });
    const first = await score();
    expect(first.status, first.error ?? "").toBe("completed");
    const built = await buildRuns(first.evalPipelineId);

    const wider = { ...TWO_ALTITUDE_SPEC, steps: TWO_ALTITUDE_SPEC.steps.map((s) => (s.name === "windows" ? { ...s, operator: { kind: "windows", radius: 2 } } : s)) };
    await saveVersion(db, pipeline.id, { spec: wider, message: "Wider windows" });
    const changed = await score();
    expect(changed.status, changed.error ?? "").toBe("completed");
    expect(await buildRuns(first.evalPipelineId)).toBe(built + 1);
    expect(reusedOf(changed.cost)).toBeUndefined();

    const same = await score();
    expect(await buildRuns(first.evalPipelineId)).toBe(built + 1);
    expect(reusedOf(same.cost)).toBeDefined();
    expect(same.metrics).toEqual(changed.metrics);
  }, 180_000);
});
