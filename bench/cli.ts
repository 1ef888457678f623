/**
 * npm run bench:cli — how long the `synthex` command takes to answer, as a person types it: wall
 * time of `bin/synthex.mjs` for `--help`, `status`, `search` and `get` (median of N runs, each a
 * fresh process) beside `node -e 0` (what starting Node alone costs on this machine), with the load
 * average before and after.
 *
 * It builds the README's hello world in a temporary data directory first (init --from the e2e
 * ChatGPT fixture, run), unless SYNTHEX_DATA_DIR names one that already has a pipeline selected.
 * Asserts nothing about speed (a bench never does); each command must exit 0.
 *
 * Usage: npm run bench:cli -- [runs=5]
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";

const ROOT = path.resolve(import.meta.dirname, "..");
const runs = Number(process.argv[2] ?? 5);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`runs must be a positive integer, got ${process.argv[2]}`);

const given = process.env.SYNTHEX_DATA_DIR;
const dataDir = given && existsSync(path.join(given, "cli.json")) ? given : mkdtempSync(path.join(tmpdir(), "synthex-bench-cli-"));
const env: NodeJS.ProcessEnv = { ...process.env, SYNTHEX_DATA_DIR: dataDir, DATABASE_URL: "" };

function synthex(...args: string[]) {
  const t = performance.now();
  const result = spawnSync(process.execPath, [path.join(ROOT, "bin/synthex.mjs"), ...args], { cwd: ROOT, env, encoding: "utf8" });
  const seconds = (performance.now() - t) / 1000;
  if (result.status !== 0) throw new Error(`synthex ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return { seconds, out: result.stdout };
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  if (dataDir !== given) {
    console.log(`Building the hello world in ${dataDir} (init --from e2e/fixtures/chatgpt-export.json, run) …`);
    synthex("init", "personal-memory", "--from", path.join(ROOT, "e2e/fixtures/chatgpt-export.json"));
    synthex("run");
  }
  const first = JSON.parse(synthex("search", "garden", "--json").out) as { hits: Array<{ id: string }> };
  const id = first.hits[0]?.id;
  if (!id) throw new Error("search found nothing to `get`");

  const commands: Array<[string, () => unknown]> = [
    ["node -e 0", () => {
      const r = spawnSync(process.execPath, ["-e", "0"]);
      if (r.status !== 0) throw new Error("node -e 0 failed");
    }],
    ["synthex --help", () => synthex("--help")],
    ["synthex status", () => synthex("status")],
    ['synthex search "that rust conversation"', () => synthex("search", "that rust conversation")],
    [`synthex get <id>`, () => synthex("get", id)],
  ];
  console.log(`load average before: ${load()}   (${runs} runs each, median wall time)`);
  for (const [label, fn] of commands) {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      fn();
      times.push((performance.now() - t) / 1000);
    }
    console.log(`${label.padEnd(42)} ${median(times).toFixed(2).padStart(6)} s   (min ${Math.min(...times).toFixed(2)}, max ${Math.max(...times).toFixed(2)})`);
  }
  console.log(`load average after:  ${load()}`);
} finally {
  if (dataDir !== given) rmSync(dataDir, { recursive: true, force: true });
}
