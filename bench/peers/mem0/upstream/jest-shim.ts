/** Synthex shim (not from mem0ai/mem0): the few `jest` globals the vendored tests use, on Vitest. */
import { vi } from "vitest";

Object.assign(globalThis, {
  jest: {
    setTimeout: (ms: number) => vi.setConfig({ testTimeout: ms, hookTimeout: ms }),
    spyOn: vi.spyOn,
    restoreAllMocks: vi.restoreAllMocks,
  },
});
