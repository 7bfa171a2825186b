-- PostgreSQL port of ../0006_api_keys.sql.
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    tenant TEXT NOT NULL,
    agent TEXT,
    rights TEXT NOT NULL CHECK (rights IN ('read', 'write')),
    salt TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ
);
