-- A scope's vector units by content hash, so a store that answers vector queries
-- itself (PostgreSQL) finds the cosine of a recalled claim by its text's hash within the scope
-- without scanning the scope's units. Kept in SQLite for parity of schemas.
CREATE INDEX vector_units_hash ON vector_units(scope_key, model, hash);
