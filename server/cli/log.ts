/**
 * `synthex log on|off|list|traffic|label` and `synthex replay --branch <b>` (issue 37): the
 * pipeline's query log and its replay on a branch, through the same procedures (log:read) as the app.
 * `synthex shadow …` (shadow traffic) is registered beside them, from ./shadow.ts.
 */
import type { Command } from "commander";
import type { Connection } from "./api";
import type { BranchCliDeps, BranchGlobalOptions } from "./branch";
import { num, table } from "./output";
import { registerShadowCommands } from "./shadow";

const print = (opts: BranchGlobalOptions, value: unknown, human: () => string) => console.log(opts.json ? JSON.stringify(value, null, 2) : human());
const pct = (x: number | null) => (x === null ? "—" : `${(x * 100).toFixed(1)}%`);
const interval = (i: { mean: number; low: number | null; high: number | null; n: number }) =>
  i.low === null ? `${i.mean.toFixed(3)} (n=${i.n})` : `${i.mean.toFixed(3)} [${i.low.toFixed(3)}, ${i.high!.toFixed(3)}] (n=${i.n})`;

export function registerLogCommands(program: Command, deps: Omit<BranchCliDeps, "selectBranch">) {
  const { action, pipelineName } = deps;
  const ref = (conn: Connection, opts: BranchGlobalOptions, branch = "main") => ({ workspaceId: conn.workspaceId, pipelineId: pipelineName(opts), branch });
  const needsPipeline = (_args: unknown, opts: BranchGlobalOptions) => void pipelineName(opts);
  const log = program.command("log").description("the pipeline's query log: what agents asked and what was served (opt-in; needs log:read)");

  for (const [name, enabled] of [["on", true], ["off", false]] as const) {
    log
      .command(name)
      .description(enabled ? "start logging served searches, asks, briefs and walks" : "stop logging (entries already kept stay until retention)")
      .option("--retention-days <n>", "keep entries this many days")
      .option("--max-entries <n>", "keep at most this many entries")
      .action(
        action(async (conn, opts) => {
          const o = opts as BranchGlobalOptions & { retentionDays?: string; maxEntries?: string };
          const saved = await conn.api.log.setConfig.mutate({
            ...ref(conn, opts),
            enabled,
            retentionDays: o.retentionDays ? Number(o.retentionDays) : undefined,
            maxEntries: o.maxEntries ? Number(o.maxEntries) : undefined,
          });
          print(opts, saved, () => `Query log ${saved.enabled ? "on" : "off"}: ${saved.retentionDays} days, at most ${num(saved.maxEntries)} entries.`);
        }, needsPipeline),
      );
  }

  log
    .command("list")
    .description("logged queries, newest first")
    .option("--limit <n>", "how many", "20")
    .option("--kind <kind>", "search, ask, brief or walk")
    .option("--scope <prefix>", "only this scope and below")
    .action(
      action(async (conn, opts) => {
        const o = opts as BranchGlobalOptions & { limit: string; kind?: "search" | "ask" | "brief" | "walk"; scope?: string };
        const rows = await conn.api.log.list.query({ ...ref(conn, opts), limit: Number(o.limit) || 20, kind: o.kind, scope: o.scope });
        print(opts, rows, () =>
          rows.length
            ? table(rows.map((r) => ({ id: r.id, at: r.createdAt.toISOString().slice(0, 19), via: r.surface, kind: r.kind, scope: r.scope ?? "", query: r.query.slice(0, 60), hits: num(r.hits.length), ms: num(r.latencyMs) })))
            : "No logged queries (is the log on? synthex log on).",
        );
      }, needsPipeline),
    );

  log
    .command("traffic")
    .description("queries per day, most frequent, slowest, no-good-match rate")
    .action(
      action(async (conn, opts) => {
        const t = await conn.api.log.traffic.query(ref(conn, opts));
        print(opts, t, () =>
          [
            `${num(t.total)} logged queries, ${pct(t.noMatchRate)} with no good match.`,
            table(t.perDay.map((d) => ({ day: d.key, queries: num(d.count), "no match": pct(d.noMatchRate), "mean ms": num(Math.round(d.meanLatencyMs)) }))),
            "Most frequent:",
            table(t.frequent.slice(0, 10).map((f) => ({ query: f.key.slice(0, 60), times: num(f.count) }))),
          ].join("\n"),
        );
      }, needsPipeline),
    );

  log
    .command("label <entryId> <recordId>")
    .description("mark the record that should have come first: the query joins a question set")
    .option("--set <name>", "question set", "from-traffic")
    .action(
      action(async (conn, opts, entryId: string, recordId: string) => {
        const o = opts as BranchGlobalOptions & { set: string };
        const res = await conn.api.log.label.mutate({ ...ref(conn, opts), entryId, recordId, set: o.set });
        print(opts, res, () => `Added to question set "${res.set}" (${num(res.questions)} question${res.questions === 1 ? "" : "s"}): score it with synthex eval ${res.set}.`);
      }, needsPipeline),
    );

  program
    .command("replay")
    .description("replay logged searches and asks on a branch against main: overlap@k, RBO, gained/lost, citation recall")
    .requiredOption("--on <branch>", "the branch to replay on")
    .option("--since <date>", "logged at or after (ISO date)")
    .option("--sample <n>", "a seeded random sample of this many queries")
    .option("--k <n>", "depth compared (default: each query's own limit)")
    .option("--judge-model <provider/model>", "ask this model per query which context answers better (both orders); omitted: not measured")
    .option("--budget <usd>", "USD the judge may spend (default 1)")
    .action(
      action(async (conn, opts) => {
        const o = opts as BranchGlobalOptions & { on: string; since?: string; sample?: string; k?: string; judgeModel?: string; budget?: string };
        const r = await conn.api.log.replay.mutate({
          ...ref(conn, opts, o.on),
          from: o.since ? new Date(o.since) : undefined,
          sample: o.sample ? Number(o.sample) : undefined,
          k: o.k ? Number(o.k) : undefined,
          judgeModel: o.judgeModel,
          budgetUsd: o.budget ? Number(o.budget) : undefined,
        });
        const s = r.summary;
        const p = s.preference;
        print(opts, r, () =>
          [
            table(
              r.queries.map((q) => ({
                query: q.query.slice(0, 50),
                "overlap@k": q.overlap.toFixed(2),
                rbo: q.rbo.toFixed(2),
                gained: num(q.gained.length),
                lost: num(q.lost.length),
                "cit. main": pct(q.main.citationRecall),
                "cit. branch": pct(q.branch.citationRecall),
                ...(p.measured ? { better: q.preference?.winner ?? "unjudged" } : {}),
                error: q.error ?? "",
              })),
            ),
            `${num(s.replayed)} queries replayed on ${r.branch} vs ${r.baseline}: overlap@k ${s.meanOverlap.toFixed(3)}, RBO ${s.meanRbo.toFixed(3)}, ${num(s.gained)} gained, ${num(s.lost)} lost.`,
            `Citation recall: ${pct(s.citationRecall.main)} → ${pct(s.citationRecall.branch)}; branch − main ${interval(s.citationRecall.diff)}.`,
            `Latency: ${s.meanLatencyMs.main.toFixed(1)} ms → ${s.meanLatencyMs.branch.toFixed(1)} ms; branch − main ${interval(s.latencyDiff)}.`,
            p.measured
              ? `Preference (${p.judgeModel}, both orders): branch ${num(p.branchWins)}, main ${num(p.mainWins)}, tie ${num(p.ties)}, unjudged ${num(p.unjudged + p.overBudget)}; branch win rate ${pct(p.winRate)}; branch − main ${interval(p.interval)}; $${p.spentUsd.toFixed(4)} in ${num(p.calls)} calls.`
              : `Preference: ${p.reason}.`,
          ].join("\n"),
        );
      }, needsPipeline),
    );

  registerShadowCommands(program, deps);
}
