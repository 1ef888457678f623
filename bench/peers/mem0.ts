/**
 * npm run bench:peers:mem0 — Mem0's own integration suite (mem0ai/mem0
 * `mem0-ts/src/client/tests/integration/`, commit 8d5b786, vendored unchanged in
 * bench/peers/mem0/upstream/, Apache-2.0: see bench/peers/mem0/NOTICE) against Synthex's
 * /compat/mem0, with the installed `mem0ai` client. Only the connection changes: MEM0_HOST and
 * MEM0_API_KEY.
 *
 * By default it starts Synthex itself on a fresh embedded database in a temp dir: a workspace, a
 * pipeline from the mem0 template (offline model), a key as `synthex keys create` makes it (role
 * editor, the default), and the compat and REST handlers over real HTTP on 127.0.0.1 (the route
 * server the compat tests use). With MEM0_HOST and MEM0_API_KEY set, it runs against that server
 * instead (e.g. `npm start` and a key of yours).
 *
 * Prints each test's outcome and the counts: passed, failed, refused (a failure whose error is one
 * of Synthex's 400 answers, "not supported here: use …", which the SDK throws as ValidationError). Exit code 0 when none failed
 * or was refused. Takes about a minute (the suite's own setup waits 10 s).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const here = import.meta.dirname;
const root = path.resolve(here, "../..");

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
  // As `synthex keys create <name>` makes it: the default role (editor), every pipeline.
  const key = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: "mem0 suite" })).secret;
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

async function runSuite(host: string, key: string): Promise<Outcome[]> {
  const out = path.join(mkdtempSync(path.join(tmpdir(), "synthex-peers-report-")), "report.json");
  const vitest = path.join(root, "node_modules/vitest/vitest.mjs");
  const args = [vitest, "run", "--config", path.join(here, "mem0/vitest.config.ts"), "--reporter=json", `--outputFile=${out}`, "--reporter=dot"];
  const env = { ...process.env, MEM0_HOST: host, MEM0_API_KEY: key, MEM0_TELEMETRY: "false", MEM0_DIR: path.join(path.dirname(out), "mem0-home") };
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

const external = process.env.MEM0_HOST && process.env.MEM0_API_KEY;
const synthex = external ? null : await startSynthex();
const outcomes = await runSuite(external ? process.env.MEM0_HOST! : synthex!.host, external ? process.env.MEM0_API_KEY! : synthex!.key);
await synthex?.stop();

for (const o of outcomes) console.log(`${o.status.padEnd(7)} ${o.name}${o.message ? `\n          ${o.message.slice(0, 300)}` : ""}`);
const count = (s: Outcome["status"]) => outcomes.filter((o) => o.status === s).length;
console.log(`\nMem0 integration suite (mem0ai/mem0@8d5b786): ${outcomes.length} tests — ${count("passed")} passed, ${count("failed")} failed, ${count("refused")} refused${count("skipped") ? `, ${count("skipped")} skipped` : ""}`);
process.exit(count("failed") + count("refused") + count("skipped") === 0 && outcomes.length ? 0 : 1);
