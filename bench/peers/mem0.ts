/**
 * npm run bench:peers:mem0 — Mem0's own integration suite (mem0ai/mem0
 * `mem0-ts/src/client/tests/integration/`, commit 8d5b7865bd0521e75fe9ab1b260eeccc83f8a378) against
 * Synthex's /compat/mem0, with the installed `mem0ai` client. Only the connection changes:
 * MEM0_HOST and MEM0_API_KEY.
 *
 * The suite is not in this repository: MEM0_REPO names a Mem0 checkout or bare git dir (`git clone
 * https://github.com/mem0ai/mem0`), and the suite is taken from it at that commit with `git archive`,
 * unchanged, into a temp dir beside Synthex's shims (bench/peers/mem0/shims: the SDK source the tests
 * import is the installed package; Jest's globals are Vitest's). Without MEM0_REPO it says how to get
 * it and exits 2.
 *
 * By default it starts Synthex itself on a fresh embedded database in a temp dir: a workspace, a
 * pipeline from the mem0 template (offline model), a key as `synthex keys create --role admin`
 * makes it (updateProject and the webhook calls save the pipeline's protected main), and the compat and REST handlers over real HTTP on 127.0.0.1 (the route
 * server the compat tests use). With MEM0_HOST and MEM0_API_KEY set, it runs against that server
 * instead (e.g. `npm start` and a key of yours).
 *
 * Prints each test's outcome and the counts: passed, failed, refused (a failure whose error is one
 * of Synthex's 400 answers, "not supported here: use …", which the SDK throws as ValidationError).
 * Exit code 0 when none failed or was refused. Takes about two minutes (the suite's own waits).
 */
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";

const here = import.meta.dirname;
const root = path.resolve(here, "../..");
/** The commit of mem0ai/mem0 whose suite this runner was written against. */
const MEM0_COMMIT = "8d5b7865bd0521e75fe9ab1b260eeccc83f8a378";
const SUITE_PATH = "mem0-ts/src/client/tests/integration";

/**
 * The suite from the user's Mem0 repository (checkout or bare), unchanged, in a temp dir laid out as
 * in mem0-ts/ — src/client/tests/integration/ — with the shims where the tests' imports point.
 */
function prepareSuite(repo: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "synthex-peers-mem0-suite-"));
  const archive = execFileSync("git", ["-C", repo, "archive", MEM0_COMMIT, SUITE_PATH], { maxBuffer: 64 << 20 });
  execFileSync("tar", ["-x", "-C", dir, "--strip-components=1"], { input: archive });
  const shims = path.join(here, "mem0/shims");
  const place: Array<[string, string]> = [
    ["mem0.ts", "src/client/mem0.ts"],
    ["mem0.types.ts", "src/client/mem0.types.ts"],
    ["exceptions.ts", "src/common/exceptions.ts"],
    ["jest-shim.ts", "jest-shim.ts"],
    ["teardown-adapter.ts", "teardown-adapter.ts"],
  ];
  for (const [from, to] of place) {
    mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
    copyFileSync(path.join(shims, from), path.join(dir, to));
  }
  return dir;
}

interface Outcome {
  name: string;
  status: "passed" | "failed" | "refused" | "skipped";
  message?: string;
}

/** Synthex's refusals are 400s saying what to use instead: the SDK throws them as ValidationError. */
const REFUSAL = /^ValidationError:/;

async function startSynthex(): Promise<{ host: string; key: string; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-peers-mem0-"));
  process.env.SYNTHEX_DATA_DIR = dataDir;
  delete process.env.DATABASE_URL;
  const { openMigratedDb } = await import("../../server/store/runtime-env");
  const { closeDb } = await import("../../server/store/db");
  const { signUp } = await import("../../server/services/users");
  const { createApiKey } = await import("../../server/services/api-keys");
  const { createPipeline, templateSpec } = await import("../../server/services/pipelines");
  const { settleBackgroundWork } = await import("../../server/services/background");
  const { startRouteServer } = await import("../../server/api/testing/route-server");
  const { mem0Route } = await import("../../server/compat/mem0");
  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "peers@example.com", password: "peers-password-1" });
  await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
  // As `synthex keys create <name> --role admin` makes it, every pipeline: the suite's project and
  // webhook tests save the pipeline's main, which is protected (an editor key gets a 403 there, as in the app).
  const key = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "mem0 suite", role: "admin" })).secret;
  const server = await startRouteServer([[/^\/compat\/mem0(\/|$)/, mem0Route]]);
  return {
    host: `${server.url}/compat/mem0`,
    key,
    async stop() {
      await server.close();
      await settleBackgroundWork();
      await closeDb();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

interface JsonReport {
  testResults: Array<{ assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }> }>;
}

async function runSuite(suiteDir: string, host: string, key: string): Promise<Outcome[]> {
  const out = path.join(mkdtempSync(path.join(tmpdir(), "synthex-peers-report-")), "report.json");
  const vitest = path.join(root, "node_modules/vitest/vitest.mjs");
  const args = [vitest, "run", "--config", path.join(here, "mem0/vitest.config.ts"), "--reporter=json", `--outputFile=${out}`, "--reporter=dot"];
  const env = { ...process.env, MEM0_SUITE_DIR: suiteDir, MEM0_HOST: host, MEM0_API_KEY: key, MEM0_TELEMETRY: "false", MEM0_DIR: path.join(path.dirname(out), "mem0-home") };
  await new Promise<void>((resolve) => spawn(process.execPath, args, { env, stdio: "inherit", cwd: root }).on("close", () => resolve()));
  const report = JSON.parse(readFileSync(out, "utf8")) as JsonReport;
  return report.testResults.flatMap((file) =>
    file.assertionResults.map((t): Outcome => {
      const message = t.failureMessages.join("\n").split("\n")[0];
      if (t.status === "passed") return { name: t.fullName, status: "passed" };
      if (t.status !== "failed") return { name: t.fullName, status: "skipped" };
      return { name: t.fullName, status: REFUSAL.test(message ?? "") ? "refused" : "failed", message };
    }),
  );
}

const repo = process.env.MEM0_REPO;
if (!repo) {
  console.error(`bench:peers:mem0 runs Mem0's own integration suite, which is not part of Synthex. Get Mem0's repository and name it in MEM0_REPO:

  git clone https://github.com/mem0ai/mem0 ~/src/mem0
  MEM0_REPO=~/src/mem0 npm run bench:peers:mem0

The suite is read at commit ${MEM0_COMMIT} (${SUITE_PATH}/); the checkout may be on any branch, or a bare clone.`);
  process.exit(2);
}
let suiteDir: string;
try {
  suiteDir = prepareSuite(repo);
} catch (err) {
  console.error(`MEM0_REPO=${repo}: cannot read ${SUITE_PATH} at commit ${MEM0_COMMIT} (${(err as Error).message.split("\n")[0]}). Is it a clone of https://github.com/mem0ai/mem0 with that commit (git -C "$MEM0_REPO" fetch origin)?`);
  process.exit(2);
}

const started = performance.now();
const external = process.env.MEM0_HOST && process.env.MEM0_API_KEY;
const synthex = external ? null : await startSynthex();
const outcomes = await runSuite(suiteDir, external ? process.env.MEM0_HOST! : synthex!.host, external ? process.env.MEM0_API_KEY! : synthex!.key);
await synthex?.stop();
rmSync(suiteDir, { recursive: true, force: true });

for (const o of outcomes) console.log(`${o.status.padEnd(7)} ${o.name}${o.message ? `\n          ${o.message.slice(0, 300)}` : ""}`);
const count = (s: Outcome["status"]) => outcomes.filter((o) => o.status === s).length;
console.log(`\nMem0 integration suite (mem0ai/mem0@${MEM0_COMMIT.slice(0, 7)}): ${outcomes.length} tests — ${count("passed")} passed, ${count("failed")} failed, ${count("refused")} refused${count("skipped") ? `, ${count("skipped")} skipped` : ""}`);
console.log(`${((performance.now() - started) / 1000).toFixed(0)} s, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
process.exit(count("failed") + count("refused") + count("skipped") === 0 && outcomes.length ? 0 : 1);
