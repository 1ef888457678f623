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
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";

const COMMIT = "3bbc802b2e675536f4798edc0c5ae92b39afa0f6";
const here = import.meta.dirname;
const root = path.resolve(here, "../..");

interface Outcome {
  name: string;
  status: "passed" | "failed" | "refused" | "skipped";
  message?: string;
}

function extractSuite(repo: string): string {
  const gitDir = existsSync(path.join(repo, ".git")) ? path.join(repo, ".git") : repo;
  const dir = mkdtempSync(path.join(tmpdir(), "synthex-peers-zep-suite-"));
  const tar = execFileSync("git", ["--git-dir", gitDir, "archive", COMMIT, "tests/wire"], { maxBuffer: 64 << 20 });
  execFileSync("tar", ["-x", "-C", dir], { input: tar });
  return dir;
}

async function startSynthex(): Promise<{ host: string; key: string; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "synthex-peers-zep-"));
  process.env.SYNTHEX_DATA_DIR = dataDir;
  delete process.env.DATABASE_URL;
  const { openMigratedDb } = await import("../../server/store/runtime-env");
  const { closeDb } = await import("../../server/store/db");
  const { signUp } = await import("../../server/services/users");
  const { createApiKey } = await import("../../server/services/api-keys");
  const { createPipeline, templateSpec } = await import("../../server/services/pipelines");
  const { settleBackgroundWork } = await import("../../server/services/background");
  const { startRouteServer } = await import("../../server/api/testing/route-server");
  const { zepRoute } = await import("../../server/compat/zep");
  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "peers@example.com", password: "peers-password-1" });
  await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
  // As `synthex keys create <name>` makes it: the default role, every pipeline.
  const key = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "zep suite" })).secret;
  const server = await startRouteServer([[/^\/compat\/zep(\/|$)/, zepRoute]]);
  return {
    host: `${server.url}/compat/zep`,
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

async function runSuite(suite: string, host: string, key: string): Promise<Outcome[]> {
  const out = path.join(mkdtempSync(path.join(tmpdir(), "synthex-peers-report-")), "report.json");
  const vitest = path.join(root, "node_modules/vitest/vitest.mjs");
  const args = [vitest, "run", "--config", path.join(here, "zep/vitest.config.ts"), "--reporter=json", `--outputFile=${out}`, "--reporter=dot"];
  const env = { ...process.env, ZEP_HOST: host, ZEP_API_KEY: key, ZEP_SUITE_DIR: suite };
  await new Promise<void>((resolve) => spawn(process.execPath, args, { env, stdio: "inherit", cwd: root }).on("close", () => resolve()));
  const report = JSON.parse(readFileSync(out, "utf8")) as JsonReport;
  return report.testResults.flatMap((file) =>
    file.assertionResults.map((t): Outcome => {
      const text = t.failureMessages.join("\n");
      const message = text.split("\n").slice(0, 4).join(" ").replace(/\s+/g, " ");
      if (t.status === "passed") return { name: t.fullName, status: "passed" };
      if (t.status !== "failed") return { name: t.fullName, status: "skipped" };
      return { name: t.fullName, status: /^BadRequestError\nStatus code: 400/.test(text.replace(/^\w*Error: /, "")) || /Status code: 400/.test(text.split("\n").slice(0, 2).join("\n")) ? "refused" : "failed", message };
    }),
  );
}

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
const synthex = external ? null : await startSynthex();
const started = Date.now();
const outcomes = await runSuite(suite, external ? process.env.ZEP_HOST! : synthex!.host, external ? process.env.ZEP_API_KEY! : synthex!.key);
const seconds = (Date.now() - started) / 1000;
await synthex?.stop();
rmSync(suite, { recursive: true, force: true });

for (const o of outcomes) console.log(`${o.status.padEnd(7)} ${o.name}${o.message ? `\n          ${o.message.slice(0, 300)}` : ""}`);
const count = (s: Outcome["status"]) => outcomes.filter((o) => o.status === s).length;
console.log(
  `\nZep wire suite (getzep/zep-js@${COMMIT.slice(0, 7)}): ${outcomes.length} tests — ${count("passed")} passed, ${count("failed")} failed, ${count("refused")} refused${count("skipped") ? `, ${count("skipped")} skipped` : ""}` +
    ` (${seconds.toFixed(1)} s, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")})`,
);
process.exit(count("failed") + count("skipped") === 0 && outcomes.length ? 0 : 1);
