/**
 * State that belongs to the process, not to one copy of a module. One app server process can load
 * a module more than once: Next bundles its instrumentation and each route apart, and `npm start`'s
 * direct /api/v1 path (scripts/app-server.ts) loads the server's modules through tsx beside Next's
 * bundle. A module variable would then exist once per copy: a run executing in one copy unknown to
 * run recovery in another, a cache one copy clears and another keeps serving, a rate budget counted
 * twice. Such state lives here instead, on globalThis under one registry, created by whichever copy
 * asks first and shared by the others.
 *
 * A name is the state's identity in the process: give each its own (`<module>.<what>`), and keep
 * its type the same wherever it is asked for.
 */
const REGISTRY = Symbol.for("synthex.processState");

const registry = (): Map<string, unknown> => {
  const g = globalThis as typeof globalThis & { [REGISTRY]?: Map<string, unknown> };
  return (g[REGISTRY] ??= new Map<string, unknown>());
};

/** The process's one value named `name`, made by `create` the first time any module copy asks. */
export function processState<T>(name: string, create: () => T): T {
  const all = registry();
  if (!all.has(name)) all.set(name, create());
  return all.get(name) as T;
}
