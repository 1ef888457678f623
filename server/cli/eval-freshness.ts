/**
 * `synthex eval freshness [--template …] [--json]`: the freshness benchmark (issue 47) — histories
 * of many people whose attributes change, asked what holds now — built and scored per template in
 * a private in-memory database. Prints current@1, stale-above-current, ended-as-current and the
 * records that come from assistant turns.
 */
import { freshnessTable, runFreshness } from "../eval/freshness/run";

export const FRESHNESS_DEFAULT_TEMPLATES = ["memex", "mem0", "chat-memory"];

export async function freshnessCommand(o: { template?: string; json?: boolean; seed?: string; people?: string; k?: string }, fail: (message: string, code?: number) => never, allTemplates: readonly string[]) {
  const templates = o.template ? (o.template === "all" ? [...allTemplates] : o.template.split(",").map((t) => t.trim()).filter(Boolean)) : FRESHNESS_DEFAULT_TEMPLATES;
  for (const t of templates) if (!allTemplates.includes(t)) fail(`Unknown template "${t}". Templates: ${allTemplates.join(", ")}.`, 2);
  const people = o.people !== undefined ? Number(o.people) : 40;
  if (!(Number.isInteger(people) && people >= 1 && people <= 1000)) fail("--people must be a whole number from 1 to 1000.", 2);
  const seed = o.seed !== undefined ? Number(o.seed) : 1;
  if (!Number.isInteger(seed)) fail("--seed must be a whole number.", 2);
  const k = o.k !== undefined ? Number(o.k) : 10;
  const { dataset, results } = await runFreshness(templates, {
    seed,
    people,
    k,
    onProgress: (template, phase) => {
      if (!o.json) console.error(`${template}: ${phase}…`);
    },
  });
  if (o.json) {
    console.log(JSON.stringify({ benchmark: "freshness", dataset, results: results.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== "cases"))) }, null, 2));
    return;
  }
  console.log(
    [
      `freshness · ${dataset.name} · ${dataset.people} people, ${dataset.questions} questions (top ${k} per question, offline)`,
      "",
      freshnessTable(results),
      "",
      "current@1: the top hit states the current value and no stale one (attributes that changed); stale-above-current: a stale value ranks above the current one;",
      "ended-as-current: an attribute that ended is returned as if it held; from assistant: records at the searched altitude that come from assistant turns only.",
    ].join("\n"),
  );
}
