/** Record shapes of the Synapsis graph steps, shared by the steps that write them and the reads that search them. */

/** The structured data of a belief record (`metadata.custom.belief`, the Synapsis contract). */
export interface BeliefMeta {
  id: string;
  subject: string;
  subjectName: string;
  predicate: string;
  object: string;
  objectEntity: string | null;
  polarity: "positive" | "negative";
  validFrom: string | null;
  validTo: string | null;
  learnedAt: string | null;
  supersededBy: string | null;
  supersedes: string | null;
  status: "current" | "superseded";
  sources: string[];
  /** The sentence it was read from (the first source's). */
  evidence: string | null;
  /** The predicate holds one value at a time (a different later value supersedes). */
  functional: boolean;
  /** Co-mention edges: how many sources name both entities. */
  count?: number;
}
