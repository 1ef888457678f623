/**
 * A word-level diff of two versions of one record's content, for side-by-side views: each side
 * is a list of segments marked `same` or `changed` (removed on the left, added on the right).
 * Long contents are diffed by line so a diff stays fast.
 */
import { diffLines, diffWordsWithSpace } from "diff";

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

export function contentDiff(before: string, after: string): ContentDiff {
  const unit = before.length + after.length > WORD_DIFF_LIMIT ? "line" : "word";
  const changes = unit === "word" ? diffWordsWithSpace(before, after) : diffLines(before, after);
  const out: ContentDiff = { left: [], right: [], removed: 0, added: 0, unit };
  for (const c of changes) {
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
