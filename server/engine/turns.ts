/** Conversation turns ("Speaker: text" paragraphs), shared by the turn windows and the narrative operator. */

/** A speaker label opening a turn paragraph: "user:", "Caroline:", "tool (python):", "assistant (to canmore):". */
export const TURN_LABEL = /^([\p{L}\p{N}][\p{L}\p{N} ._'-]{0,40}(?: \([^)\n]{1,40}\))?):\s/u;

/** A conversation's paragraphs: the header (before the first turn) and the turns, continuation paragraphs folded into their turn. */
export function conversationTurns(content: string): { header: string; turns: string[] } {
  const paragraphs = content.replace(/\r\n?/g, "\n").split(/\n[ \t]*\n/);
  const header: string[] = [];
  const turns: string[] = [];
  let inFence = false;
  for (const p of paragraphs) {
    if (!p.trim()) continue;
    const startsTurn = !inFence && TURN_LABEL.test(p.trimStart());
    if (startsTurn || (turns.length === 0 && !inFence)) {
      if (startsTurn) turns.push(p.trim());
      else header.push(p.trim());
    } else if (turns.length) turns[turns.length - 1] += `\n\n${p.trim()}`;
    else header.push(p.trim());
    // A code fence with blank lines inside spans paragraphs: keep it in one turn.
    if (((p.match(/^\s*(`{3,}|~{3,})/gm) ?? []).length) % 2 === 1) inFence = !inFence;
  }
  return { header: header.join("\n"), turns };
}
