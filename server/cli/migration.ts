/**
 * The text of "Try another architecture" on the command line (issue 50): what `synthex branch
 * create --template` prints (the binding and the plan) and `synthex branch report` (the migration
 * report). The commands themselves are in branch.ts.
 */
import type { RouterOutputs } from "./api";
import { num, table, usd } from "./output";

type Candidate = RouterOutputs["migration"]["create"];
type Report = RouterOutputs["migration"]["report"];

/** `--bind sessions=chats` (repeatable) as the binding map; null with the bad value. */
export function parseBindings(values: string[]): { bind: Record<string, string> } | { bad: string } {
  const bind: Record<string, string> = {};
  for (const v of values) {
    const m = /^([^=\s]+)=([^=\s]+)$/.exec(v);
    if (!m) return { bad: v };
    bind[m[1]!] = m[2]!;
  }
  return { bind };
}

export function candidateText(c: Candidate): string {
  const rows = c.plan.steps.map((p) => ({
    step: p.step,
    type: p.type,
    compute: `${p.estimated ? "≤" : ""}${num(p.pending)} of ${num(p.total)}`,
    model: p.usesModel ? (p.model ?? "") : "",
    tokens: p.usesModel ? num(p.estimatedTokensIn + p.estimatedTokensOut) : "",
    cost: p.usesModel ? usd(p.estimatedCostUsd) : "",
  }));
  return [
    c.message,
    "Binding (template source ← pipeline source):",
    ...c.bindings.map((b) => `  ${b.templateSource} ← ${b.pipelineSource} (${b.format}${b.chosen ? "" : ", matched by format"})`),
    ...(c.unbound.length ? [`  kept, unread by the template: ${c.unbound.join(", ")}`] : []),
    `Plan (model ${c.model}):`,
    table(rows),
    c.summary,
    ...(c.plan.warning ? [`Warning: ${c.plan.warning}`] : []),
    `Next: synthex run --branch ${c.branch.name}   ·   synthex branch report ${c.branch.name}`,
  ].join("\n");
}

const fmt = (v: number | null | undefined) => (v === null || v === undefined ? "-" : Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(3));
const ci = (c: [number, number] | null) => (c ? `[${fmt(c[0])}, ${fmt(c[1])}]` : "-");

export function reportText(r: Report): string {
  const lines = [`Migration report: ${r.branch} against ${r.baseline}`];
  lines.push(
    table(
      r.metrics.map((m) => ({ from: m.from, metric: m.metric, [r.baseline]: fmt(m.main), [r.branch]: fmt(m.candidate), delta: fmt(m.delta), "95% interval": ci(m.ci95), n: m.n ?? "" })),
    ),
  );
  if (r.replay) {
    const l = r.replay.latencyMs;
    lines.push(`Replay: ${num(r.replay.replayed)} logged queries; latency p50/p95 ${fmt(l.main.p50)}/${fmt(l.main.p95)} ms on ${r.baseline}, ${fmt(l.candidate.p50)}/${fmt(l.candidate.p95)} ms on ${r.branch}.`);
  }
  const b = r.cost.build;
  lines.push(
    `Cost to build in full: ${b.main.fullCostUsd === null ? "-" : usd(b.main.fullCostUsd)} (${r.baseline}), ${usd(b.candidate.fullCostUsd)} (${r.branch}); spent so far on ${r.branch}: ${usd(b.candidate.spent.costUsd)} in ${num(b.candidate.spent.runs)} run(s)${b.candidate.pending ? `; ${num(b.candidate.pending)} item(s) not computed yet` : ""}.`,
  );
  if (r.questionSet) {
    const q = r.questionSet.perQuery;
    lines.push(`Per query (question set ${r.questionSet.set.name}): ${fmt(q.main.tokens)} context tokens on ${r.baseline}, ${fmt(q.candidate.tokens)} on ${r.branch}.`);
    lines.push(r.questionSet.worse.length ? `Questions that got worse (${r.questionSet.outcomeMetric}):` : "No question of the set got worse.");
    for (const w of r.questionSet.worse) lines.push(`  - ${w.question}  (records ${w.recordIds.join(", ")})`);
  }
  if (r.replay) {
    lines.push(r.replay.worse.length ? "Queries that got worse:" : "No replayed query got worse.");
    for (const w of r.replay.worse) lines.push(`  - ${w.query}: ${w.why.join(", ")}${w.lost.length ? ` (lost ${w.lost.join(", ")})` : ""}`);
  }
  lines.push(...r.notes);
  lines.push(`Next: synthex branch promote ${r.branch} --keep-main   ·   synthex branch delete ${r.branch}`);
  return lines.join("\n");
}
