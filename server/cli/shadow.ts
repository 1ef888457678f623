/**
 * `synthex shadow on|off|report --branch <b>` (issue 37): a branch answers copies of main's live
 * queries for a period; its report is replay's. `--branch` is the global option (default: the branch
 * `branch switch` selected); main itself is refused with the reason. Through the same procedures as
 * the app (setting needs workspace:update, the report log:read).
 */
import type { Command } from "commander";
import type { Connection } from "./api";
import type { BranchCliDeps, BranchGlobalOptions } from "./branch";
import { num, table } from "./output";

type Options = BranchGlobalOptions & { minutes?: string; until?: string; from?: string; limit?: string };

const print = (opts: BranchGlobalOptions, value: unknown, human: () => string) => console.log(opts.json ? JSON.stringify(value, null, 2) : human());
const pct = (x: number | null) => (x === null ? "—" : `${(x * 100).toFixed(1)}%`);
const interval = (i: { mean: number; low: number | null; high: number | null; n: number }, digits = 3) =>
  i.low === null ? `${i.mean.toFixed(digits)} (n=${i.n})` : `${i.mean.toFixed(digits)} [${i.low.toFixed(digits)}, ${i.high!.toFixed(digits)}] (n=${i.n})`;
const when = (d: Date) => d.toISOString().slice(0, 16).replace("T", " ");

/** A date option: an ISO date-time, refused with the option's name when it is not one. */
function dateOption(name: string, value: string | undefined, fail: BranchCliDeps["fail"]): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) fail(`${name}: not a date-time ("${value}"); e.g. 2026-12-01T09:00Z.`, 2);
  return d;
}

export function registerShadowCommands(program: Command, deps: Omit<BranchCliDeps, "selectBranch">) {
  const { action, pipelineName, fail } = deps;
  const ref = (conn: Connection, opts: Options) => ({ workspaceId: conn.workspaceId, pipelineId: pipelineName(opts), branch: opts.branch });
  const needsPipeline = (_args: unknown, opts: BranchGlobalOptions) => void pipelineName(opts);
  const shadow = program.command("shadow").description("a branch answers copies of main's live queries in the background; its report is replay's");

  shadow
    .command("on")
    .description("start (or re-time) shadow traffic on a branch; default for 24 hours from now")
    .option("--minutes <n>", "for this many minutes")
    .option("--until <date>", "until this date-time (ISO)")
    .option("--from <date>", "start at this date-time (ISO; default now)")
    .action(
      action(async (conn, opts) => {
        const o = opts as Options;
        if (o.minutes !== undefined && !/^\d+$/.test(o.minutes)) fail(`--minutes: a whole number of minutes ("${o.minutes}").`, 2);
        const s = await conn.api.shadow.start.mutate({
          ...ref(conn, o),
          minutes: o.minutes !== undefined ? Number(o.minutes) : undefined,
          endsAt: dateOption("--until", o.until, fail),
          startsAt: dateOption("--from", o.from, fail),
        });
        print(opts, s, () => `Shadow traffic on ${s.branch}: ${s.state}, ${when(s.startsAt)} → ${when(s.endsAt)} UTC. Report: synthex shadow report --branch ${s.branch}`);
      }, needsPipeline),
    );

  shadow
    .command("off")
    .description("stop a branch's shadow traffic (its report stays)")
    .action(
      action(async (conn, opts) => {
        const s = await conn.api.shadow.stop.mutate(ref(conn, opts as Options));
        print(opts, s, () => `Shadow traffic on ${s.branch} stopped: ${num(s.answered)} answered, ${num(s.dropped)} dropped.`);
      }, needsPipeline),
    );

  shadow
    .command("report")
    .description("what the branch answered against what main served: overlap@k, RBO, gained/lost, latency, citation recall")
    .option("--limit <n>", "queries listed", "10")
    .action(
      action(async (conn, opts) => {
        const o = opts as Options;
        const r = await conn.api.shadow.report.query({ ...ref(conn, o), limit: Number(o.limit) || 10 });
        const s = r.summary;
        print(opts, r, () => {
          if (!r.shadow) return `${o.branch} has never shadowed main (synthex shadow on --branch ${o.branch}).`;
          const sh = r.shadow;
          return [
            `Shadow of main on ${sh.branch}: ${sh.state}${sh.stopReason ? ` (${sh.stopReason})` : ""}, ${when(sh.startsAt)} → ${when(sh.stoppedAt ?? sh.endsAt)} UTC.`,
            `${num(sh.answered)} answered, ${num(sh.failed)} failed, ${num(sh.dropped)} dropped (queue full).`,
            r.queries.length
              ? table(r.queries.map((q) => ({ at: when(q.at), kind: q.kind, query: q.query.slice(0, 40), "overlap@k": q.overlap.toFixed(2), rbo: q.rbo.toFixed(2), gained: num(q.gained.length), lost: num(q.lost.length), error: q.error ?? "" })))
              : "No copies answered yet.",
            `Compared ${num(s.replayed)}: overlap@k ${s.meanOverlap.toFixed(3)}, RBO ${s.meanRbo.toFixed(3)}, ${num(s.gained)} gained, ${num(s.lost)} lost.`,
            `Citation recall: ${pct(s.citationRecall.main)} → ${pct(s.citationRecall.branch)}; branch − main ${interval(s.citationRecall.diff)}.`,
            `Latency: ${s.meanLatencyMs.main.toFixed(1)} ms → ${s.meanLatencyMs.branch.toFixed(1)} ms; branch − main ${interval(s.latencyDiff, 1)}.`,
          ].join("\n");
        });
      }, needsPipeline),
    );
}
