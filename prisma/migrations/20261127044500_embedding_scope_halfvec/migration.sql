-- Exact KNN over one scope reads the scope's vectors from one index, not from the table: each
-- embedding of up to 1,000 dimensions carries a half-precision copy of its unit vector ("half",
-- generated), and the scope index carries it with the record id, so the scope's candidates are one
-- contiguous index range (at 1M records: 6.7k index tuples, about 8 MB) instead of 6.7k table pages
-- spread over the whole table. The half-precision distances only choose a pool; the pool is ranked
-- by the full-precision vectors (server/store/search-reads.ts, nearestInScope), so results do not
-- change. Larger embeddings (half is NULL) keep reading the table.

-- Adding a stored generated column rewrites the table; an HNSW index would be rebuilt with it
-- (many minutes at a million vectors). As in embedding_scope: the vector indexes go first, and the
-- indexing at the end of the next run rebuilds each in one pass (ensureVectorIndex).
-- synthex:manual begin
DO $$
DECLARE i record;
BEGIN
  FOR i IN SELECT indexname FROM pg_indexes WHERE tablename = 'Embedding' AND indexname LIKE 'Embedding\_hnsw\_%' LOOP
    EXECUTE format('DROP INDEX %I', i.indexname);
  END LOOP;
END $$;
-- synthex:manual end

-- synthex:manual begin
-- Unit length, so no component overflows half precision (cosine distance does not depend on length).
ALTER TABLE "Embedding" ADD COLUMN "half" halfvec GENERATED ALWAYS AS (CASE WHEN dimensions <= 1000 THEN l2_normalize(vector)::halfvec END) STORED;
DROP INDEX IF EXISTS "Embedding_scope_idx";
-- A scope's vectors of one model and step; the scopes under 'a:b' (LIKE 'a:b:%') are a range with
-- text_pattern_ops. INCLUDE: an index-only scan has all that exact KNN over a scope reads.
CREATE INDEX "Embedding_scope_idx" ON "Embedding" ("pipelineId", model, step, scope text_pattern_ops) INCLUDE ("workspaceId", "recordId", "half");
-- synthex:manual end
