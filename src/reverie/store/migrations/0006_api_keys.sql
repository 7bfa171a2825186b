-- API keys for the HTTP service. Only a salted HMAC of each secret is stored; the
-- token is shown once at creation. A revoked key keeps its row (revoked_at set) for the audit.
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    tenant TEXT NOT NULL,
    agent TEXT,
    rights TEXT NOT NULL CHECK (rights IN ('read', 'write')),
    salt TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
) STRICT;
