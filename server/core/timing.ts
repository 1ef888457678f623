/**
 * Start-up timing marks for profiling (`SYNTHEX_TIMING=1 synthex status`): each mark prints the
 * milliseconds since the process started, to stderr. Off (one boolean test) otherwise.
 */
const enabled = Boolean(process.env.SYNTHEX_TIMING);

export function timingMark(label: string): void {
  if (enabled) process.stderr.write(`[timing] ${performance.now().toFixed(0).padStart(6)} ms  ${label}\n`);
}
