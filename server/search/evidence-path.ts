/**
 * An evidence path as one line of text (CLI, explorer): each belief as "subject —predicate→ object",
 * in walking order, superseded ones marked with the time they ended. Pure: the explorer imports it.
 */
export interface EvidencePathLike {
  from: { name: string };
  edges: Array<{ subjectName: string; predicate: string; object: string; polarity?: string; status: string; validFrom: string | null; validTo: string | null }>;
}

export function describePath(path: EvidencePathLike): string {
  return path.edges
    .map((e) => {
      const when = e.status === "superseded" ? ` (superseded${e.validTo ? ` ${e.validTo.slice(0, 10)}` : ""})` : e.validFrom ? ` (since ${e.validFrom.slice(0, 10)})` : "";
      return `${e.subjectName || "?"} —${e.predicate}→ ${e.object}${when}`;
    })
    .join(" ⇒ ");
}
