/**
 * A count with its noun in the right number: "1 run", "2 runs", "0 questions" (issue 48: legends
 * said "(1 runs)"). English's regular plural unless `many` is given ("1 query", "3 queries").
 */
export function plural(n: number, one: string, many?: string): string {
  const word = n === 1 ? one : (many ?? (/[^aeiou]y$/.test(one) ? `${one.slice(0, -1)}ies` : /(s|x|z|ch|sh)$/.test(one) ? `${one}es` : `${one}s`));
  return `${n.toLocaleString("en-US")} ${word}`;
}
