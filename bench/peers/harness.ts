/**
 * What bench:peers:mem0 and bench:peers:zep share: Synthex started on a fresh embedded database with
 * one compat route over real HTTP, a peer's suite run by Vitest with a JSON report, and the counts
 * printed with the time and the load average.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import type { Handler } from "../../server/api/testing/route-server";

export const root = path.resolve(import.meta.dirname, "../..");

export interface Outcome {
  name: string;
  status: "passed" | "failed" | "refused" | "skipped";
  message?: string;
}

export interface Synthex {
  host: string;
  key: string;
  stop(): Promise<void>;
}

/**
 * A workspace, a pipeline from the mem0 template (offline model), a key of `keyRole` (`undefined`:
 * the default, as `synthex keys create <name>` makes it) for every pipeline, and `route` mounted at
 * `mount` (e.g. /compat/zep) on 127.0.0.1.
 */
export async function startSynthex(name: string, mount: string, route: () => Promise<Handler>, keyRole?: "admin"): Promise<Synthex> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `synthex-peers-${name}-`));
  process.env.SYNTHEX_DATA_DIR = dataDir;
  delete process.env.DATABASE_URL;
  const { openMigratedDb } = await import("../../server/store/runtime-env");
  const { closeDb } = await import("../../server/store/db");
  const { signUp } = await import("../../server/services/users");
  const { createApiKey } = await import("../../server/services/api-keys");
  const { createPipeline, templateSpec } = await import("../../server/services/pipelines");
  const { settleBackgroundWork } = await import("../../server/services/background");
  const { startRouteServer } = await import("../../server/api/testing/route-server");
  const db = await openMigratedDb();
  const { user, workspace } = await signUp(db, { email: "peers@example.com", password: "peers-password-1" });
  await createPipeline(db, workspace.id, { name: "agent-memory", spec: templateSpec("mem0") });
  const key = (await createApiKey(db, workspace.id, { userId: user.id, role: "owner" }, { name: `${name} suite`, ...(keyRole ? { role: keyRole } : {}) })).secret;
  const escaped = mount.replace(/[/]/g, "\\/");
  const server = await startRouteServer([[new RegExp(`^${escaped}(\\/|$)`), await route()]]);
  return {
    host: `${server.url}${mount}`,
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

/** Runs Vitest with `config` and `env`; each failed test is refused when `refused(failureText)` says so. */
export async function runSuite(config: string, env: Record<string, string>, refused: (failure: string) => boolean): Promise<Outcome[]> {
  const out = path.join(mkdtempSync(path.join(tmpdir(), "synthex-peers-report-")), "report.json");
  const vitest = path.join(root, "node_modules/vitest/vitest.mjs");
  const args = [vitest, "run", "--config", config, "--reporter=json", `--outputFile=${out}`, "--reporter=dot"];
  await new Promise<void>((resolve) => spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: "inherit", cwd: root }).on("close", () => resolve()));
  const report = JSON.parse(readFileSync(out, "utf8")) as JsonReport;
  rmSync(path.dirname(out), { recursive: true, force: true });
  return report.testResults.flatMap((file) =>
    file.assertionResults.map((t): Outcome => {
      const text = t.failureMessages.join("\n");
      if (t.status === "passed") return { name: t.fullName, status: "passed" };
      if (t.status !== "failed") return { name: t.fullName, status: "skipped" };
      return { name: t.fullName, status: refused(text) ? "refused" : "failed", message: text.split("\n").slice(0, 4).join(" ").replace(/\s+/g, " ") };
    }),
  );
}

/** Each outcome, then `<title>: N tests — passed, failed, refused (s, load average)`. Returns the counts. */
export function report(title: string, outcomes: Outcome[], startedMs: number) {
  for (const o of outcomes) console.log(`${o.status.padEnd(7)} ${o.name}${o.message ? `\n          ${o.message.slice(0, 300)}` : ""}`);
  const count = (s: Outcome["status"]) => outcomes.filter((o) => o.status === s).length;
  const seconds = (performance.now() - startedMs) / 1000;
  console.log(
    `\n${title}: ${outcomes.length} tests — ${count("passed")} passed, ${count("failed")} failed, ${count("refused")} refused${count("skipped") ? `, ${count("skipped")} skipped` : ""}` +
      ` (${seconds.toFixed(1)} s, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")})`,
  );
  return { total: outcomes.length, passed: count("passed"), failed: count("failed"), refused: count("refused"), skipped: count("skipped") };
}
