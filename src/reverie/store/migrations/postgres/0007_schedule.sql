-- PostgreSQL port of ../0007_schedule.sql: the scheduler's state and the cold tier's
-- index. The tables are here so `reverie migrate` copies them; the store methods that use them
-- (reverie.store.sqlite.schedule, reverie.store.sqlite.archive) are SQLite-only for now.
CREATE TABLE schedule_state (
    scope_key TEXT PRIMARY KEY REFERENCES scopes(scope_key),
    first_seen TIMESTAMPTZ NOT NULL,
    last_run TIMESTAMPTZ,
    last_success TIMESTAMPTZ,
    failures INTEGER NOT NULL DEFAULT 0,
    running_owner TEXT,
    running_since TIMESTAMPTZ,
    last_status TEXT,
    last_cycle_id TEXT,
    last_message TEXT,
    version INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE archive_bundles (
    hash TEXT PRIMARY KEY,
    scope_key TEXT NOT NULL REFERENCES scopes(scope_key),
    episodes INTEGER NOT NULL,
    bytes BIGINT NOT NULL,
    first_seq BIGINT NOT NULL,
    last_seq BIGINT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    restored_at TIMESTAMPTZ
);

CREATE TABLE archived_episodes (
    episode_id TEXT PRIMARY KEY REFERENCES episodes(id),
    bundle TEXT NOT NULL REFERENCES archive_bundles(hash),
    seq BIGINT NOT NULL
);
CREATE INDEX archived_episodes_bundle ON archived_episodes(bundle);
