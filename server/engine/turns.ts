/** Conversation turns ("Speaker: text" paragraphs), shared by the turn windows and the narrative operator. */

/** A speaker label opening a turn paragraph: "user:", "Caroline:", "tool (python):", "assistant (to canmore):". */
export const TURN_LABEL = /^([\p{L}\p{N}][\p{L}\p{N} ._'-]{0,40}(?: \([^)\n]{1,40}\))?):\s/u;

/**
 * A metadata line a transcript carries above its turns ("Date: 10 January 2024", the offline
 * transcript's heading; "Title: …", "Date: …" as the transcript prompt shows them to a model): part
 * of the header, never a turn, so turn numbers are message numbers.
 */
const METADATA_LINE = /^(?:date|title|time|created|updated|participants)\s*:\s*\S[^\n]*$/i;
const isMetadataParagraph = (p: string) => p.trim().split("\n").every((line) => METADATA_LINE.test(line.trim()));

/**
 * A conversation's paragraphs: the header (before the first turn), the turns (continuation
 * paragraphs folded into their turn) and the metadata lines above the first turn (`meta`, kept out
 * of both: windows repeat only the header, as before these lines were recognised).
 */
export function conversationTurns(content: string): { header: string; turns: string[]; meta: string[] } {
  const paragraphs = content.replace(/\r\n?/g, "\n").split(/\n[ \t]*\n/);
  const header: string[] = [];
  const turns: string[] = [];
  const meta: string[] = [];
  let inFence = false;
  for (const p of paragraphs) {
    if (!p.trim()) continue;
    if (!inFence && turns.length === 0 && TURN_LABEL.test(p.trimStart()) && isMetadataParagraph(p)) {
      meta.push(p.trim());
      continue;
    }
    const startsTurn = !inFence && TURN_LABEL.test(p.trimStart());
    if (startsTurn || (turns.length === 0 && !inFence)) {
      if (startsTurn) turns.push(p.trim());
      else header.push(p.trim());
    } else if (turns.length) turns[turns.length - 1] += `\n\n${p.trim()}`;
    else header.push(p.trim());
    // A code fence with blank lines inside spans paragraphs: keep it in one turn.
    if (((p.match(/^\s*(`{3,}|~{3,})/gm) ?? []).length) % 2 === 1) inFence = !inFence;
  }
  return { header: header.join("\n"), turns, meta };
}
