-- The scheduler's memory and the cold tier's index.
--
-- schedule_state: one row per scope the scheduler has seen. last_run is when the last run started
-- (the anchor of the next slot), running_owner/running_since mark a run in progress: a row still
-- marked after its owner's lease ended is a crashed run, counted as a failure (backoff retry).
-- version grows with every write (a compare-and-set guard next to the lease).
CREATE TABLE schedule_state (
    scope_key TEXT PRIMARY KEY REFERENCES scopes(scope_key),
    first_seen TEXT NOT NULL,
    last_run TEXT,
    last_success TEXT,
    failures INTEGER NOT NULL DEFAULT 0,
    running_owner TEXT,
    running_since TEXT,
    last_status TEXT,
    last_cycle_id TEXT,
    last_message TEXT,
    version INTEGER NOT NULL DEFAULT 0
) STRICT;

-- archive_bundles: gzipped JSON-lines bundles of consolidated episodes, named by the sha256 of
-- their bytes, stored under <data dir>/archive/. archived_episodes: where each archived episode
-- lives; its row in episodes stays as a stub (id, seq, scope, created_at, fingerprint, mark) so
-- citations, idempotent appends and the checkpoint keep working.
CREATE TABLE archive_bundles (
    hash TEXT PRIMARY KEY,
    scope_key TEXT NOT NULL REFERENCES scopes(scope_key),
    episodes INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    restored_at TEXT
) STRICT;

CREATE TABLE archived_episodes (
    episode_id TEXT PRIMARY KEY REFERENCES episodes(id),
    bundle TEXT NOT NULL REFERENCES archive_bundles(hash),
    seq INTEGER NOT NULL
) STRICT;
CREATE INDEX archived_episodes_bundle ON archived_episodes(bundle);
