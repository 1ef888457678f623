/** The search service: altitude search, provenance drill-down, indexing (used by tRPC, CLI, REST). */
export { search, SEARCH_MODES, MAX_QUERY_LENGTH, MAX_LIMIT, type SearchInput, type SearchResult, type SearchHit, type SearchMode } from "./search";
export { sources, leaves, lineage, getRecord, listByStep, type RecordSummary, type LeavesResult, type LineageResult, type RecordDetail } from "./provenance";
export { indexPipeline, type IndexResult } from "./indexing";
export { altitudes, indexedSteps, resolveBranch, type RecordFilters } from "./context";
