-- PostgreSQL port of ../0002_model_cache.sql.
CREATE TABLE model_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response JSONB NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
