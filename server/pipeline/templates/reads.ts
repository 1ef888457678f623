/**
 * Which source formats each template can read: a migration ("Try another architecture") binds a
 * template's sources to a pipeline's existing sources only where the template reads that format.
 * Conversation templates (turns, facts, sessions) need chat exports or ingested messages; a folder
 * of PDFs, Word files or notes is pages, not turns. Kept apart from the templates, like GOOD_FOR.
 */
import { SOURCE_FORMATS } from "../rules";
import type { SourceFormat } from "../spec";

/** Formats whose records are conversations (turns with speakers). */
export const CONVERSATION_FORMATS: readonly SourceFormat[] = ["chatgpt-export", "claude-export", "jsonl", "api"];

/** Templates that read any text (chunks, summaries); every other template reads conversations. */
const READS_ANY: ReadonlySet<string> = new Set(["rag-baseline", "documents", "blank"]);

/** The formats a template reads, and what they are in plain words. */
export function templateReads(templateId: string): { formats: readonly SourceFormat[]; what: string } {
  return READS_ANY.has(templateId) ? { formats: SOURCE_FORMATS, what: "any text" } : { formats: CONVERSATION_FORMATS, what: "conversations" };
}

export function templateReadsFormat(templateId: string, format: string): boolean {
  return (templateReads(templateId).formats as readonly string[]).includes(format);
}
