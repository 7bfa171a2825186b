-- PostgreSQL port of ../0008_pending_plans.sql: plans held for review.
CREATE TABLE pending_plans (
    id TEXT PRIMARY KEY,
    scope_key TEXT NOT NULL REFERENCES scopes(scope_key),
    cycle_id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK (status IN ('pending', 'applied', 'rejected', 'stale')),
    created_at TIMESTAMPTZ NOT NULL,
    settled_at TIMESTAMPTZ,
    reason TEXT,
    changeset JSONB NOT NULL
);
CREATE UNIQUE INDEX pending_plans_one_per_scope ON pending_plans(scope_key)
    WHERE status = 'pending';
CREATE INDEX pending_plans_scope_created ON pending_plans(scope_key, created_at);
