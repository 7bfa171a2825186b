-- Nothing: the parts of SQLite's episode full-text index (reverie.store.sqlite.text) answer
-- FTS5's cost of counting a phrase's documents over the whole table. PostgreSQL's tsvector
-- column is ranked by ts_rank, which counts nothing across the table.
SELECT 1;
