/** Plain terminal output for the CLI: tables, numbers, a progress line. No colours needed to read it. */

export function table(rows: Array<Record<string, unknown>>, columns?: string[]): string {
  if (rows.length === 0) return "(none)";
  const cols = columns ?? Object.keys(rows[0]!);
  const cell = (v: unknown) => (v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(cols), line(widths.map((w) => "-".repeat(w))), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join("\n");
}

export const num = (n: number) => n.toLocaleString("en-US");
export const usd = (n: number) => `$${n.toFixed(n < 1 ? 4 : 2)}`;

export function bar(done: number, total: number, width = 24): string {
  const ratio = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(ratio * width);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${num(done)}/${num(total)}`;
}

/** Rewrites one line on a terminal; prints only the final state of each line elsewhere (CI logs). */
export class ProgressLine {
  private last = "";
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}
  update(text: string) {
    if (this.stream.isTTY) this.stream.write(`\r${text.padEnd(this.last.length)}`);
    this.last = text;
  }
  done(text?: string) {
    const final = text ?? this.last;
    if (this.stream.isTTY) this.stream.write(`\r${final.padEnd(this.last.length)}\n`);
    else if (final) this.stream.write(`${final}\n`);
    this.last = "";
  }
}

/** A command's answer: JSON with --json, else the human text. */
export const print = (opts: { json?: boolean }, value: unknown, human: () => string) => console.log(opts.json ? JSON.stringify(value, null, 2) : human());
