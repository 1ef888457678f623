/**
 * npm run soak:crash — kill -9 of the database owner at random points of a run, restart, run again:
 * the records must be those of a clean run, with no duplicates and none missing.
 *
 *   npm run soak:crash -- [--trials 20] [--conversations 40] [--seed 7]
 *
 * A prepared embedded database (a chat-memory pipeline, a generated ChatGPT export imported) is
 * copied for a clean run and for every trial. In a trial the owner process (bench/soak-crash-child.ts:
 * it owns the PGlite directory and executes the run in-process, as `npm start` does) is sent SIGKILL
 * at a random moment of its run; a new owner starts on the same directory (the dead owner's lock is
 * taken over), resumes the interrupted run once its lease expires, runs again, and the records main
 * shows are compared with the clean run's. Prints one line per trial and the totals; exits 1 on any
 * duplicate or loss.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const trials = flag("trials", 20);
const conversations = flag("conversations", 40);
let seed = flag("seed", 7);
const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);

const root = mkdtempSync(path.join(tmpdir(), "synthex-soak-"));
const child = path.join(import.meta.dirname, "soak-crash-child.ts");

interface Event {
  event: string;
  [k: string]: unknown;
}

/** Starts the owner on `dir`; resolves its events when it exits. `killAfterStartMs` sends SIGKILL that long after "started". */
function owner(dir: string, argv: string[], killAfterStartMs?: number): Promise<{ events: Event[]; killed: boolean; code: number | null; stderr: string; runMs: number }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ["--import", "tsx", child, ...argv], {
      env: { ...process.env, SYNTHEX_DATA_DIR: path.join(dir, "data"), DATABASE_URL: "", SYNTHEX_DB_PORT: "0", SYNTHEX_RUN_LEASE_MS: "1500" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const events: Event[] = [];
    let killed = false;
    let stderr = "";
    let buffer = "";
    let startedAt = 0;
    proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    proc.stdout.on("data", (d: Buffer) => {
      buffer += d.toString();
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!line.startsWith("{")) continue;
        const ev = JSON.parse(line) as Event;
        events.push(ev);
        if (ev.event === "started") startedAt = Date.now();
        if (ev.event === "started" && killAfterStartMs !== undefined) {
          setTimeout(() => {
            if (proc.exitCode === null) {
              killed = true;
              proc.kill("SIGKILL");
            }
          }, killAfterStartMs);
        }
      }
    });
    proc.on("exit", (code) => resolve({ events, killed, code, stderr, runMs: startedAt ? Date.now() - startedAt : 0 }));
  });
}

function must<T extends { events: Event[]; code: number | null; stderr: string }>(what: string, r: T): T {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}): ${JSON.stringify(r.events.at(-1))}\n${r.stderr.slice(-2000)}`);
  return r;
}

async function inspect(dir: string, pipelineId: string) {
  const r = must("inspect", await owner(dir, ["inspect", pipelineId]));
  return r.events.find((e) => e.event === "inspected") as Event & { records: string[]; duplicates: number; runs: Record<string, number> };
}

async function main() {
  const base = path.join(root, "base");
  const prepared = must("prepare", await owner(base, ["prepare", String(conversations)]));
  const pipelineId = String(prepared.events.find((e) => e.event === "prepared")!.pipelineId);
  const copy = (name: string) => {
    const dir = path.join(root, name);
    cpSync(base, dir, { recursive: true });
    return dir;
  };

  // The clean run: its duration sets the window the kills fall in.
  const cleanDir = copy("clean");
  const cleanMs = must("clean run", await owner(cleanDir, ["run", pipelineId])).runMs;
  const clean = await inspect(cleanDir, pipelineId);
  const cleanSet = new Set(clean.records);
  rmSync(cleanDir, { recursive: true, force: true });
  console.log(`clean run: ${clean.records.length} records on main in ${(cleanMs / 1000).toFixed(1)} s (run and process exit); duplicates ${clean.duplicates}`);
  console.log("trial  kill at (ms after run start)  killed mid-run  records at restart  records after  duplicates  missing  extra");

  let compared = 0;
  let duplicates = 0;
  let missing = 0;
  let extra = 0;
  let killedMidRun = 0;
  for (let trial = 1; trial <= trials; trial++) {
    const dir = copy(`trial-${trial}`);
    const killAt = Math.floor((0.02 + random() * 0.9) * cleanMs);
    const first = await owner(dir, ["run", pipelineId], killAt);
    if (first.killed) killedMidRun++;
    const atRestart = await inspect(dir, pipelineId);
    const second = must(`trial ${trial} restart`, await owner(dir, ["run", pipelineId]));
    const after = await inspect(dir, pipelineId);
    const afterSet = new Set(after.records);
    const lost = clean.records.filter((r) => !afterSet.has(r)).length;
    const added = after.records.filter((r) => !cleanSet.has(r)).length;
    if (lost && process.env.SOAK_DEBUG) console.log("lost by step", JSON.stringify(clean.records.filter((r) => !afterSet.has(r)).reduce<Record<string, number>>((m, r) => ((m[r.split(":")[0]!] = (m[r.split(":")[0]!] ?? 0) + 1), m), {})));
    const dup = after.duplicates - clean.duplicates + (after.records.length - afterSet.size);
    compared += clean.records.length;
    duplicates += Math.max(0, dup);
    missing += lost;
    extra += added;
    const active = (after.runs.queued ?? 0) + (after.runs.running ?? 0);
    if (active) throw new Error(`trial ${trial}: ${active} run(s) still active after the restart: ${JSON.stringify(after.runs)}`);
    const resumed = Number(second.events.find((e) => e.event === "done")?.resumed ?? 0);
    console.log(
      `${String(trial).padStart(5)}  ${String(killAt).padStart(28)}  ${(first.killed ? `yes${resumed ? " (resumed)" : ""}` : "no (run ended first)").padStart(14)}  ${String(atRestart.records.length).padStart(17)}  ${String(after.records.length).padStart(13)}  ${String(Math.max(0, dup)).padStart(10)}  ${String(lost).padStart(7)}  ${String(added).padStart(5)}`,
    );
    rmSync(dir, { recursive: true, force: true });
  }
  console.log("");
  console.log(`soak:crash  trials ${trials}  killed mid-run ${killedMidRun}  records compared ${compared}  duplicates ${duplicates}  losses ${missing}  extra ${extra}`);
  rmSync(root, { recursive: true, force: true });
  if (duplicates || missing || extra) process.exit(1);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  rmSync(root, { recursive: true, force: true });
  process.exit(1);
});
