-- Review mode. `reverie dream --review` stores the changeset a cycle would
-- commit (page writes with the revisions they expect to replace, episode marks, the expected and
-- new checkpoint, the cycle record) as JSON instead of committing it. status: pending until a
-- person applies or rejects it; stale when applying found something it was built on moved.
-- settled_at/reason record when and why it left pending. At most one plan per scope is pending.
CREATE TABLE pending_plans (
    id TEXT PRIMARY KEY,
    scope_key TEXT NOT NULL REFERENCES scopes(scope_key),
    cycle_id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK (status IN ('pending', 'applied', 'rejected', 'stale')),
    created_at TEXT NOT NULL,
    settled_at TEXT,
    reason TEXT,
    changeset TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX pending_plans_one_per_scope ON pending_plans(scope_key)
    WHERE status = 'pending';
CREATE INDEX pending_plans_scope_created ON pending_plans(scope_key, created_at);
