/**
 * Private by default: Next.js's anonymous telemetry is off in `npm start`, `npm run dev` (both
 * scripts/start.ts) and the Docker image, unless the operator turns it back on.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { privateByDefault } from "./start-env";

const ROOT = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

/** The ENV settings of each stage of a Dockerfile (`FROM … AS name`), by stage name. */
function dockerStageEnv(dockerfile: string): Record<string, Record<string, string>> {
  const stages: Record<string, Record<string, string>> = {};
  let current: Record<string, string> | null = null;
  for (const line of dockerfile.replace(/\\\n/g, " ").split("\n")) {
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(line.trim());
    if (from) stages[from[1] ?? `stage${Object.keys(stages).length}`] = current = {};
    const env = /^ENV\s+(.+)$/i.exec(line.trim());
    if (env && current) for (const m of env[1]!.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) current[m[1]!] = m[2]!.replace(/^"|"$/g, "");
  }
  return stages;
}

describe("Next.js telemetry", () => {
  it("npm start and npm run dev give Next an environment with telemetry off, unless the operator set it", () => {
    expect(privateByDefault<Record<string, string | undefined>>({}).NEXT_TELEMETRY_DISABLED).toBe("1");
    expect(privateByDefault({ NEXT_TELEMETRY_DISABLED: "0" }).NEXT_TELEMETRY_DISABLED).toBe("0");
    const scripts = JSON.parse(read("package.json")).scripts as Record<string, string>;
    expect(scripts.start).toMatch(/scripts\/start\.ts$/);
    expect(scripts.dev).toMatch(/scripts\/start\.ts --dev$/);
    // start.ts settles the environment before it starts next build, next dev or the app servers.
    const start = read("scripts/start.ts");
    const settled = start.indexOf("privateByDefault(process.env)");
    expect(settled).toBeGreaterThan(0);
    for (const spawnCall of ["spawnSync(process.execPath, [nextBin", "spawn(process.execPath", "startWorkers(workers"]) {
      expect(start.indexOf(spawnCall), spawnCall).toBeGreaterThan(settled);
    }
  });

  it("Next itself reports telemetry disabled in that environment", () => {
    const env = { ...process.env };
    delete env.NEXT_TELEMETRY_DISABLED;
    const status = spawnSync(process.execPath, [path.join(ROOT, "node_modules/next/dist/bin/next"), "telemetry", "status"], {
      cwd: ROOT,
      env: privateByDefault(env),
      encoding: "utf8",
    });
    expect(status.stdout).toContain("Status: Disabled");
  });

  it("the Docker image builds and runs with telemetry off", () => {
    const stages = dockerStageEnv(read("Dockerfile"));
    expect(Object.keys(stages)).toEqual(expect.arrayContaining(["build", "runtime"]));
    expect(stages.build!.NEXT_TELEMETRY_DISABLED).toBe("1");
    expect(stages.runtime!.NEXT_TELEMETRY_DISABLED).toBe("1");
  });
});
