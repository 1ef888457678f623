/** One item of raw history as an importer produces it and a source step stores it. */
export interface SourceItem {
  /** Stable identity inside the source (e.g. a conversation id): a changed item replaces the old one. */
  externalId: string;
  content: string;
  scope?: string;
  metadata?: Record<string, unknown>;
}
