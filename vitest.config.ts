import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["server/**/*.test.ts", "inngest/**/*.test.ts", "scripts/**/*.test.ts", "components/**/*.test.ts"],
    environment: "node",
    // Generous: PGlite start + migrations take seconds alone and minutes when six engineers share two cores.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Two cores: more workers only contend for the same WASM-heavy PGlite startups.
    maxWorkers: 2,
  },
});
