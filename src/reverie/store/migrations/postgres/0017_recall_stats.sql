-- PostgreSQL port of ../0017_recall_stats.sql.
CREATE TABLE recall_stats (
    scope_key TEXT NOT NULL REFERENCES scopes(scope_key),
    hour TIMESTAMPTZ NOT NULL,
    recalls BIGINT NOT NULL DEFAULT 0,
    hits BIGINT NOT NULL DEFAULT 0,
    units BIGINT NOT NULL DEFAULT 0,
    tokens BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (scope_key, hour)
);
