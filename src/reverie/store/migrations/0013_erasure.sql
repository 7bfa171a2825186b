-- Erasure (docs/privacy.md): receipts, tombstones, the record of exports, and the admin right.
--
-- erasures: one receipt per applied erasure, written in the erasure's own transaction. request
-- is what was asked (a subject only as its sha256), counts the rows erased per store area,
-- details the episode ids, the pages re-derived and deleted, the scopes erased, the files
-- outside Reverie's reach, and `pending`: the file work still due after the commit (old
-- archive bundles to remove, mirrors to rewrite, the physical scrub). finished_at is set once
-- that is done; a receipt without it is completed by the next erasure or `forget --resume`.
CREATE TABLE erasures (
    id TEXT PRIMARY KEY,
    request_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    request TEXT NOT NULL,
    counts TEXT NOT NULL,
    details TEXT NOT NULL
) STRICT;
CREATE INDEX erasures_created ON erasures(created_at);

-- tombstones: every revision an erasure rewrote (hash_after: its new hash) or deleted with its
-- page (hash_after NULL). The one place a revision's earlier hash is kept; `verify` checks a
-- tombstoned revision against hash_after. No foreign keys: an erased scope leaves its
-- tombstones behind.
CREATE TABLE tombstones (
    erasure_id TEXT NOT NULL REFERENCES erasures(id),
    page_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    scope_key TEXT NOT NULL,
    hash_before TEXT NOT NULL,
    hash_after TEXT,
    created_at TEXT NOT NULL,
    reason TEXT NOT NULL,
    request_id TEXT NOT NULL,
    PRIMARY KEY (erasure_id, page_id, revision)
) STRICT;
CREATE INDEX tombstones_page ON tombstones(page_id, revision);

-- exports: where a scope's Markdown mirror or training rows were written, so an erasure can
-- rewrite the mirror at once and name the training files it cannot reach.
CREATE TABLE exports (
    path TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('markdown', 'claude-code', 'training')),
    scope_key TEXT NOT NULL,
    first_at TEXT NOT NULL,
    last_at TEXT NOT NULL,
    PRIMARY KEY (path, kind, scope_key)
) STRICT;

-- API keys gain the `admin` right (erasure over HTTP). SQLite changes a CHECK by rebuilding.
CREATE TABLE api_keys_next (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    tenant TEXT NOT NULL,
    agent TEXT,
    rights TEXT NOT NULL CHECK (rights IN ('read', 'write', 'admin')),
    salt TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
) STRICT;
INSERT INTO api_keys_next SELECT * FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_next RENAME TO api_keys;
