/**
 * What each template is good for, in a newcomer's words: the first line of its card in the gallery
 * (the description, with its design notes, follows). Kept apart from the templates so the gallery
 * text can be edited without touching the specs.
 */
export const GOOD_FOR: Readonly<Record<string, string>> = {
  "chat-memory": "Your own chat history: ask what you talked about, month by month, and what it says about you.",
  synapse: "An assistant that talks to the same users again: recalls each user's last sessions and how things stand.",
  synapsis: "Questions about people and facts that change: who knows whom, where someone lives now, what changed.",
  pyramid: "Long histories you want to read from the top down: a synthesis first, then the detail under it.",
  memex: "Memories per project or customer that stay current: an updated fact replaces the old one.",
  mem0: "Comparing with Mem0: extracted facts and the people and things they name, found by meaning and by words.",
  "rag-baseline": "A baseline to beat: plain chunks of your text, searched directly.",
  documents: "Notes, pages and documents: a summary per document and one of the whole collection.",
  "bm25-sessions": "A no-model baseline: whole conversations ranked by word match.",
  "bm25-windows": "A no-model baseline: each turn with its neighbours, ranked by word match.",
  blank: "Starting from scratch: one source, then build the steps yourself.",
};
