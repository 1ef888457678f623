/**
 * What a prompt asks of the model, where something other than the model must know it ahead of the
 * call: the offline model (a transcript must keep every turn) and the cost plan (a transcript
 * writes about as much as it reads).
 */
const VERBATIM_REQUEST_RE = /\btranscripts?\b|\bevery (?:turn|message)\b|\bverbatim\b/i;

/** Do these instructions (the prompt without its inputs' text) ask for a lossless rewrite? */
export function asksForVerbatimRewrite(instructions: string): boolean {
  return VERBATIM_REQUEST_RE.test(instructions);
}
