-- PostgreSQL port of ../0010_org.sql.
CREATE TABLE promotions (
    org_page_id TEXT PRIMARY KEY REFERENCES pages(id),
    source_page_id TEXT NOT NULL UNIQUE REFERENCES pages(id),
    source_scope TEXT NOT NULL REFERENCES scopes(scope_key),
    source_revision INTEGER NOT NULL,
    promoted_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    cycle_id TEXT NOT NULL
);
CREATE INDEX promotions_scope ON promotions(source_scope);
