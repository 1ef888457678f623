/**
 * Mem0's own integration suite on Vitest, as its jest.integration.config.js runs it on Jest: the
 * global setup and teardown (full project wipe), one file at a time. Run by bench/peers/mem0.ts,
 * which puts the suite (unchanged, from the user's Mem0 checkout) beside the shims in a temp dir,
 * names it in MEM0_SUITE_DIR and sets MEM0_HOST and MEM0_API_KEY.
 */
import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";

const dir = process.env.MEM0_SUITE_DIR;
if (!dir) throw new Error("MEM0_SUITE_DIR is not set: run this suite with `npm run bench:peers:mem0`");
const require = createRequire(import.meta.url);

export default defineConfig({
  // The temp dir has no node_modules: the shims' imports resolve to this repository's packages.
  resolve: { alias: { mem0ai: require.resolve("mem0ai") } },
  test: {
    root: dir,
    include: ["src/client/tests/integration/**/*.test.ts"],
    globals: true,
    setupFiles: ["jest-shim.ts"],
    globalSetup: ["src/client/tests/integration/global-setup.ts", "teardown-adapter.ts"],
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    environment: "node",
  },
});
