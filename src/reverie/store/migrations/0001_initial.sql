-- Episodes: immutable evidence. seq is the store-assigned order collection trusts.
CREATE TABLE scopes (
    scope_key TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    agent TEXT NOT NULL,
    user TEXT,
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE episodes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL REFERENCES scopes(scope_key),
    session_id TEXT,
    created_at TEXT NOT NULL,
    situation TEXT NOT NULL,
    action TEXT NOT NULL,
    outcome TEXT NOT NULL,
    outcome_details TEXT,
    error TEXT,
    lesson TEXT,
    importance INTEGER NOT NULL,
    category TEXT,
    tools TEXT NOT NULL,
    entities TEXT NOT NULL,
    metadata TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    consolidated_in TEXT,
    inserted_at TEXT NOT NULL
) STRICT;
CREATE INDEX episodes_scope_seq ON episodes(scope_key, seq);
CREATE INDEX episodes_marked ON episodes(consolidated_in) WHERE consolidated_in IS NOT NULL;

-- Contentless full-text index; rowid = episodes.seq. The scope column holds one opaque token so
-- the scope filter is part of the MATCH itself.
CREATE VIRTUAL TABLE episodes_fts USING fts5(scope, body, content='', tokenize='porter unicode61');

-- Pages: identity and the pointer to the current revision. Revisions are never updated.
CREATE TABLE pages (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL REFERENCES scopes(scope_key),
    topic_key TEXT NOT NULL,
    current_revision INTEGER NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (scope_key, topic_key)
) STRICT;

CREATE TABLE revisions (
    page_id TEXT NOT NULL REFERENCES pages(id),
    number INTEGER NOT NULL,
    hash TEXT NOT NULL,
    title TEXT NOT NULL,
    kind TEXT NOT NULL,
    claims TEXT NOT NULL,
    confidence REAL NOT NULL,
    status TEXT NOT NULL,
    valid_from TEXT,
    valid_until TEXT,
    superseded_by TEXT,
    cycle_id TEXT,
    author TEXT NOT NULL,
    reason TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (page_id, number)
) STRICT;

CREATE TABLE citations (
    page_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    episode_id TEXT NOT NULL REFERENCES episodes(id),
    PRIMARY KEY (page_id, revision, episode_id),
    FOREIGN KEY (page_id, revision) REFERENCES revisions(page_id, number)
) STRICT, WITHOUT ROWID;
CREATE INDEX citations_episode ON citations(episode_id);

-- rowid = pages.rid; holds the current revision's text only.
CREATE VIRTUAL TABLE pages_fts USING fts5(scope, status, title, body, tokenize='porter unicode61');

CREATE TABLE cycles (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL REFERENCES scopes(scope_key),
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    checkpoint_before INTEGER NOT NULL,
    checkpoint_after INTEGER NOT NULL,
    report TEXT NOT NULL,
    undone_at TEXT
) STRICT;
CREATE INDEX cycles_scope ON cycles(scope_key, n);

CREATE TABLE checkpoints (
    scope_key TEXT PRIMARY KEY REFERENCES scopes(scope_key),
    seq INTEGER NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
