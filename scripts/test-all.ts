/**
 * `npm test`: a production build (first: the bench smoke tests start `npm start`, which would
 * otherwise build in the middle of the Vitest pass), Vitest (unit + integration on PGlite), then —
 * when `TEST_DATABASE_URL` names a PostgreSQL with pgvector — the database-backed Vitest files again
 * on it (`vitest.postgres.config.ts`), then Playwright in Debian's Chromium.
 * Ends with one line `N passed, N failed` totalling every pass.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { z } from "zod";

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
const playwrightReport = z.object({ stats: z.object({ expected: z.number(), unexpected: z.number(), flaky: z.number().optional() }) });

function readJson<T>(path: string, schema: z.ZodType<T>): T | null {
  return existsSync(path) ? schema.parse(JSON.parse(readFileSync(path, "utf8"))) : null;
}

mkdirSync("test-results", { recursive: true });
for (const f of ["vitest.json", "vitest-postgres.json", "playwright.json"]) rmSync(`test-results/${f}`, { force: true });

let passed = 0;
let failed = 0;
const passes: string[] = [];

/** One Vitest pass, counted into the totals. */
function vitestPass(label: string, report: string, args: string[], env: NodeJS.ProcessEnv) {
  const status = run("npx", ["vitest", "run", ...args, "--reporter=default", "--reporter=json", `--outputFile.json=${report}`], env);
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
  passes.push(`${label}: ${p} passed, ${f} failed`);
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
  if (pw) {
    p = pw.stats.expected + (pw.stats.flaky ?? 0);
    f = pw.stats.unexpected;
    if (pwStatus !== 0 && f === 0) f = 1;
  } else f = 1;
  passed += p;
  failed += f;
  passes.push(`playwright: ${p} passed, ${f} failed`);
}

for (const line of passes) console.log(line);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
