/**
 * `next build` compiles instrumentation.ts for the Edge Runtime too, with NEXT_RUNTIME replaced by
 * "edge": a branch under `NEXT_RUNTIME === "nodejs"` is dropped, but code after an early
 * `if (NEXT_RUNTIME !== "nodejs") return;` is kept, and its `process.exit` made every build warn
 * ("A Node.js API is used (process.exit) which is not supported in the Edge Runtime"). esbuild
 * applies the same constant folding (without minifying), so its output is what the Edge build sees.
 */
import path from "node:path";
import { transform } from "esbuild";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");

async function compiledFor(runtime: "edge" | "nodejs"): Promise<string> {
  const source = readFileSync(path.join(ROOT, "instrumentation.ts"), "utf8");
  const { code } = await transform(source, { loader: "ts", format: "esm", define: { "process.env.NEXT_RUNTIME": JSON.stringify(runtime) } });
  return code;
}

describe("instrumentation.ts", () => {
  it("reaches no Node-only code in the Edge build: no process.exit, no import", async () => {
    const edge = await compiledFor("edge");
    expect(edge).not.toMatch(/process\.exit/);
    expect(edge).not.toMatch(/\bimport\s*\(|\bfrom\s+["']|\brequire\s*\(/);
  });

  it("still starts the Node server part in the Node build", async () => {
    const node = await compiledFor("nodejs");
    expect(node).toMatch(/import\(["']\.\/instrumentation-node["']\)/);
    expect(readFileSync(path.join(ROOT, "instrumentation-node.ts"), "utf8")).toMatch(/process\.exit\(1\)/);
  });
});
