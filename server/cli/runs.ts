/**
 * `synthex run [step]` (starts a run and follows it step by step to its end, then prints the run
 * record's own time and each step's stats) and `synthex runs [id]` (recent runs, or one run).
 */
import type { Command } from "commander";
import type { BranchGlobalOptions } from "./branch";
import { resolvePipeline, type CommandDeps } from "./import";
import { bar, num, print, ProgressLine, table, usd } from "./output";

export function registerRunCommands(program: Command, deps: CommandDeps) {
  const { action, pipelineName } = deps;
  program
    .command("run [step]")
    .description("run the pipeline (only missing work); a step name runs it and what it needs")
    .option("--from <step>", "run this step and everything downstream")
    .option("--full", "recompute even where results exist")
    .option("--replay", "reuse stored model responses (no spend)")
    .action(
      action(async (conn, opts, step?: string) => {
        const o = opts as BranchGlobalOptions & { from?: string; full?: boolean; replay?: boolean };
        const { pipeline, branch, version } = await resolvePipeline(conn, opts, deps);
        const run = await conn.api.run.start.mutate({
          workspaceId: conn.workspaceId,
          pipelineId: pipeline.id,
          branch: branch.name,
          options: { steps: step ? [step] : undefined, from: o.from, full: o.full, replay: o.replay },
        });
        const progress = new ProgressLine();
        const shown = new Set<string>();
        let current = run;
        for (;;) {
          const detail = await conn.api.run.get.query({ workspaceId: conn.workspaceId, runId: run.id });
          current = detail;
          const steps = detail.stats.steps;
          if (!opts.json) {
            for (const s of steps) {
              if (shown.has(s.step)) continue;
              if (s.status === "pending") continue;
              const line = `${s.step.padEnd(16)} ${bar(s.input, Math.max(s.input, s.input + 0))} ${num(s.output)} new, ${num(s.skipped)} unchanged${s.errors ? `, ${s.errors} failed` : ""}${s.reason ? ` (${s.status}: ${s.reason})` : ""}`;
              if (s.status !== "running") {
                progress.done(line);
                shown.add(s.step);
              } else progress.update(line);
            }
          }
          if (!["queued", "running"].includes(detail.status)) break;
          await new Promise((r) => setTimeout(r, 300));
        }
        const steps = current.stats.steps;
        const created = steps.reduce((a, s) => a + s.output, 0);
        const tokens = steps.reduce((a, s) => a + s.tokensIn + s.tokensOut, 0);
        const cost = steps.reduce((a, s) => a + s.costUsd, 0);
        const usesOffline = version.spec.steps.some((s) => "model" in s && String(s.model ?? "").startsWith("offline/"));
        // One clock: the run record's own start and finish (not this process's wait), and its steps' stats.
        const ran = current.startedAt && current.finishedAt ? new Date(current.finishedAt).getTime() - new Date(current.startedAt).getTime() : null;
        const perStep = table(
          steps.map((s) => ({
            step: s.step,
            status: s.status === "pending" ? "queued" : s.status,
            items: num(s.items ?? 0),
            made: num(s.output),
            time: `${(s.durationMs / 1000).toFixed(1)} s`,
            tokens: num(s.tokensIn + s.tokensOut),
            cost: usd(s.costUsd),
          })),
        );
        const { OFFLINE_MODEL_LABEL } = await import("../llm/offline-model");
        print(opts, current, () =>
          [
            perStep,
            `Run ${current.id}: ${current.status}. ${num(created)} records created, ${num(tokens)} tokens, ${usd(cost)}, ${ran === null ? "?" : (ran / 1000).toFixed(1)} s (run record).`,
            current.error ? `Error: ${current.error}` : "",
            usesOffline ? `Note: ${OFFLINE_MODEL_LABEL}` : "",
            "Next: synthex search \"…\"",
          ]
            .filter(Boolean)
            .join("\n"),
        );
        if (current.status === "failed" || current.status === "cancelled") process.exitCode = 1;
      }, (_args, opts) => void pipelineName(opts)),
    );

  program
    .command("runs [id]")
    .description("recent runs, or one run's details")
    .action(
      action(async (conn, opts, id?: string) => {
        if (id) {
          const run = await conn.api.run.get.query({ workspaceId: conn.workspaceId, runId: id });
          const steps = run.stats.steps;
          print(opts, run, () =>
            [
              `Run ${run.id} on ${run.branchName}: ${run.status}${run.error ? ` — ${run.error}` : ""}`,
              table(steps.map((s) => ({ step: s.step, input: s.input, output: s.output, skipped: s.skipped, errors: s.errors, tokens: s.tokensIn + s.tokensOut, cost: usd(s.costUsd), ms: s.durationMs }))),
              ...run.failures.map((f) => `failed ${f.step} [${f.inputKey}] after ${f.attempts} attempt(s): ${f.error}`),
            ].join("\n"),
          );
          return;
        }
        const { pipeline } = await resolvePipeline(conn, opts, deps);
        const runs = await conn.api.run.list.query({ workspaceId: conn.workspaceId, pipelineId: pipeline.id });
        print(opts, runs, () =>
          table(runs.map((r) => ({ id: r.id, status: r.status, started: r.startedAt?.toISOString() ?? "", finished: r.finishedAt?.toISOString() ?? "" }))),
        );
      }, ([id], opts) => { if (!id) pipelineName(opts); }),
    );
}
