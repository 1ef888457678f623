/**
 * Start-up timing marks for profiling (`SYNTHEX_TIMING=1 synthex status`): each mark prints the
 * milliseconds since the process started and the CPU time it used so far (all its threads: on a
 * busy machine the wall time waits for a core, the CPU time does not), to stderr. Off otherwise.
 */
const enabled = Boolean(process.env.SYNTHEX_TIMING);

export function timingMark(label: string): void {
  if (!enabled) return;
  const { user, system } = process.cpuUsage();
  process.stderr.write(`[timing] ${performance.now().toFixed(0).padStart(6)} ms  cpu ${((user + system) / 1000).toFixed(0).padStart(5)} ms  ${label}\n`);
}
