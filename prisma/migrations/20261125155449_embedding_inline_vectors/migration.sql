-- synthex:manual begin
-- Vectors stay in the row up to a page: with the default (about 2 kB) a 512-dimension vector is
-- moved out of line, and every distance computed from the table (exact KNN over a scope, the
-- distance of each HNSW hit) fetched it back through the TOAST index. Rows stored from now on
-- (larger vectors, 3072 dimensions and up, still go out of line).
ALTER TABLE "Embedding" SET (toast_tuple_target = 8160);
-- synthex:manual end
