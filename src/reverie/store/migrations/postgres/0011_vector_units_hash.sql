-- PostgreSQL port of ../0011_vector_units_hash.sql: recall's vector_cosines looks a claim's
-- cosine up by (scope, model, content hash).
CREATE INDEX vector_units_hash ON vector_units(scope_key, model, hash);
