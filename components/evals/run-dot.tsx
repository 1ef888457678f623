/** A run's colour dot, as every legend and table of the page shows it (no chart library: tables use it too). */
export function RunDot({ color, hollow }: { color: string; hollow?: boolean }) {
  return <span aria-hidden className="inline-block size-2.5 shrink-0 rounded-full border-2" style={{ borderColor: color, background: hollow ? "transparent" : color }} />;
}
