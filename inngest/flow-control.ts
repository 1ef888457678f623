/**
 * Flow control for the run function, in one place so the docs (docs/operations.md), the tests and the function
 * config agree. Limits are read once at startup from the environment.
 *
 * - concurrency per workspace: at most N steps of one workspace's runs execute at once, so one
 *   workspace cannot starve the others;
 * - concurrency per provider (env-wide): at most M steps calling the same provider(s) at once;
 * - throttle per provider: at most T run starts per period for the same provider(s), smoothing
 *   bursts of runs into the provider's rate limit.
 */
function envInt(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

type Period = `${number}s` | `${number}m` | `${number}h`;

function envPeriod(name: string, fallback: Period): Period {
  const raw = process.env[name]?.trim();
  return raw && /^\d+[smh]$/.test(raw) ? (raw as Period) : fallback;
}

/** Function ids; Inngest prefixes them with the app id ("synthex-run", ...). */
export const RUN_FUNCTION_ID = "run";
export const INCREMENTAL_FUNCTION_ID = "incremental-run";
export const CANCEL_FUNCTION_ID = "run-cancelled";
export const EVAL_FUNCTION_ID = "eval";

export const WORKSPACE_KEY = "event.data.workspaceId";
export const PROVIDER_KEY = "event.data.provider";

export const flowControl = {
  workspaceConcurrency: envInt("SYNTHEX_INNGEST_WORKSPACE_CONCURRENCY", 4),
  providerConcurrency: envInt("SYNTHEX_INNGEST_PROVIDER_CONCURRENCY", 10),
  providerThrottle: {
    limit: envInt("SYNTHEX_INNGEST_PROVIDER_THROTTLE_LIMIT", 30),
    period: envPeriod("SYNTHEX_INNGEST_PROVIDER_THROTTLE_PERIOD", "1m"),
    burst: envInt("SYNTHEX_INNGEST_PROVIDER_THROTTLE_BURST", 5),
  },
  /** Work items per memoized `step.run` for transform/split steps. */
  batchSize: envInt("SYNTHEX_INNGEST_BATCH_SIZE", 100),
  /** Inngest retries of a failed step (transient provider errors, lost workers). */
  retries: 3 as const,
  /** Incremental runs after `source.appended`: wait this long for the pushes to settle. */
  debounce: { period: envPeriod("SYNTHEX_INNGEST_DEBOUNCE", "30s"), timeout: envPeriod("SYNTHEX_INNGEST_DEBOUNCE_TIMEOUT", "5m") },
};
