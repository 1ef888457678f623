/**
 * `bin/synthex.mjs` picks V8 flags per command: commands that answer and exit skip the optimizing
 * recompilation (--liftoff-only --no-opt), commands that work for minutes keep it with a larger
 * budget, SYNTHEX_V8_FLAGS replaces both. `SYNTHEX_TIMING=1` names the flags on stderr.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

function flagsFor(args: string[], env: Record<string, string> = {}): string {
  const r = spawnSync(process.execPath, [path.join(ROOT, "bin/synthex.mjs"), ...args, "--help"], {
    cwd: ROOT,
    env: { ...process.env, SYNTHEX_TIMING: "1", ...env },
    encoding: "utf8",
  });
  expect(r.status, r.stderr).toBe(0);
  const line = r.stderr.split("\n").find((l) => l.includes("compiled CLI found"));
  expect(line, r.stderr).toBeDefined();
  return /\(V8 flags: (.*)\)/.exec(line!)![1]!;
}

describe("synthex V8 flags", { timeout: 120_000 }, () => {
  it("answering commands run without optimizing recompilation, working ones keep it", () => {
    expect(flagsFor([])).toBe("--liftoff-only --no-opt");
    expect(flagsFor(["status"])).toBe("--liftoff-only --no-opt");
    expect(flagsFor(["--pipeline", "run", "search"])).toBe("--liftoff-only --no-opt"); // "run" is the option's value
    expect(flagsFor(["-p", "x", "run"])).toBe("--wasm-tiering-budget=180000000");
    expect(flagsFor(["eval"])).toBe("--wasm-tiering-budget=180000000");
  });

  it("SYNTHEX_V8_FLAGS replaces them (empty: none)", () => {
    expect(flagsFor(["status"], { SYNTHEX_V8_FLAGS: "" })).toBe("none");
    expect(flagsFor(["run"], { SYNTHEX_V8_FLAGS: "--liftoff-only" })).toBe("--liftoff-only");
  });
});
