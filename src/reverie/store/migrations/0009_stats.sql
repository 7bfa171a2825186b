-- Cumulative dream statistics per scope, kept apart from the checkpoint.
--
-- A committed cycle adds its row's deltas in the cycle's own transaction; a failed cycle (an
-- exception, or every group rejected so nothing was committed) has no transaction to join and is
-- added by a separate small write after the failure. Undo does not subtract: these count work
-- done (model calls and tokens spent), not what the brain holds now.
CREATE TABLE dream_stats (
    scope_key TEXT PRIMARY KEY REFERENCES scopes(scope_key),
    cycles_completed INTEGER NOT NULL DEFAULT 0,
    cycles_failed INTEGER NOT NULL DEFAULT 0,
    model_calls INTEGER NOT NULL DEFAULT 0,
    cache_hits INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    duration_s REAL NOT NULL DEFAULT 0,
    episodes INTEGER NOT NULL DEFAULT 0,
    last_completed_at TEXT,
    last_failed_at TEXT,
    last_error TEXT
) STRICT;
