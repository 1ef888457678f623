-- AlterTable
ALTER TABLE "SearchPosting" ADD COLUMN     "impact" DOUBLE PRECISION NOT NULL DEFAULT 0;

-- Postings indexed before this migration: their impact from the step's statistics (BM25 k1 = 1.2, b = 0.75).
UPDATE "SearchPosting" p
SET impact = p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * p.len / GREATEST(s."avgLength", 1)))
FROM "SearchStepStat" s
WHERE s."branchId" = p."branchId" AND s.step = p.step;

-- synthex:manual begin
-- A term's postings best first (reads of very common terms stop after their top records).
CREATE INDEX "SearchPosting_impact_idx" ON "SearchPosting" ("branchId", step, term, impact DESC);
-- A term's postings in one scope (scope = 'a:b'; the scopes under it, LIKE 'a:b:%', are a range with
-- text_pattern_ops). Scope before term: a probe for one record's posting (branch, step, term,
-- record) can only be served well by the primary key, whatever the statistics say.
CREATE INDEX "SearchPosting_scope_idx" ON "SearchPosting" ("branchId", step, scope text_pattern_ops, term);
-- synthex:manual end
