/**
 * Bulk-loaded embeddings for the benches: one random vector per record of a pipeline ($1 pipeline
 * id, $2 model), with the record's pipeline, step and scope as indexing stores them. KNN latency
 * does not depend on what vectors mean, and the offline embedder in JS would take hours at 1M.
 */
export function randomEmbeddingsSql(dims: number, where = "true"): string {
  return `INSERT INTO "Embedding" ("workspaceId", "recordId", "pipelineId", step, scope, model, dimensions, vector)
     SELECT r."workspaceId", r.id, r."pipelineId", r.step, r.scope, $2, ${dims}, v.vec::vector
     FROM "Record" r, LATERAL (SELECT array_agg(random()::real - 0.5) AS vec FROM generate_series(1, ${dims}) g WHERE r.id IS NOT NULL) v
     WHERE r."pipelineId" = $1 AND ${where}`;
}
