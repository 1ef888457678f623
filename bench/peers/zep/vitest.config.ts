/**
 * Zep's wire suite (getzep/zep-js `tests/wire/`, extracted by bench/peers/zep.ts into ZEP_SUITE_DIR)
 * on Vitest, against Synthex: Jest's globals (the suite's own runner), our shims of its mock server
 * and client (shims/), one file at a time.
 */
import path from "node:path";
import { defineConfig } from "vitest/config";

const suite = process.env.ZEP_SUITE_DIR ?? path.join(import.meta.dirname, "suite");

export default defineConfig({
  resolve: {
    alias: [
      { find: /^.*\/mock-server\/MockServerPool$/, replacement: path.join(import.meta.dirname, "shims/MockServerPool.ts") },
      { find: /^(\.\.\/)+src\/Client$/, replacement: path.join(import.meta.dirname, "shims/Client.ts") },
    ],
  },
  test: {
    root: suite,
    include: ["tests/wire/**/*.test.ts"],
    globals: true,
    setupFiles: [path.join(import.meta.dirname, "shims/setup.ts")],
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    environment: "node",
  },
});
