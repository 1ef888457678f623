/**
 * Documents: a folder of PDFs, Word files, web pages, notes and memos (one record per page, file
 * or note, as the importers and Quick add store them) → chunks for retrieval → a summary per
 * document → one summary of the whole collection.
 *
 * - chunks (split): 1,200-character chunks with 150 characters of overlap; a chunk keeps its
 *   page's `source` and `chat` metadata, so it knows its document.
 * - document-summaries (aggregate by `source.path`): the chunks of one document (every page of a
 *   PDF, a Word file, a note — each note has its own `note:<hash>` path) summarised together.
 * - collection (fold, in time order): the document summaries folded into one overview per scope.
 *
 * No eval defaults: the benchmarks (LoCoMo) are chats, not documents, so `--template all` leaves
 * it out.
 */
import { Pipeline } from "../sdk";
import type { PipelineSpec, SourceFormat } from "../spec";
import { modelOptions, sourceOptions, type PipelineTemplate, type TemplateOptions } from "./template";

export const DOCUMENT_CHUNK = { size: 1200, overlap: 150 } as const;

const documentSummary = `Summarize this document from its passages, in order: what it is, its main points, and every
name, number, date and decision it states. Clear prose, no markers.
{% if records.first.metadata.chat.title %}
Document: {{ records.first.metadata.chat.title }}{% endif %}

{% for r in records %}{{ r.content }}

{% endfor %}
## Summary
`;

const collection = `Keep an overview of a collection of documents: what the collection holds, each document in a
sentence or two, and how they relate. A later document updates what an earlier one said on the same subject.

Overview so far:
{% if state != empty %}{{ state }}{% else %}(nothing yet){% endif %}

Next document:
{{ record.content }}

## Overview
`;

export function documentsSpec(format: SourceFormat = "folder", options: TemplateOptions = {}): PipelineSpec {
  const llm = modelOptions(options);
  return new Pipeline("documents", { description: "Pages and notes → chunks → a summary per document → a summary of the collection." })
    .source("docs", sourceOptions(format, options))
    .split("chunks", { from: "docs", operator: { kind: "chunk", ...DOCUMENT_CHUNK } })
    .aggregate("document-summaries", { from: "chunks", key: "source.path", prompt: documentSummary, ...llm })
    .fold("collection", { from: "document-summaries", orderKey: "time.created_at", prompt: collection, maxStateTokens: 1500, ...llm })
    .output("overview", { from: "collection", surface: "projection" })
    .output("search", { from: ["chunks", "document-summaries", "collection"], surface: "search" })
    .toSpec();
}

export const documentsTemplate: PipelineTemplate = {
  id: "documents",
  title: "Documents",
  description:
    "For a folder of PDFs, Word files, web pages and notes: pages → 1,200-character chunks → a summary per document (its chunks grouped by file) → one overview of the collection. Search over chunks and summaries.",
  spec: documentsSpec,
};
