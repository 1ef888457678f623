/**
 * npm run bench:peers:zep — Zep's own wire suite (getzep/zep-js `tests/wire/`, commit
 * 3bbc802b2e675536f4798edc0c5ae92b39afa0f6) against Synthex's /compat/zep, with the installed
 * `@getzep/zep-cloud` client. The suite is not kept in this repository: it is read from a local
 * clone (or bare git dir) of getzep/zep-js named by ZEP_REPO, extracted into a temp dir and run
 * with our shims of its mock server and client (bench/peers/zep/shims/): only the connection
 * changes, and each response is checked with the SDK's own schemas instead of the mock's canned body.
 *
 * By default it starts Synthex itself on a fresh embedded database in a temp dir: a workspace, a
 * pipeline from the default template (offline model), a key as `synthex keys create` makes it (the
 * default role), and the compat handlers over real HTTP on 127.0.0.1. With ZEP_HOST (…/compat/zep)
 * and ZEP_API_KEY set, it runs against that server instead (e.g. `npm start` and a key of yours).
 *
 * Prints each test's outcome and the counts: passed, failed, refused (a 400 answer: Synthex's "not
 * supported here: use …"). Exit code 0 when none failed.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { report, runSuite, startSynthex } from "./harness";

const COMMIT = "3bbc802b2e675536f4798edc0c5ae92b39afa0f6";
const here = import.meta.dirname;

function extractSuite(repo: string): string {
  const gitDir = existsSync(path.join(repo, ".git")) ? path.join(repo, ".git") : repo;
  const dir = mkdtempSync(path.join(tmpdir(), "synthex-peers-zep-suite-"));
  const tar = execFileSync("git", ["--git-dir", gitDir, "archive", COMMIT, "tests/wire"], { maxBuffer: 64 << 20 });
  execFileSync("tar", ["-x", "-C", dir], { input: tar });
  return dir;
}

/** A 400 is a refusal: Synthex's "not supported here: use …" (the SDK's BadRequestError). */
const refused = (failure: string) => /Status code: 400/.test(failure.split("\n").slice(0, 3).join("\n"));

const repo = process.env.ZEP_REPO;
if (!repo) {
  console.error(
    [
      "ZEP_REPO is not set: it names a local clone (or bare git dir) of getzep/zep-js holding commit",
      `${COMMIT}, whose tests/wire/ this script runs. For example:`,
      "  git clone https://github.com/getzep/zep-js /tmp/zep-js",
      "  ZEP_REPO=/tmp/zep-js npm run bench:peers:zep",
    ].join("\n"),
  );
  process.exit(2);
}
const suite = extractSuite(repo);
const external = process.env.ZEP_HOST && process.env.ZEP_API_KEY;
// As `synthex keys create <name>` makes it: the default role, every pipeline.
const synthex = external ? null : await startSynthex("zep", "/compat/zep", async () => (await import("../../server/compat/zep")).zepRoute);
const started = performance.now();
const host = external ? process.env.ZEP_HOST! : synthex!.host;
const key = external ? process.env.ZEP_API_KEY! : synthex!.key;
const outcomes = await runSuite(path.join(here, "zep/vitest.config.ts"), { ZEP_HOST: host, ZEP_API_KEY: key, ZEP_SUITE_DIR: suite }, refused);
await synthex?.stop();
rmSync(suite, { recursive: true, force: true });

const counts = report(`Zep wire suite (getzep/zep-js@${COMMIT.slice(0, 7)})`, outcomes, started);
process.exit(counts.failed + counts.skipped === 0 && counts.total ? 0 : 1);
