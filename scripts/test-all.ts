/**
 * `npm test`: Vitest (unit + integration on PGlite), a production build, then Playwright in
 * Debian's Chromium. Ends with one line `N passed, N failed` totalling both suites.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { z } from "zod";

function run(cmd: string, args: string[], env: Record<string, string> = {}) {
  console.log(`\n$ ${cmd} ${args.join(" ")}`);
  const started = Date.now();
  const result = spawnSync(cmd, args, { stdio: "inherit", env: { ...process.env, ...env } });
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
rmSync("test-results/vitest.json", { force: true });
rmSync("test-results/playwright.json", { force: true });

let passed = 0;
let failed = 0;

const vitestStatus = run("npx", ["vitest", "run", "--reporter=default", "--reporter=json", "--outputFile.json=test-results/vitest.json"]);
const vitest = readJson("test-results/vitest.json", vitestReport);
if (vitest) {
  passed += vitest.numPassedTests;
  failed += vitest.numFailedTests;
  if (vitestStatus !== 0 && vitest.numFailedTests === 0) failed += 1; // crashed suite, not a failed test
} else failed += 1;

const skipE2e = process.env.SKIP_E2E === "1";
if (!skipE2e) {
  const build = runCaptured("npx", ["next", "build"]);
  // A build that traces the whole project (dynamic filesystem access on the request path) is a failure too.
  const tracing = build.output.match(/causes tracing of the whole project/g)?.length ?? 0;
  if (tracing > 0) {
    console.log(`next build: ${tracing} whole-project tracing warning(s) — counted as a failure`);
    failed += 1;
  }
  if (build.status !== 0) {
    failed += 1;
  } else {
    rmSync(".synthex-e2e", { recursive: true, force: true });
    const pwStatus = run("npx", ["playwright", "test"], { PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" });
    const pw = readJson("test-results/playwright.json", playwrightReport);
    if (pw) {
      passed += pw.stats.expected + (pw.stats.flaky ?? 0);
      failed += pw.stats.unexpected;
      if (pwStatus !== 0 && pw.stats.unexpected === 0) failed += 1;
    } else failed += 1;
  }
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
