/**
 * Synthex shim (not from mem0ai/mem0): the few `jest` globals Mem0's tests use, on Vitest. `vi` is
 * Vitest's global (the config sets `globals`): this file runs from a temp dir with no node_modules.
 */
import type { vi as Vi } from "vitest";

const vi = (globalThis as unknown as { vi: typeof Vi }).vi;

Object.assign(globalThis, {
  jest: {
    setTimeout: (ms: number) => vi.setConfig({ testTimeout: ms, hookTimeout: ms }),
    spyOn: vi.spyOn,
    restoreAllMocks: vi.restoreAllMocks,
  },
});
