const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Does `text` name `value` as a whole word or phrase (case-insensitive)? */
export function mentionsValue(text: string, value: string): boolean {
  return new RegExp(`(?<![\\p{L}\\p{N}])${escape(value)}(?![\\p{L}\\p{N}])`, "iu").test(text);
}
