/**
 * A pipeline spec the compare tests score at two altitudes of one benchmark: turn windows (turn-level
 * evidence) and a one-sentence extractive gist per session (loses most turns) — so comparing them
 * shows regressions with the evidence marked.
 */
export const TWO_ALTITUDE_SPEC = {
  version: 1,
  sources: [{ name: "chats", format: "json" }],
  steps: [
    { type: "split", name: "windows", from: "chats", operator: { kind: "windows", radius: 1 } },
    { type: "transform", name: "gist", from: "chats", operator: { kind: "extractive-summary", sentences: 1 } },
  ],
  outputs: [{ name: "search", surface: "search", from: ["windows", "gist"] }],
};
