-- synthex:manual begin
-- Hand-written SQL Prisma cannot express (kept out of generated diffs).
-- Full-text search over record content (server/search). Content is capped so a huge record can
-- never fail its insert with "string is too long for tsvector".
ALTER TABLE "Record" ADD COLUMN "searchVector" tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, left(content, 200000))) STORED;
CREATE INDEX "Record_searchVector_idx" ON "Record" USING gin ("searchVector");
-- Scope prefix filters: scope = 'a:b' OR scope LIKE 'a:b:%' (works whatever the database collation).
CREATE INDEX "Record_scope_pattern_idx" ON "Record" (scope text_pattern_ops);
-- synthex:manual end
