/**
 * The environment `npm start` and `npm run dev` (scripts/start.ts) give Next: private by default.
 * Next.js's anonymous usage telemetry stays off unless the operator sets NEXT_TELEMETRY_DISABLED=0.
 * The Docker image sets the same in its Dockerfile (scripts/privacy.test.ts checks both).
 */
export function privateByDefault<E extends Record<string, string | undefined>>(env: E): E {
  (env as Record<string, string | undefined>).NEXT_TELEMETRY_DISABLED ??= "1";
  return env;
}
