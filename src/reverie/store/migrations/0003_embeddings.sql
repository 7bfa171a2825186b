-- Embeddings. A vector is computed once per (model, content hash) and reused by every
-- unit with that text. Derived data, not cycle state: written outside cycle transactions, never
-- undone, and rebuildable from the episodes and revisions at any time.
CREATE TABLE embeddings (
    model TEXT NOT NULL,
    hash TEXT NOT NULL,
    vector BLOB NOT NULL, -- little-endian float32, L2-normalised
    PRIMARY KEY (model, hash)
) STRICT, WITHOUT ROWID;

-- What recall can find by vector: one row per episode or page claim and model. n orders rows so
-- an in-memory index loads a scope once and then only the rows past the last n it saw.
-- kind 'episode': ref = episode id, seq = its seq; kind 'claim': ref = page_id#revision#index.
CREATE TABLE vector_units (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    scope_key TEXT NOT NULL,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    ref TEXT NOT NULL,
    seq INTEGER,
    hash TEXT NOT NULL,
    UNIQUE (model, kind, ref)
) STRICT;
CREATE INDEX vector_units_scope ON vector_units(scope_key, model, n);
