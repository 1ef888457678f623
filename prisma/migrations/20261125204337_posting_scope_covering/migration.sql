-- The scope index of the BM25 postings carries what scoring reads (record, tf, len): a scoped
-- query reads a term's postings in the scope index-only, where it visited the heap once per
-- posting (at 1M records: 2,281 buffers for a two-word query in one scope, now 58).
-- synthex:manual begin
DROP INDEX IF EXISTS "SearchPosting_scope_idx";
CREATE INDEX "SearchPosting_scope_idx" ON "SearchPosting" ("branchId", step, scope text_pattern_ops, term) INCLUDE ("recordId", tf, len);
-- synthex:manual end
