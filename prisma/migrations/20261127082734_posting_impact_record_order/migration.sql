-- synthex:manual begin
-- A term's postings best first, equal impacts by record id: a read that stops after a term's top
-- `lim` postings stops there exactly, the same records on every database. Ordered by impact alone
-- the read had to take every posting tied with the last (FETCH … WITH TIES), and in a corpus of
-- same-shaped records a common term's impacts tie by the thousand (100k records: ~3,800 postings
-- read per list where 333 were asked for). tf and len are carried so the read is index-only.
DROP INDEX IF EXISTS "SearchPosting_impact_idx";
CREATE INDEX "SearchPosting_impact_idx" ON "SearchPosting" ("branchId", step, term, impact DESC, "recordId") INCLUDE (tf, len);
-- synthex:manual end
