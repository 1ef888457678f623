/**
 * `npm test`: a production build (first: the bench smoke tests start `npm start`, which would
 * otherwise build in the middle of the Vitest pass), Vitest (unit + integration on PGlite), then —
 * when `TEST_DATABASE_URL` names a PostgreSQL with pgvector — the database-backed Vitest files again
 * on it (`vitest.postgres.config.ts`), then Playwright in Debian's Chromium.
 * Ends with one line `N passed, N failed, N skipped` totalling every pass; above it, each skipped
 * test with why it was skipped and each test that passed only on a retry (flaky), by name.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { z } from "zod";
import type { TestOutcomes } from "./vitest-outcomes-reporter";

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  console.log(`\n$ ${cmd} ${args.join(" ")}`);
  const started = Date.now();
  const result = spawnSync(cmd, args, { stdio: "inherit", env });
  console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return result.status ?? 1;
}

/** Like `run`, but also returns what the command printed (still shown as it comes). */
function runCaptured(cmd: string, args: string[]) {
  console.log(`\n$ ${cmd} ${args.join(" ")}`);
  const started = Date.now();
  const result = spawnSync(cmd, args, { stdio: ["inherit", "pipe", "pipe"], env: process.env, maxBuffer: 64 * 1024 * 1024 });
  process.stdout.write(result.stdout ?? "");
  process.stderr.write(result.stderr ?? "");
  console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return { status: result.status ?? 1, output: `${result.stdout ?? ""}${result.stderr ?? ""}` };
}

/** The parts of the reporters' JSON files this script reads. */
const vitestReport = z.object({ numPassedTests: z.number(), numFailedTests: z.number() });
const vitestOutcomes = z.object({
  skipped: z.array(z.object({ name: z.string(), reason: z.string() })),
  flaky: z.array(z.object({ name: z.string(), retries: z.number() })),
}) satisfies z.ZodType<TestOutcomes>;
interface PlaywrightSuite {
  title: string;
  specs?: Array<{ title: string; file: string; tests: Array<{ status: string; projectName?: string; annotations?: Array<{ type: string; description?: string }> }> }>;
  suites?: PlaywrightSuite[];
}
const playwrightSuite: z.ZodType<PlaywrightSuite> = z.lazy(() =>
  z.object({
    title: z.string(),
    specs: z
      .array(
        z.object({
          title: z.string(),
          file: z.string(),
          tests: z.array(
            z.object({
              status: z.string(),
              projectName: z.string().optional(),
              annotations: z.array(z.object({ type: z.string(), description: z.string().optional() })).optional(),
            }),
          ),
        }),
      )
      .optional(),
    suites: z.array(playwrightSuite).optional(),
  }),
);
const playwrightReport = z.object({
  stats: z.object({ expected: z.number(), unexpected: z.number(), flaky: z.number().optional(), skipped: z.number().optional() }),
  suites: z.array(playwrightSuite).optional(),
});

function readJson<T>(path: string, schema: z.ZodType<T>): T | null {
  return existsSync(path) ? schema.parse(JSON.parse(readFileSync(path, "utf8"))) : null;
}

mkdirSync("test-results", { recursive: true });
for (const f of ["vitest.json", "vitest-postgres.json", "playwright.json", "vitest-outcomes.json", "vitest-postgres-outcomes.json"]) rmSync(`test-results/${f}`, { force: true });

let passed = 0;
let failed = 0;
const passes: string[] = [];
/** "suite: file › test — reason", and the flaky ones, printed above the closing line. */
const skipped: string[] = [];
const flaky: string[] = [];

/** One Vitest pass, counted into the totals. */
function vitestPass(label: string, report: string, args: string[], env: NodeJS.ProcessEnv) {
  const outcomesFile = report.replace(/\.json$/, "-outcomes.json");
  const status = run(
    "npx",
    ["vitest", "run", ...args, "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, "--reporter=./scripts/vitest-outcomes-reporter.ts"],
    { ...env, VITEST_OUTCOMES_FILE: outcomesFile },
  );
  const outcomes = readJson(outcomesFile, vitestOutcomes);
  for (const t of outcomes?.skipped ?? []) skipped.push(`${label}: ${t.name} — ${t.reason}`);
  for (const t of outcomes?.flaky ?? []) flaky.push(`${label}: ${t.name} (passed after ${t.retries} ${t.retries === 1 ? "retry" : "retries"})`);
  const result = readJson(report, vitestReport);
  let p = 0;
  let f = 0;
  if (result) {
    p = result.numPassedTests;
    f = result.numFailedTests;
    if (status !== 0 && f === 0) f = 1; // crashed suite, not a failed test
  } else f = 1;
  passed += p;
  failed += f;
  passes.push(`${label}: ${p} passed, ${f} failed, ${outcomes?.skipped.length ?? 0} skipped`);
}

const skipE2e = process.env.SKIP_E2E === "1";
let built = false;
if (!skipE2e) {
  const build = runCaptured("npx", ["next", "build"]);
  // A build that traces the whole project (dynamic filesystem access on the request path) is a failure too.
  const tracing = build.output.match(/causes tracing of the whole project/g)?.length ?? 0;
  if (tracing > 0) {
    console.log(`next build: ${tracing} whole-project tracing warning(s) — counted as a failure`);
    failed += 1;
  }
  if (build.status !== 0) failed += 1;
  else built = true;
}

const postgresUrl = process.env.TEST_DATABASE_URL?.trim();
// The first pass and Playwright run on the embedded database whatever the environment says.
const embeddedEnv: NodeJS.ProcessEnv = { ...process.env };
delete embeddedEnv.TEST_DATABASE_URL;
vitestPass("vitest on PGlite", "test-results/vitest.json", [], embeddedEnv);
if (postgresUrl) {
  vitestPass("vitest database tests on PostgreSQL", "test-results/vitest-postgres.json", ["--config", "vitest.postgres.config.ts"], {
    ...process.env,
    TEST_DATABASE_URL: postgresUrl,
  });
}

if (built) {
  rmSync(".synthex-e2e", { recursive: true, force: true });
  const pwStatus = run("npx", ["playwright", "test"], { ...embeddedEnv, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" });
  const pw = readJson("test-results/playwright.json", playwrightReport);
  let p = 0;
  let f = 0;
  let s = 0;
  if (pw) {
    p = pw.stats.expected + (pw.stats.flaky ?? 0);
    f = pw.stats.unexpected;
    if (pwStatus !== 0 && f === 0) f = 1;
    const walk = (suite: PlaywrightSuite) => {
      for (const spec of suite.specs ?? []) {
        for (const test of spec.tests) {
          const name = `${spec.file} › ${spec.title}${test.projectName ? ` [${test.projectName}]` : ""}`;
          if (test.status === "skipped") {
            s += 1;
            const why = test.annotations?.find((a) => a.type === "skip" || a.type === "fixme")?.description;
            skipped.push(`playwright: ${name} — ${why || "no reason given"}`);
          } else if (test.status === "flaky") flaky.push(`playwright: ${name} (failed, then passed on a retry)`);
        }
      }
      for (const child of suite.suites ?? []) walk(child);
    };
    for (const suite of pw.suites ?? []) walk(suite);
  } else f = 1;
  passed += p;
  failed += f;
  passes.push(`playwright: ${p} passed, ${f} failed, ${s} skipped`);
}

if (skipped.length) {
  console.log(`\nSkipped (${skipped.length}), and why:`);
  for (const line of skipped) console.log(`  ${line}`);
}
if (flaky.length) {
  console.log(`\nFlaky (${flaky.length}): counted as passed, but failed at least once:`);
  for (const line of flaky) console.log(`  ${line}`);
}
console.log("");
for (const line of passes) console.log(line);
console.log(`${passed} passed, ${failed} failed, ${skipped.length} skipped`);
process.exit(failed > 0 ? 1 : 0);
