-- PostgreSQL port of ../0009_stats.sql.
CREATE TABLE dream_stats (
    scope_key TEXT PRIMARY KEY REFERENCES scopes(scope_key),
    cycles_completed BIGINT NOT NULL DEFAULT 0,
    cycles_failed BIGINT NOT NULL DEFAULT 0,
    model_calls BIGINT NOT NULL DEFAULT 0,
    cache_hits BIGINT NOT NULL DEFAULT 0,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    duration_s DOUBLE PRECISION NOT NULL DEFAULT 0,
    episodes BIGINT NOT NULL DEFAULT 0,
    last_completed_at TIMESTAMPTZ,
    last_failed_at TIMESTAMPTZ,
    last_error TEXT
);
