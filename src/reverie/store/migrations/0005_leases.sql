-- Leases: at most one worker dreams a scope at a time. A lease is one row per scope;
-- taking it is a compare-and-set inside BEGIN IMMEDIATE: free, expired (the holder crashed or
-- stalled past expires_at) or already ours. token grows by one on every new holder, so a commit
-- made under a lease that was since taken over is refused (a fencing token).
CREATE TABLE leases (
    scope_key TEXT PRIMARY KEY REFERENCES scopes(scope_key),
    owner TEXT NOT NULL,
    token INTEGER NOT NULL,
    acquired_at TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
) STRICT;
CREATE INDEX leases_owner ON leases(owner);
