/**
 * The search modes (see search.ts), in a module of their own so the CLI can offer them as choices
 * without loading the search engine, the embedders and the model SDKs behind it.
 */
export const SEARCH_MODES = ["fts", "semantic", "hybrid", "graph"] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
