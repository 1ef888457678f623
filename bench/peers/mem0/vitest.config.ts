/**
 * Mem0's own integration suite (upstream/, unchanged) on Vitest, as its jest.integration.config.js
 * runs it on Jest: the global setup and teardown (full project wipe), one file at a time. Run by
 * bench/peers/mem0.ts, which starts Synthex and sets MEM0_HOST and MEM0_API_KEY.
 */
import path from "node:path";
import { defineConfig } from "vitest/config";

const dir = path.join(import.meta.dirname, "upstream");

export default defineConfig({
  test: {
    root: dir,
    include: ["src/client/tests/integration/**/*.test.ts"],
    globals: true,
    setupFiles: [path.join(dir, "jest-shim.ts")],
    globalSetup: [path.join(dir, "src/client/tests/integration/global-setup.ts"), path.join(dir, "teardown-adapter.ts")],
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    environment: "node",
  },
});
