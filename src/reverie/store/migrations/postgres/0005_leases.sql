-- PostgreSQL port of ../0005_leases.sql. Claims lock candidate scope rows with
-- SELECT ... FOR UPDATE SKIP LOCKED, so concurrent workers never wait on each other.
CREATE TABLE leases (
    scope_key TEXT PRIMARY KEY REFERENCES scopes(scope_key),
    owner TEXT NOT NULL,
    token BIGINT NOT NULL,
    acquired_at TIMESTAMPTZ NOT NULL,
    heartbeat_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX leases_owner ON leases(owner);
