import path from "node:path";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["server/**/*.test.ts", "inngest/**/*.test.ts", "scripts/**/*.test.ts", "components/**/*.test.ts", "client/**/*.test.ts", "bench/**/*.test.ts"],
    // Tests that need a real PostgreSQL server run only in the second pass (vitest.postgres.config.ts).
    // bench/peers: shims for the Mem0/Zep clients' own suites (read from the user's clones); run by npm run bench:peers:* against a server.
    exclude: [...configDefaults.exclude, "**/*.postgres.test.ts", "bench/peers/**"],
    environment: "node",
    // The mock LLM and webhook servers listen on 127.0.0.1: allowed here explicitly, as an operator would
    // for a development server (server/http/outbound.ts refuses loopback otherwise; its own tests pass strict policies).
    env: { SYNTHEX_ALLOW_HTTP_HOSTS: "127.0.0.1,localhost", SYNTHEX_ALLOW_PRIVATE_NETWORKS: "127.0.0.1/32" },
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Two cores: more workers only contend for the same WASM-heavy PGlite startups.
    maxWorkers: 2,
  },
});
