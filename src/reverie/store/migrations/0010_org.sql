-- Promotion of reinforced pages to the tenant's org brain (scope "tenant/_org").
--
-- One row per promoted page: the org copy, the agent page it copies (attribution), and the
-- source revision it was last synced from — a cycle of the source's scope compares it with the
-- source's current revision and writes a new org revision when they differ. Written only by a
-- cycle's commit, in the cycle's transaction, next to the org page's revision.
CREATE TABLE promotions (
    org_page_id TEXT PRIMARY KEY REFERENCES pages(id),
    source_page_id TEXT NOT NULL UNIQUE REFERENCES pages(id),
    source_scope TEXT NOT NULL REFERENCES scopes(scope_key),
    source_revision INTEGER NOT NULL,
    promoted_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    cycle_id TEXT NOT NULL
) STRICT;
CREATE INDEX promotions_scope ON promotions(source_scope);
