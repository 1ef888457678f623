/**
 * A word-level diff of two versions of one record's content, for side-by-side views: each side
 * is a list of segments marked `same` or `changed` (removed on the left, added on the right);
 * and the same diff inline (a prompt between two pipeline versions). Long texts are diffed by
 * line so a diff stays fast.
 */
import { diffLines, diffWordsWithSpace, type Change } from "diff";

export interface DiffSegment {
  text: string;
  changed: boolean;
}

export interface ContentDiff {
  left: DiffSegment[];
  right: DiffSegment[];
  /** Characters removed from the left and added on the right. */
  removed: number;
  added: number;
  unit: "word" | "line";
}

const WORD_DIFF_LIMIT = 20_000;

function changes(before: string, after: string): { unit: "word" | "line"; changes: Change[] } {
  const unit = before.length + after.length > WORD_DIFF_LIMIT ? "line" : "word";
  return { unit, changes: unit === "word" ? diffWordsWithSpace(before, after) : diffLines(before, after) };
}

export function contentDiff(before: string, after: string): ContentDiff {
  const { unit, changes: list } = changes(before, after);
  const out: ContentDiff = { left: [], right: [], removed: 0, added: 0, unit };
  for (const c of list) {
    if (c.removed) {
      out.left.push({ text: c.value, changed: true });
      out.removed += c.value.length;
    } else if (c.added) {
      out.right.push({ text: c.value, changed: true });
      out.added += c.value.length;
    } else {
      out.left.push({ text: c.value, changed: false });
      out.right.push({ text: c.value, changed: false });
    }
  }
  return out;
}

export interface InlineSegment {
  text: string;
  op: "same" | "added" | "removed";
}

export interface InlineDiff {
  segments: InlineSegment[];
  removed: number;
  added: number;
  unit: "word" | "line";
}

/** The diff as one text: unchanged, removed and added segments in reading order. */
export function inlineDiff(before: string, after: string): InlineDiff {
  const { unit, changes: list } = changes(before, after);
  const out: InlineDiff = { segments: [], removed: 0, added: 0, unit };
  for (const c of list) {
    const op = c.removed ? "removed" : c.added ? "added" : "same";
    if (op === "removed") out.removed += c.value.length;
    if (op === "added") out.added += c.value.length;
    out.segments.push({ text: c.value, op });
  }
  return out;
}
