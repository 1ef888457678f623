/**
 * BM25 (k1 1.2, b 0.75) over Porter-stemmed terms with the stop words of
 * shared/tools/locomo-baseline, so the `bm25-sessions` and `bm25-windows` templates reproduce its
 * lexical baselines inside Synthex. Ranks the records of one step within one scope in memory
 * (a benchmark sample holds at most a few thousand records).
 */
import { stemmer } from "stemmer";

const STOP = new Set(
  "the a an of to in on and or is was were be been are i you he she it we they my your his her their what when where who how did do does with for at by from that this as has have had about would which there".split(
    " ",
  ),
);

const stems = new Map<string, string>();

/** Lower-cased [a-z0-9]+ tokens, stop words removed, Porter-stemmed. */
export function bm25Terms(text: string): string[] {
  const out: string[] = [];
  for (const t of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (STOP.has(t)) continue;
    let s = stems.get(t);
    if (s === undefined) {
      s = stemmer(t);
      if (stems.size < 200_000) stems.set(t, s);
    }
    out.push(s);
  }
  return out;
}

export class Bm25Index {
  private readonly tf: Array<Map<string, number>>;
  private readonly len: number[];
  private readonly avg: number;
  private readonly idf = new Map<string, number>();
  private readonly postings = new Map<string, number[]>();

  constructor(
    docs: string[],
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {
    this.tf = docs.map((d) => {
      const m = new Map<string, number>();
      for (const t of bm25Terms(d)) m.set(t, (m.get(t) ?? 0) + 1);
      return m;
    });
    this.len = this.tf.map((m) => [...m.values()].reduce((a, n) => a + n, 0));
    this.avg = this.len.reduce((a, n) => a + n, 0) / Math.max(1, this.len.length);
    const n = this.tf.length;
    this.tf.forEach((m, i) => {
      for (const w of m.keys()) {
        const list = this.postings.get(w);
        if (list) list.push(i);
        else this.postings.set(w, [i]);
      }
    });
    for (const [w, list] of this.postings) this.idf.set(w, Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5)));
  }

  /** Documents that share a term with the query, best first (ties: document order), with scores. */
  rank(query: string): Array<{ index: number; score: number }> {
    const scores = new Map<number, number>();
    for (const w of new Set(bm25Terms(query))) {
      const idf = this.idf.get(w);
      if (!idf) continue;
      for (const i of this.postings.get(w)!) {
        const tf = this.tf[i]!.get(w)!;
        const s = (idf * tf * (this.k1 + 1)) / (tf + this.k1 * (1 - this.b + (this.b * this.len[i]!) / this.avg));
        scores.set(i, (scores.get(i) ?? 0) + s);
      }
    }
    return [...scores].map(([index, score]) => ({ index, score })).sort((a, b) => b.score - a.score || a.index - b.index);
  }
}
