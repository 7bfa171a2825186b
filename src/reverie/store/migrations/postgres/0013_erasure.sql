-- PostgreSQL port of ../0013_erasure.sql.
CREATE TABLE erasures (
    id TEXT PRIMARY KEY,
    request_id TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,
    request JSONB NOT NULL,
    counts JSONB NOT NULL,
    details JSONB NOT NULL
);
CREATE INDEX erasures_created ON erasures(created_at);

CREATE TABLE tombstones (
    erasure_id TEXT NOT NULL REFERENCES erasures(id),
    page_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    scope_key TEXT NOT NULL,
    hash_before TEXT NOT NULL,
    hash_after TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    reason TEXT NOT NULL,
    request_id TEXT NOT NULL,
    PRIMARY KEY (erasure_id, page_id, revision)
);
CREATE INDEX tombstones_page ON tombstones(page_id, revision);

CREATE TABLE exports (
    path TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('markdown', 'claude-code', 'training')),
    scope_key TEXT NOT NULL,
    first_at TIMESTAMPTZ NOT NULL,
    last_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (path, kind, scope_key)
);

ALTER TABLE api_keys DROP CONSTRAINT api_keys_rights_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_rights_check
    CHECK (rights IN ('read', 'write', 'admin'));
