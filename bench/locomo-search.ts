/**
 * npm run bench:locomo-search -- [path/to/locomo.json] [--modes fts,semantic,hybrid] [--step <step>]
 *   [--only conv-26,conv-30] [--limit 60]
 *
 * Retrieval quality of the default chat-memory pipeline on LoCoMo, as a new user would get it:
 * each conversation's sessions are written as a ChatGPT-style export (one conversation per
 * session, one message per turn, "Speaker: text", the session date as its time), imported into
 * its own pipeline from the default template, run offline, indexed; then every answerable
 * question (categories 1-4) is asked through `search` (unscoped unless --step).
 *
 * Metrics, computed the way ../shared/tools/locomo-baseline does:
 * - session_hit@k: a gold evidence session is among the first k distinct sessions of the ranked
 *   hits (a hit's session is its `chat.conversation_id`; a hit without one, e.g. a monthly
 *   reflection, contributes the sessions of its lower hits);
 * - evidence_recall@2k: share of gold turns covered by the hits taken in rank order while the
 *   context stays within 2,000 tokens (tokens ~ words × 4/3, the first hit always counts); a hit
 *   covers a turn when it contains the turn's text.
 * Also p50/p95 search latency. Prints numbers; asserts nothing. The data is CC BY-NC: read from
 * its path, never copied into the repository.
 */
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { defaultChatMemorySpec } from "../server/pipeline/templates";
import { importFile } from "../server/services/imports";
import { createPipeline } from "../server/services/pipelines";
import { runPipeline } from "../server/services/runs";
import { signUp } from "../server/services/users";
import { OfflineModel } from "../server/llm/offline-model";
import { search, type SearchMode } from "../server/search/search";
import { sqlTrace } from "../server/search/context";
import { createTestDb } from "../server/store/test-db";
import type { Db } from "../server/core/db";

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
interface Sample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: Array<{ question: string; answer?: unknown; evidence: string[]; category: number }>;
}

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const file = args.find((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--")) ?? path.resolve(import.meta.dirname, "../../shared/data/locomo-dev/locomo-dev.json");
const modes = (flag("modes") ?? "fts,semantic,hybrid").split(",") as SearchMode[];
const step = flag("step");
const only = flag("only");
const limit = Number(flag("limit") ?? 60);
/** --fusion method=sum,k=60,fts=1,semantic=0.5,context=0.5: override the fusion knobs. */
/** Several settings separated by ";" are measured one after the other on the same import. */
const fusions: Array<Record<string, unknown> | undefined> = flag("fusion")
  ? flag("fusion")!.split(";").map((one) => Object.fromEntries(one.split(",").map((kv) => kv.split("=")).map(([k, v]) => [k!, k === "method" ? v : Number(v)])))
  : [undefined];
/** PROFILE=1: EXPLAIN ANALYZE the statements of the first 40 searches per mode. */
const profile = process.env.PROFILE === "1";

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
/** "1:56 pm on 8 May, 2023" → epoch seconds (no timezone given: read as UTC). */
function sessionTime(s: string): number {
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})$/i.exec(s.trim());
  if (!m) throw new Error(`unparseable session date "${s}"`);
  let h = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === "pm") h += 12;
  return Date.UTC(Number(m[6]), MONTHS.indexOf(m[5]!.toLowerCase()), Number(m[4]), h, Number(m[2])) / 1000;
}

const turnText = (t: Turn) => `${t.speaker}: ${t.text}${t.blip_caption ? ` [shared an image: ${t.blip_caption}]` : ""}`;
const norm = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();

/** One ChatGPT conversation per session, speaker_a as "user", speaker_b as "assistant". */
function toChatgptExport(sample: Sample) {
  const conv = sample.conversation;
  const speakerA = String(conv.speaker_a);
  const out: unknown[] = [];
  for (const key of Object.keys(conv)) {
    const m = /^session_(\d+)$/.exec(key);
    if (!m) continue;
    const turns = conv[key] as Turn[];
    const t0 = sessionTime(String(conv[`session_${m[1]}_date_time`]));
    const mapping: Record<string, unknown> = { root: { id: "root", parent: null, children: [turns[0] ? "m0" : null].filter(Boolean), message: null } };
    turns.forEach((t, i) => {
      mapping[`m${i}`] = {
        id: `m${i}`,
        parent: i === 0 ? "root" : `m${i - 1}`,
        children: i + 1 < turns.length ? [`m${i + 1}`] : [],
        message: {
          id: `m${i}`,
          author: { role: t.speaker === speakerA ? "user" : "assistant" },
          create_time: t0 + i * 30,
          content: { content_type: "text", parts: [turnText(t)] },
          metadata: {},
          recipient: "all",
        },
      };
    });
    out.push({
      id: `${sample.sample_id}-s${m[1]}`,
      conversation_id: `${sample.sample_id}-s${m[1]}`,
      title: `${speakerA} and ${String(conv.speaker_b)}, session ${m[1]}`,
      create_time: t0,
      update_time: t0 + turns.length * 30,
      current_node: `m${turns.length - 1}`,
      mapping,
    });
  }
  return out;
}

function pct(samples: number[], p: number) {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

async function main() {
  const data = (JSON.parse(readFileSync(file, "utf8")) as Sample[]).filter((s) => !only || only.split(",").includes(s.sample_id));
  const dir = mkdtempSync(path.join(tmpdir(), "synthex-locomo-"));
  const { db: prisma, close } = await createTestDb();
  const db = prisma as unknown as Db;
  const { workspace } = await signUp(db, { email: "bench@example.com", password: "correct horse battery staple", name: "bench" });
  const started = performance.now();
  const pipelines: Array<{ sample: Sample; pipelineId: string }> = [];
  for (const sample of data) {
    const exportPath = path.join(dir, `${sample.sample_id}.json`);
    writeFileSync(exportPath, JSON.stringify(toChatgptExport(sample)));
    const { pipeline } = await createPipeline(db, workspace.id, { name: sample.sample_id.toLowerCase(), spec: defaultChatMemorySpec("chatgpt-export") });
    await importFile(db, { workspaceId: workspace.id, pipelineId: pipeline.id, source: "chats", path: exportPath, format: "chatgpt-export" });
    const run = await runPipeline(db, { workspaceId: workspace.id, pipelineId: pipeline.id }, { model: new OfflineModel() });
    if (run.status !== "completed") throw new Error(`run for ${sample.sample_id} ended ${run.status}: ${run.error}`);
    pipelines.push({ sample, pipelineId: pipeline.id });
  }
  console.log(`imported and ran ${data.length} conversations in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const rows: string[] = [];
  for (const fusion of fusions) for (const mode of modes) {
    const totals = { n: 0, hit1: 0, hit5: 0, recall2k: 0, tokens: 0 };
    const byCat = new Map<number, typeof totals>();
    const latencies: number[] = [];
    const sqlMs = new Map<string, number[]>();
    for (const { sample, pipelineId } of pipelines) {
      const textOf = new Map<string, string>();
      for (const [key, turns] of Object.entries(sample.conversation)) {
        if (/^session_\d+$/.test(key)) for (const t of turns as Turn[]) textOf.set(t.dia_id, norm(turnText(t)));
      }
      for (const q of sample.qa) {
        if (q.category === 5) continue;
        const gold = new Set(q.evidence.flatMap((e) => e.split(/[;,\s]+/)).map((x) => x.trim()).filter((x) => /^D\d+:\d+$/.test(x)));
        const ev = new Set([...gold].map((g) => g.split(":")[0]!.slice(1)));
        if (ev.size === 0) continue;
        const captured: Array<[string, string, unknown[]]> = [];
        if (profile && latencies.length < 40) sqlTrace.fn = (label, sql, params) => captured.push([label, sql, params]);
        const t0 = performance.now();
        const res = await search(db, { workspaceId: workspace.id, pipelineId, query: q.question, mode, limit, fusion, ...(step ? { step } : {}) });
        latencies.push(performance.now() - t0);
        sqlTrace.fn = null;
        for (const [label, sql, params] of captured) {
          const plan = await db.$queryRawUnsafe<Array<{ "QUERY PLAN": string }>>(`EXPLAIN ANALYZE ${sql}`, ...params);
          const ms = Number(/Execution Time: ([\d.]+)/.exec(plan.map((p) => p["QUERY PLAN"]).join("\n"))?.[1] ?? NaN);
          sqlMs.set(label, [...(sqlMs.get(label) ?? []), ms]);
        }
        const sessions: string[] = [];
        const sessionOf = (meta: Record<string, unknown>) => {
          const id = (meta.chat as { conversation_id?: string } | undefined)?.conversation_id;
          const m = id ? /-s(\d+)$/.exec(id) : null;
          return m ? m[1]! : null;
        };
        const lowerMeta = new Map<string, Record<string, unknown>>();
        const lowerIds = res.hits.filter((h) => !sessionOf(h.metadata)).flatMap((h) => h.lowerHits.map((l) => l.id));
        if (lowerIds.length) {
          const recs = await db.record.findMany({ where: { id: { in: lowerIds } }, select: { id: true, metadata: true } });
          for (const r of recs) lowerMeta.set(r.id, r.metadata as Record<string, unknown>);
        }
        for (const h of res.hits) {
          const own = sessionOf(h.metadata);
          const list = own ? [own] : h.lowerHits.map((l) => sessionOf(lowerMeta.get(l.id) ?? {})).filter((s): s is string => !!s);
          for (const s of list) if (!sessions.includes(s)) sessions.push(s);
        }
        let budget = 0;
        const covered = new Set<string>();
        for (const h of res.hits) {
          const w = Math.floor((h.content.split(/\s+/).filter(Boolean).length * 4) / 3);
          if (budget + w > 2000 && budget > 0) break;
          budget += w;
          const content = norm(h.content);
          for (const g of gold) if (textOf.has(g) && content.includes(textOf.get(g)!)) covered.add(g);
        }
        const cat = byCat.get(q.category) ?? { n: 0, hit1: 0, hit5: 0, recall2k: 0, tokens: 0 };
        for (const t of [totals, cat]) {
          t.n += 1;
          t.hit1 += sessions.slice(0, 1).some((s) => ev.has(s)) ? 1 : 0;
          t.hit5 += sessions.slice(0, 5).some((s) => ev.has(s)) ? 1 : 0;
          t.recall2k += covered.size / gold.size;
          t.tokens += budget;
        }
        byCat.set(q.category, cat);
      }
    }
    const f = (t: typeof totals) => `hit@1 ${(t.hit1 / t.n).toFixed(3)}  hit@5 ${(t.hit5 / t.n).toFixed(3)}  recall@2k ${(t.recall2k / t.n).toFixed(3)}  ctx ${(t.tokens / t.n).toFixed(0)}  n ${t.n}`;
    if (fusion) rows.push(`fusion ${JSON.stringify(fusion)}`);
    rows.push(`${(step ? `${mode}@${step}` : mode).padEnd(10)} ${f(totals)}  p50 ${pct(latencies, 50).toFixed(1)} ms  p95 ${pct(latencies, 95).toFixed(1)} ms`);
    for (const [label, ms] of sqlMs) rows.push(`  sql ${label}: p50 ${pct(ms, 50).toFixed(1)} ms (EXPLAIN ANALYZE, ${ms.length} queries)`);
    for (const c of [...byCat.keys()].sort()) rows.push(`  cat ${c}     ${f(byCat.get(c)!)}`);
  }
  console.log(`questions per mode: categories 1-4 with evidence; unscoped search over the default chat-memory pipeline${step ? ` (step ${step})` : ""}`);
  for (const r of rows) console.log(r);
  await close();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
