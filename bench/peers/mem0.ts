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
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { report, runSuite, startSynthex } from "./harness";

const here = import.meta.dirname;
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

/** Synthex's refusals are 400s saying what to use instead: the SDK throws them as ValidationError. */
const REFUSAL = /^ValidationError:/;

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
// As `synthex keys create <name> --role admin` makes it, every pipeline: the suite's project and
// webhook tests save the pipeline's main, which is protected (an editor key gets a 403 there, as in the app).
const synthex = external ? null : await startSynthex("mem0", "/compat/mem0", async () => (await import("../../server/compat/mem0")).mem0Route, "admin");
const host = external ? process.env.MEM0_HOST! : synthex!.host;
const key = external ? process.env.MEM0_API_KEY! : synthex!.key;
const home = mkdtempSync(path.join(tmpdir(), "synthex-peers-mem0-home-"));
const outcomes = await runSuite(path.join(here, "mem0/vitest.config.ts"), { MEM0_SUITE_DIR: suiteDir, MEM0_HOST: host, MEM0_API_KEY: key, MEM0_TELEMETRY: "false", MEM0_DIR: home }, (failure) => REFUSAL.test(failure));
await synthex?.stop();
rmSync(suiteDir, { recursive: true, force: true });
rmSync(home, { recursive: true, force: true });

const counts = report(`Mem0 integration suite (mem0ai/mem0@${MEM0_COMMIT.slice(0, 7)})`, outcomes, started);
process.exit(counts.failed + counts.refused + counts.skipped === 0 && counts.total ? 0 : 1);
