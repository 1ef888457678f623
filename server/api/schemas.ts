/**
 * Output schemas of the procedures the REST API exposes (`/api/v1`, OpenAPI generated from them).
 * Each is checked against the service's own type (`satisfies z.ZodType<T>`), so a service that
 * changes its result fails the typecheck here instead of drifting from the published API.
 */
import { z } from "zod";
import type { LeavesResult, LineageResult, LineageTree, RecordDetail, RecordSummary } from "../search/provenance";
import type { SearchResult } from "../search/search";
import type { WalkResult } from "../search/walk";
import type { AnswerPacket } from "../services/ask";
import type { BeliefDetail, EntityList, EntityNeighbourhood, GraphBelief, GraphEntity, GraphInsight, InsightList } from "../services/graph";
import type { DeletedMemory, MemoryHistory } from "../services/memories";
import type { ProjectionResult } from "../services/projections";
import type { PurgeResult } from "../services/purge";
import { runStatsSchema } from "../store/runs";

const metadata = z.record(z.string(), z.unknown()).meta({ description: "Record metadata (time, chat, source, custom …)." });

export const recordSummarySchema = z
  .object({
    id: z.string(),
    step: z.string(),
    scope: z.string(),
    content: z.string(),
    metadata,
    createdAt: z.date(),
    sourceCount: z.number().int(),
    onBranch: z.boolean().nullable().meta({ description: "Whether the given branch shows the record; null when no branch was given." }),
  })
  .meta({ id: "RecordSummary" }) satisfies z.ZodType<RecordSummary>;

export const recordDetailSchema = recordSummarySchema
  .extend({
    pipelineId: z.string(),
    stepVersionHash: z.string(),
    materializationKey: z.string(),
    contentFingerprint: z.string(),
    audit: z.record(z.string(), z.unknown()).nullable(),
    runId: z.string().nullable(),
    childCount: z.number().int(),
    embeddings: z.array(z.object({ model: z.string(), dimensions: z.number().int() })),
  })
  .meta({ id: "RecordDetail" }) satisfies z.ZodType<RecordDetail>;

export const leavesResultSchema = z.object({
  leaves: z.array(recordSummarySchema.extend({ depth: z.number().int() })),
  truncated: z.boolean(),
  depthLimited: z.boolean(),
}) satisfies z.ZodType<LeavesResult>;

const lineageTreeSchema: z.ZodType<LineageTree> = z
  .object({
    id: z.string(),
    step: z.string(),
    preview: z.string(),
    repeated: z.boolean().optional(),
    redacted: z.boolean().optional().meta({ description: "A record outside the caller's scope: its place in the tree, no preview." }),
    get children() {
      return z.array(lineageTreeSchema);
    },
  })
  .meta({ id: "LineageTree" });

export const lineageResultSchema = z.object({
  root: z.string(),
  nodes: z.array(
    z.object({
      id: z.string(),
      step: z.string(),
      scope: z.string(),
      preview: z.string(),
      depth: z.number().int(),
      onBranch: z.boolean().nullable(),
      redacted: z.boolean().optional().meta({ description: "A record outside the caller's scope (an API key limited to a scope): its id, step and depth, no scope or preview." }),
    }),
  ),
  edges: z.array(z.object({ parent: z.string(), child: z.string(), position: z.number().int() })),
  tree: lineageTreeSchema,
  truncated: z.boolean(),
}) satisfies z.ZodType<LineageResult>;

const evidenceEdgeSchema = z.object({
  recordId: z.string().meta({ description: "The belief record (a record of the relations step)." }),
  beliefId: z.string(),
  subject: z.string().meta({ description: "Subject entity id." }),
  subjectName: z.string(),
  predicate: z.string(),
  object: z.string(),
  objectEntity: z.string().nullable().meta({ description: "Object entity id when the object is an entity (an edge between entities)." }),
  status: z.enum(["current", "superseded"]),
  validFrom: z.string().nullable(),
  validTo: z.string().nullable(),
  evidence: z.string().nullable().meta({ description: "The sentence the belief was read from, when kept." }),
});

export const evidencePathSchema = z
  .object({
    from: z.object({ entityId: z.string(), recordId: z.string(), name: z.string(), matched: z.string().meta({ description: "The question's words that named the entity." }) }),
    edges: z.array(evidenceEdgeSchema).meta({ description: "One or two beliefs walked, in order; the last one cites the source record." }),
    sourceId: z.string(),
    score: z.number(),
  })
  .meta({ id: "EvidencePath", description: "How graph retrieval reached a record: question entity → belief (→ entity → belief) → source record." });

export const questionEntitySchema = z
  .object({ entityId: z.string(), recordId: z.string(), name: z.string(), type: z.string(), scope: z.string(), matched: z.string() })
  .meta({ id: "QuestionEntity", description: "An entity the question names, found among the graph's entity records." });

export const searchResultSchema = z
  .object({
    mode: z.enum(["fts", "semantic", "hybrid", "graph", "exact"]),
    query: z.string(),
    steps: z.array(z.string()),
    dateRange: z.object({ from: z.string(), to: z.string(), text: z.string(), use: z.enum(["boost", "filter"]) }).optional(),
    hits: z.array(
      z.object({
        id: z.string(),
        step: z.string(),
        altitude: z.number().int().meta({ description: "0 for sources, 1 + the highest input's altitude for steps." }),
        scope: z.string(),
        content: z.string(),
        metadata,
        createdAt: z.date(),
        snippet: z.string(),
        highlights: z.array(z.tuple([z.number().int(), z.number().int()])).meta({ description: "[start, end) offsets of matched terms in the snippet." }),
        score: z.object({
          fts: z.number().nullable(),
          semantic: z.number().nullable(),
          graph: z.number().nullable().optional().meta({ description: "Mode graph: the best evidence path's score (0..1); null when the graph did not reach the record." }),
          fused: z.number(),
        }),
        sourceCount: z.number().int(),
        lowerHits: z.array(z.object({ id: z.string(), step: z.string(), altitude: z.number().int() })),
        evidencePaths: z.array(evidencePathSchema).optional().meta({ description: "Mode graph: how the graph reached this record, best first." }),
      }),
    ),
    graph: z
      .object({ entities: z.array(questionEntitySchema), unknownNames: z.array(z.string()), beliefsRead: z.number().int() })
      .optional()
      .meta({ description: "Mode graph: the question's entities found in the graph, and capitalized names it uses that the graph does not know." }),
    notice: z.string().optional(),
    noMatch: z.boolean().meta({ description: "True when no record clears the mode's relevance floor: nothing in this memory matches the query (hits is empty)." }),
    floor: z
      .object({
        mode: z.enum(["fts", "semantic", "hybrid", "graph", "exact"]),
        semantic: z.number().nullable().meta({ description: "Least cosine similarity of a record found only by meaning (default 0.2; fusion.semanticFloor sets it); null where meaning is not used." }),
        minScore: z.number().nullable(),
        rule: z.string().meta({ description: "What a record must satisfy to be a hit in this mode." }),
      })
      .meta({ description: "The relevance floor this search applied." }),
  })
  .meta({ id: "SearchResult" }) satisfies z.ZodType<SearchResult>;

export const projectionResultSchema = z
  .object({
    output: z.string(),
    steps: z.array(z.string()),
    blocks: z.array(
      z.object({
        scope: z.string(),
        record: z.object({ id: z.string(), step: z.string(), scope: z.string(), content: z.string(), metadata, createdAt: z.date() }),
        text: z.string(),
      }),
    ),
    text: z.string().meta({ description: "Every block joined: what an agent puts in its context." }),
  })
  .meta({ id: "Projection" }) satisfies z.ZodType<ProjectionResult>;

const walkNodeShape = {
  id: z.string(),
  step: z.string(),
  scope: z.string(),
  content: z.string(),
  metadata,
  score: z.number(),
  parentId: z.string().nullable().meta({ description: "The record one level up this one was reached from." }),
};

export const walkResultSchema = z
  .object({
    query: z.string(),
    path: z.array(z.string()).meta({ description: "The steps walked, top first." }),
    levels: z.array(z.object({ step: z.string(), nodes: z.array(z.object(walkNodeShape)) })),
    hits: z.array(
      z.object({
        ...walkNodeShape,
        sources: z.array(z.object({ id: z.string(), step: z.string(), content: z.string(), metadata })),
      }),
    ),
    fallback: z
      .object({ step: z.string(), confidence: z.number(), reason: z.string() })
      .optional()
      .meta({ description: "Present when the walk's confidence was low and the hits are the lowest step ranked flat." }),
  })
  .meta({ id: "WalkResult" }) satisfies z.ZodType<WalkResult>;

export const runSchema = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    pipelineId: z.string(),
    branchId: z.string(),
    versionId: z.string(),
    status: z.string().meta({ description: "queued, running, completed, failed or cancelled." }),
    options: z.unknown(),
    stats: runStatsSchema,
    error: z.string().nullable(),
    cancelRequested: z.boolean(),
    triggeredBy: z.string().nullable(),
    createdAt: z.date(),
    startedAt: z.date().nullable(),
    finishedAt: z.date().nullable(),
  })
  .meta({ id: "Run" });

export const runDetailSchema = runSchema
  .extend({
    branchName: z.string(),
    failures: z.array(
      z.object({
        id: z.string(),
        workspaceId: z.string(),
        runId: z.string(),
        step: z.string(),
        inputKey: z.string(),
        error: z.string(),
        attempts: z.number().int(),
        rawResponse: z.string().nullable(),
        createdAt: z.date(),
      }),
    ),
  })
  .meta({ id: "RunDetail" });

export const pipelineSummarySchema = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    agent: z.string(),
    description: z.string(),
    createdAt: z.date(),
    records: z.number().int(),
    lastRun: z.object({ id: z.string(), pipelineId: z.string(), status: z.string(), createdAt: z.date() }).nullable(),
  })
  .meta({ id: "PipelineSummary" });

const memoryEvent = z.enum(["ADD", "UPDATE", "DELETE", "NONE", "RESTORE"]);
const memoryStatus = z.enum(["active", "deleted"]);

export const memoryHistorySchema = z
  .object({
    memoryId: z.string(),
    pipelineId: z.string(),
    branch: z.string(),
    step: z.string(),
    scope: z.string(),
    status: z.enum(["active", "deleted", "absent"]).meta({ description: "On this branch: current, deleted (restorable) or not shown." }),
    headRecordId: z.string().nullable(),
    restorable: z.boolean(),
    versions: z
      .array(
        z.object({
          recordId: z.string(),
          version: z.number().int(),
          event: memoryEvent,
          status: memoryStatus,
          content: z.string(),
          reason: z.string(),
          at: z.string().meta({ description: "When it changed: the time of the fact that changed it, else when the version was stored." }),
          fact: z.object({ id: z.string(), content: z.string(), step: z.string() }).nullable(),
          by: z.string().nullable(),
        }),
      )
      .meta({ description: "Every version of the memory, newest first." }),
  })
  .meta({ id: "MemoryHistory" }) satisfies z.ZodType<MemoryHistory>;

export const deletedMemorySchema = z
  .object({ recordId: z.string(), memoryId: z.string(), scope: z.string(), content: z.string(), deletedAt: z.string(), reason: z.string() })
  .meta({ id: "DeletedMemory" }) satisfies z.ZodType<DeletedMemory>;

export const answerPacketSchema = z
  .object({
    question: z.string(),
    answer: z.string().nullable().meta({ description: "The answer with [n] citations of the evidence; null when the packet abstains." }),
    abstained: z.boolean(),
    uncertaintyReason: z.string().nullable(),
    kind: z.enum(["extractive", "generated"]),
    model: z.string(),
    label: z.string().meta({ description: "How to read the answer (an extractive answer is a quoted sentence)." }),
    citations: z.array(z.object({ ref: z.number().int(), recordId: z.string(), step: z.string() })),
    mode: z.enum(["fts", "semantic", "hybrid", "graph"]).meta({ description: "How the evidence was retrieved (graph by default on pipelines with an entity graph)." }),
    graph: z
      .object({ entities: z.array(z.string()), reached: z.array(z.string()), missing: z.array(z.string()), coverage: z.number() })
      .optional()
      .meta({ description: "Mode graph: the question's entities and which of them the evidence reaches (what the offline critic checks)." }),
    confidence: z.object({
      score: z.number(),
      level: z.enum(["high", "medium", "low", "none"]),
      factors: z.object({ top: z.number(), agreement: z.number(), count: z.number(), recency: z.number() }),
    }),
    critic: z.object({ verdict: z.enum(["APPROVE", "REVISE", "REJECT"]), reason: z.string(), model: z.string(), revised: z.boolean() }),
    evidence: z.array(
      z.object({
        ref: z.number().int(),
        id: z.string(),
        step: z.string(),
        scope: z.string(),
        snippet: z.string(),
        content: z.string(),
        time: z.string().nullable(),
        relevance: z.number(),
        sources: z.array(z.object({ id: z.string(), step: z.string(), preview: z.string() })),
        paths: z.array(evidencePathSchema).optional().meta({ description: "Mode graph: how the graph reached this record, best first." }),
      }),
    ),
    noMatch: z.boolean().meta({ description: "True when no record clears search's relevance floor: nothing in this memory matches the question." }),
    usage: z.object({ calls: z.number().int(), tokensIn: z.number(), tokensOut: z.number(), costUsd: z.number() }),
  })
  .meta({ id: "AnswerPacket" }) satisfies z.ZodType<AnswerPacket>;

export const purgeResultSchema = z
  .object({
    dryRun: z.boolean(),
    auditId: z.string().nullable().meta({ description: "The audit entry of a real purge; null for a dry run." }),
    roots: z.array(z.string()),
    records: z.array(z.object({ id: z.string(), step: z.string(), scope: z.string(), depth: z.number().int() })).meta({ description: "Every record removed: the roots (depth 0) and all derived from them." }),
    byStep: z.record(z.string(), z.number().int()),
    pointers: z.record(z.string(), z.number().int()).meta({ description: "Branch pointers removed, per branch." }),
    embeddings: z.number().int(),
    postings: z.number().int(),
    searchDocs: z.number().int(),
    edges: z.number().int(),
    projectionStates: z.number().int(),
    foldCheckpoints: z.number().int(),
    ingestSessions: z.number().int(),
    ingestMessages: z.number().int(),
    copies: z
      .object({
        idempotencyResponses: z.number().int().meta({ description: "Idempotency-Key answers kept for the workspace's callers, replaced by a 410 tombstone (a replay is never the purged answer, nor run again)." }),
        evalCases: z.number().int().meta({ description: "Eval cases whose retrieved previews and answer quoted a purged record, or whose question came from purged data (its gold evidence or the logged query it was labelled from; question, expected answer and answer): replaced (ids and scores stay)." }),
        runFailures: z.number().int().meta({ description: "Run failures about a purged record or its scope: error and raw model response replaced." }),
        webhookDeliveries: z.number().int().meta({ description: "Webhook deliveries (queued or sent) of a purged record or scope: deleted." }),
        questions: z.number().int().meta({ description: "Team question-set questions answered by a purged record: the ids go, and a question left with none goes." }),
      })
      .meta({ description: "Copies of the purged text outside the records, per kind." }),
  })
  .meta({ id: "PurgeResult" }) satisfies z.ZodType<PurgeResult>;

// The entity graph (server/services/graph.ts) -------------------------------------------------

const isoTime = z.string().nullable();

export const graphEntitySchema = z
  .object({
    id: z.string().meta({ description: "Stable entity id (ent_…), unique per scope." }),
    recordId: z.string().meta({ description: "The entities-step record that holds it (open its sources with /records/{id}/sources)." }),
    step: z.string(),
    scope: z.string(),
    name: z.string().meta({ description: "Canonical name." }),
    aliases: z.array(z.string()).meta({ description: "Other surface forms merged into it." }),
    type: z.enum(["person", "place", "organization", "thing", "event", "other"]),
    mentions: z.number(),
    firstSeen: isoTime,
    lastSeen: isoTime,
    card: z.string().meta({ description: "The entity's one-line card (the record's content)." }),
  })
  .meta({ id: "GraphEntity" }) satisfies z.ZodType<GraphEntity>;

export const graphBeliefSchema = z
  .object({
    id: z.string().meta({ description: "Belief id (bel_…)." }),
    recordId: z.string().meta({ description: "The relations-step record that holds it." }),
    step: z.string(),
    scope: z.string(),
    subject: z.string().meta({ description: "Entity id of the subject." }),
    subjectName: z.string(),
    predicate: z.string(),
    object: z.string(),
    objectEntity: z.string().nullable().meta({ description: "Entity id of the object when it is an entity (an edge between entities)." }),
    polarity: z.enum(["positive", "negative"]),
    validFrom: isoTime.meta({ description: "When it became true (valid time)." }),
    validTo: isoTime.meta({ description: "When a later belief ended it; null while current." }),
    learnedAt: isoTime.meta({ description: "When it was learned (transaction time)." }),
    supersededBy: z.string().nullable(),
    supersedes: z.string().nullable(),
    status: z.enum(["current", "superseded"]),
    sources: z.array(z.string()).meta({ description: "Record ids of the source turns or chunks." }),
    evidence: z.string().nullable().meta({ description: "The sentence it was read from, when kept." }),
    count: z.number().int().nullable().meta({ description: "Co-mentions: how many sources name both entities." }),
    text: z.string().meta({ description: "The belief as a sentence." }),
  })
  .meta({ id: "GraphBelief" }) satisfies z.ZodType<GraphBelief>;

const graphStepsSchema = z.object({ entities: z.array(z.string()), relations: z.array(z.string()), insights: z.array(z.string()) });

export const entityListSchema = z
  .object({ entities: z.array(graphEntitySchema), total: z.number().int(), steps: graphStepsSchema })
  .meta({ id: "EntityList" }) satisfies z.ZodType<EntityList>;

export const entityNeighbourhoodSchema = z
  .object({
    entity: graphEntitySchema,
    hops: z.number().int(),
    nodes: z.array(
      z.object({
        id: z.string().meta({ description: "An entity id, or value:<text> for a literal object." }),
        kind: z.enum(["entity", "value"]),
        label: z.string(),
        depth: z.number().int(),
        entity: graphEntitySchema.nullable(),
      }),
    ),
    edges: z.array(
      z.object({
        id: z.string(),
        source: z.string(),
        target: z.string(),
        predicate: z.string(),
        count: z.number().int(),
        current: z.number().int(),
        weight: z.number().meta({ description: "Sources behind the edge (a co-mention edge counts the sources naming both)." }),
        beliefIds: z.array(z.string()),
      }),
    ),
    beliefs: z.array(graphBeliefSchema).meta({ description: "The beliefs the edges list." }),
    truncated: z.boolean(),
    timeline: z.array(graphBeliefSchema).meta({ description: "The entity's beliefs over time, oldest valid time first (co-mentions left out)." }),
    timelineTotal: z.number().int(),
  })
  .meta({ id: "EntityNeighbourhood" }) satisfies z.ZodType<EntityNeighbourhood>;

export const beliefDetailSchema = z
  .object({ belief: graphBeliefSchema, sources: z.array(recordSummarySchema), supersedes: graphBeliefSchema.nullable(), supersededBy: graphBeliefSchema.nullable() })
  .meta({ id: "BeliefDetail" }) satisfies z.ZodType<BeliefDetail>;

export const graphInsightSchema = z
  .object({
    recordId: z.string(),
    step: z.string(),
    scope: z.string(),
    kind: z.enum(["connection", "digest", "contradiction"]),
    title: z.string(),
    text: z.string(),
    entities: z.array(z.string()),
    entityRefs: z.array(z.object({ id: z.string(), name: z.string() })),
    beliefs: z.array(z.string()),
    period: z.string().nullable(),
    detectedAt: isoTime,
  })
  .meta({ id: "GraphInsight" }) satisfies z.ZodType<GraphInsight>;

export const insightListSchema = z
  .object({ insights: z.array(graphInsightSchema), total: z.number().int(), steps: z.array(z.string()) })
  .meta({ id: "InsightList" }) satisfies z.ZodType<InsightList>;
