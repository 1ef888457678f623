/**
 * npm run bench:compare — what comparing eval runs costs on the embedded database: the question-by-
 * question compare call (`evals.compare`, reads every case of every run) against the leaderboard
 * (`evals.leaderboard`, reads the per-question vectors stored on each run), for 3 and 10 runs of
 * N questions each. Prints times only; asserts nothing.
 *
 * The runs: one real eval of the LoCoMo test file (bm25-sessions), then copies of it with N cases
 * each (the real cases' hits and answers, seeded random scores), stored without their vectors, so
 * the first leaderboard read also shows the one-time backfill of older runs.
 *
 * With `--page` (needs a production build, `npx next build`, and Chromium at /usr/bin/chromium or
 * CHROMIUM_PATH): the same data served by `npm start`, and in Chromium the Compare page's time from
 * navigation to the leaderboard, and to the question-by-question details (what the page showed
 * first before the leaderboard), for each run count — with the HTML's first and last byte and the
 * DOM ready time, to tell the server's share from the browser's.
 *
 * Usage: npm run bench:compare -- [questions=1500] [runs=3,10] [--page]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";

const page = process.argv.includes("--page");
const positional = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const questions = Number(positional[0] ?? 1500);
const sizes = (positional[1] ?? "3,10").split(",").map(Number);
const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-compare-bench-"));
process.env.SYNTHEX_DATA_DIR = dataDir;
delete process.env.DATABASE_URL;

const ms = (t: number) => `${t.toFixed(0)} ms`;

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function main() {
  if (!(questions >= 2) || sizes.some((n) => !(n >= 2))) throw new Error("Usage: npm run bench:compare -- [questions ≥ 2] [runs, each ≥ 2, e.g. 3,10]");
  const { closeDb } = await import("../server/store/db");
  const { openMigratedDb } = await import("../server/store/runtime-env");
  const { signUp } = await import("../server/services/users");
  const { importDataset } = await import("../server/eval/dataset-store");
  const { runEval } = await import("../server/eval/service");
  const { compareEvalRuns } = await import("../server/eval/compare");
  const { evalLeaderboard } = await import("../server/eval/leaderboard-rows");
  const { seededRandom } = await import("../server/eval/bootstrap");
  const { locomoFixture } = await import("../server/eval/testing/locomo-fixture");

  const db = await openMigratedDb();
  const { workspace } = await signUp(db, { email: "compare-bench@example.com", password: "bench-password-1" });
  const dataset = await importDataset(db, workspace.id, { benchmark: "locomo", text: JSON.stringify(locomoFixture()), name: "locomo-fixture.json" });
  const real = await runEval(db, { workspaceId: workspace.id, template: "bm25-sessions", datasetId: dataset.id });
  if (real.status !== "completed") throw new Error(`The seed eval ${real.status}: ${real.error}`);
  const cases = await db.evalCase.findMany({ where: { evalRunId: real.id }, orderBy: { position: "asc" }, omit: { id: true, evalRunId: true } });

  const most = Math.max(...sizes);
  const t0 = performance.now();
  const ids: string[] = [];
  const row = await db.evalRun.findUniqueOrThrow({ where: { id: real.id }, omit: { id: true, createdAt: true, aggregates: true } });
  for (let r = 0; r < most; r++) {
    const random = seededRandom(r + 1);
    const skill = 0.45 + r * 0.02; // each run a little better than the one before
    const copy = await db.evalRun.create({
      data: { ...row, questions, judge: row.judge ?? {}, progress: row.progress ?? {}, metrics: row.metrics ?? {}, perCategory: row.perCategory ?? {}, cost: row.cost ?? {}, latency: row.latency ?? {}, skips: row.skips ?? [] },
    });
    const data = Array.from({ length: questions }, (_, p) => {
      const c = cases[p % cases.length]!;
      const hit = random() < skill ? 1 : 0;
      const scores = { "session_hit@1": hit * (random() < 0.7 ? 1 : 0), "session_hit@5": hit, "evidence_recall@2k": hit * random(), mrr: hit * (0.5 + random() / 2), context_tokens: Math.round(800 + random() * 1200) };
      return { ...c, evidence: c.evidence ?? [], retrieved: c.retrieved ?? [], scores, evalRunId: copy.id, position: p, questionId: `q${p}`, category: String(1 + (p % 4)) };
    });
    for (let i = 0; i < data.length; i += 500) await db.evalCase.createMany({ data: data.slice(i, i + 500) });
    // The run's means, as a completed run stores them.
    const mean = (k: keyof (typeof data)[number]["scores"]) => data.reduce((a, d) => a + d.scores[k], 0) / data.length;
    await db.evalRun.update({ where: { id: copy.id }, data: { metrics: { "session_hit@1": mean("session_hit@1"), "session_hit@5": mean("session_hit@5"), "evidence_recall@2k": mean("evidence_recall@2k"), mrr: mean("mrr"), context_tokens: mean("context_tokens") } } });
    ids.push(copy.id);
  }
  console.log(`seeded ${most} runs × ${questions.toLocaleString("en-US")} questions in ${ms(performance.now() - t0)} (embedded database, ${dataDir})`);

  const backfill = await timed(() => evalLeaderboard(db, workspace.id, { runIds: ids }));
  console.log(`leaderboard, first read of ${most} runs stored without vectors (one-time backfill)  ${ms(backfill.ms)}`);
  for (const n of sizes) {
    const [baseline, ...others] = ids.slice(0, n);
    const before = await timed(() => compareEvalRuns(db, workspace.id, baseline!, others));
    const reads: number[] = [];
    let board = backfill.value;
    for (let i = 0; i < 3; i++) {
      const t = await timed(() => evalLeaderboard(db, workspace.id, { runIds: ids.slice(0, n), baselineId: baseline }));
      reads.push(t.ms);
      board = t.value;
    }
    reads.sort((a, b) => a - b);
    const noisy = board.rows.filter((r) => !r.isBaseline && r.metrics["session_hit@5"]?.withinNoise).length;
    console.log(`${n} runs × ${questions} questions  compare (every case) ${ms(before.ms)}  leaderboard median of 3 ${ms(reads[1]!)} (min ${ms(reads[0]!)})  · ${noisy} of ${n - 1} hit@5 deltas within noise`);
  }
  await closeDb();
  if (page) await pageTimes(workspace.slug, dataset.id, ids);
}

/** `npm start` on the seeded data, Chromium on the Compare page: ms to the leaderboard and to the details. */
async function pageTimes(slug: string, datasetId: string, ids: string[]) {
  const { spawn } = await import("node:child_process");
  const { freePort } = await import("../server/http/testing/free-port");
  const { chromium } = await import("@playwright/test");
  const port = await freePort();
  const server = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    env: { ...process.env, PORT: String(port), SYNTHEX_DATA_DIR: dataDir, NEXTAUTH_URL: `http://localhost:${port}`, SYNTHEX_DB_PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  server.stdout.on("data", (d: Buffer) => (log += d.toString()));
  server.stderr.on("data", (d: Buffer) => (log += d.toString()));
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const base = `http://localhost:${port}`;
    for (let i = 0; ; i++) {
      if (i > 600) throw new Error(`npm start did not answer within 5 minutes:\n${log.slice(-2000)}`);
      if (await fetch(`${base}/signin`).then((r) => r.ok).catch(() => false)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const tab = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await tab.goto(`${base}/signin`);
    await tab.getByLabel("Email").fill("compare-bench@example.com");
    await tab.getByLabel("Password").fill("bench-password-1");
    await tab.getByRole("button", { name: "Sign in" }).click();
    await tab.waitForURL(/\/w\//, { timeout: 60_000 });
    for (const n of sizes) {
      for (const pass of ["first", "again"]) {
        const t0 = performance.now();
        await tab.goto(`${base}/w/${slug}/compare?dataset=${datasetId}&runs=${ids.slice(0, n).join(",")}&baseline=${ids[0]}`);
        await tab.getByTestId("leaderboard-table").filter({ visible: true }).waitFor({ timeout: 300_000 });
        const board = performance.now() - t0;
        await tab.getByTestId("compare-view").waitFor({ timeout: 300_000 });
        const details = performance.now() - t0;
        // Where the time went: the server's answer (first byte, last byte of the HTML) and the browser's parse.
        const nav = await tab.evaluate(() => {
          const e = window.performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
          return { ttfb: e.responseStart, html: e.responseEnd, dom: e.domContentLoadedEventEnd };
        });
        console.log(
          `page ${n} runs × ${questions} questions (${pass} visit)  leaderboard visible ${ms(board)}  question details visible ${ms(details)}  ` +
            `(HTML first byte ${ms(nav.ttfb)}, last byte ${ms(nav.html)}, DOM ready ${ms(nav.dom)})`,
        );
      }
    }
  } finally {
    await browser.close();
    try {
      process.kill(-server.pid!, "SIGTERM");
    } catch {
      // already gone
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

main()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dataDir, { recursive: true, force: true }));
