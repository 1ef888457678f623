/**
 * Synthex shim (not from mem0ai/mem0): Jest's globalTeardown is the function a Vitest global setup
 * returns. The suite's global-teardown.ts sits beside this file in the runner's temp dir.
 */
import path from "node:path";

export default async function setup() {
  const file = path.join(import.meta.dirname, "src/client/tests/integration/global-teardown.ts");
  const { default: globalTeardown } = (await import(file)) as { default: () => Promise<void> };
  return globalTeardown;
}
