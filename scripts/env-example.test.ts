/**
 * `.env.example` lists every environment variable the product reads (server, app, Inngest,
 * scripts), so a deployment can be configured from it alone. Variables only tests, builds of this
 * repository or Next itself read are exempt, by name.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envVariableNames, parseEnvExample } from "./docs/env-example";

const ROOT = path.resolve(import.meta.dirname, "..");
const EXEMPT = new Set([
  "NEXT_RUNTIME", // set by Next
  "NODE_OPTIONS", // Node's own: npm start keeps a --max-semi-space-size given there
  "TEST_DATABASE_URL", // the test suite's PostgreSQL
  "SKIP_E2E", // npm test
  "VITEST_OUTCOMES_FILE", // npm test: where the outcomes reporter writes skips and flaky tests
  "SYNTHEX_STANDALONE", // the Docker build
  "SYNTHEX_DIST_DIR", // a second build beside .next (tests)
  "SYNTHEX_MIGRATIONS_DIR", // db:diff and tests
  "SYNTHEX_SCHEMA", // db:diff
  "SYNTHEX_REBUILD", // npm start: force a build
  "AUTH_SECRET", // next-auth's alias of NEXTAUTH_SECRET
]);

function sources(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!["node_modules", "generated", ".next"].includes(e.name)) sources(rel, out);
    } else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$|(^|\/)testing\/|test-db\.ts$|[-.]fixtures?\.ts$/.test(rel)) out.push(rel);
  }
  return out;
}

describe(".env.example", () => {
  it("names every variable the product reads", () => {
    const files = [...["server", "app", "inngest", "lib", "scripts"].flatMap((d) => sources(d)), "instrumentation.ts", "next.config.ts"];
    const read = new Set<string>();
    const pattern = /(?:process\.env|\benv)\.([A-Z][A-Z0-9_]+)|env(?:Int|Period|Number)\("([A-Z][A-Z0-9_]+)"|fromEnv\("([A-Z][A-Z0-9_]+)"/g;
    for (const file of files) {
      for (const m of readFileSync(path.join(ROOT, file), "utf8").matchAll(pattern)) read.add((m[1] ?? m[2] ?? m[3])!);
    }
    expect(read.size).toBeGreaterThan(20);
    // The same reading of .env.example as docs/configuration.md's (scripts/docs/env-example.ts).
    const listed = new Set(envVariableNames(parseEnvExample(readFileSync(path.join(ROOT, ".env.example"), "utf8"))));
    const missing = [...read].filter((v) => !EXEMPT.has(v) && !listed.has(v)).sort();
    expect(missing).toEqual([]);
  });
});
