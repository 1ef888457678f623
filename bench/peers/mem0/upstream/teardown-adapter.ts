/** Synthex shim (not from mem0ai/mem0): Jest's globalTeardown is the function a Vitest global setup returns. */
import globalTeardown from "./src/client/tests/integration/global-teardown";

export default function setup() {
  return globalTeardown;
}
