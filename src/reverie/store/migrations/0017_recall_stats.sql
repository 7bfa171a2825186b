-- Recall use per scope and hour: is memory being used?
--
-- One row per (scope, hour): how many recalls asked, how many of them packed at least one unit
-- (a hit), the units packed and the tokens used, summed. Counts only, never a query's text, so
-- nothing here can quote what an erasure removes; a scope's rows go with the scope. The engine
-- adds its recalls in small batches (reverie.store.usage), not one write per recall.
CREATE TABLE recall_stats (
    scope_key TEXT NOT NULL REFERENCES scopes(scope_key),
    hour TEXT NOT NULL,
    recalls INTEGER NOT NULL DEFAULT 0,
    hits INTEGER NOT NULL DEFAULT 0,
    units INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (scope_key, hour)
) STRICT;
