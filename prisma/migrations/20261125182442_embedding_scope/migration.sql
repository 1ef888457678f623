-- Each embedding carries its record's pipeline, step and scope (immutable), so exact KNN over a
-- scope reads the scope's vectors through one index instead of probing "Record", "BranchPointer"
-- and "Embedding" once per candidate (at 1M records: 6,734 candidates, 61k buffers, 113 ms).

-- The backfill rewrites every embedding row. An HNSW index would take each new row version as an
-- insert (hours at a million vectors), so the vector indexes go first; the indexing at the end of
-- the next run rebuilds each in one pass (ensureVectorIndex). Until then semantic search scans.
-- synthex:manual begin
DO $$
DECLARE i record;
BEGIN
  FOR i IN SELECT indexname FROM pg_indexes WHERE tablename = 'Embedding' AND indexname LIKE 'Embedding\_hnsw\_%' LOOP
    EXECUTE format('DROP INDEX %I', i.indexname);
  END LOOP;
END $$;
-- synthex:manual end

-- AlterTable
ALTER TABLE "Embedding" ADD COLUMN     "pipelineId" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "scope" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "step" TEXT NOT NULL DEFAULT '';

UPDATE "Embedding" e SET "pipelineId" = r."pipelineId", step = r.step, scope = r.scope
FROM "Record" r WHERE r.id = e."recordId";

ALTER TABLE "Embedding" ALTER COLUMN "pipelineId" DROP DEFAULT,
ALTER COLUMN "scope" DROP DEFAULT,
ALTER COLUMN "step" DROP DEFAULT;

-- synthex:manual begin
-- A scope's vectors of one model and step; the scopes under 'a:b' (LIKE 'a:b:%') are a range with text_pattern_ops.
CREATE INDEX "Embedding_scope_idx" ON "Embedding" ("pipelineId", model, step, scope text_pattern_ops);
-- synthex:manual end
