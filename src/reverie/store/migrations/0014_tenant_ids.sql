-- Episode ids are their tenant's own (docs/store.md, "Identity"): two tenants may both store
-- an episode `b1`. An episode carries its scope's tenant (`tenant`, fixed at insert: a scope
-- never changes, and the foreign key to scopes(scope_key, tenant) keeps the copy right) and is
-- unique on (tenant, id). What points at an episode by id names the tenant too: a citation
-- (the page's tenant: an org page `tenant/_org` cites episodes of its own tenant's scopes) and
-- an archive index row. Vector units of episodes are unique within their scope.
--
-- SQLite drops a column's UNIQUE only by rebuilding the table: its documented twelve-step
-- procedure, which the store runs with foreign keys off and checks before it commits
-- (reverie.store.sqlite). `seq` values are copied as they are, so the contentless full-text
-- rows (rowid = seq), checkpoints, marks and archive bounds still name the same episodes, and
-- each AUTOINCREMENT counter is carried over: a seq erased at the top is never handed out again.
CREATE UNIQUE INDEX scopes_tenant ON scopes(scope_key, tenant);

CREATE TABLE episodes_next (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    scope_key TEXT NOT NULL,
    tenant TEXT NOT NULL,
    session_id TEXT,
    created_at TEXT NOT NULL,
    situation TEXT NOT NULL,
    action TEXT NOT NULL,
    outcome TEXT NOT NULL,
    outcome_details TEXT,
    error TEXT,
    lesson TEXT,
    importance INTEGER NOT NULL,
    category TEXT,
    tools TEXT NOT NULL,
    entities TEXT NOT NULL,
    metadata TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    consolidated_in TEXT,
    inserted_at TEXT NOT NULL,
    UNIQUE (tenant, id),
    FOREIGN KEY (scope_key, tenant) REFERENCES scopes(scope_key, tenant)
) STRICT;
INSERT INTO episodes_next (seq, id, scope_key, tenant, session_id, created_at, situation,
    action, outcome, outcome_details, error, lesson, importance, category, tools, entities,
    metadata, fingerprint, consolidated_in, inserted_at)
SELECT e.seq, e.id, e.scope_key, (SELECT s.tenant FROM scopes s WHERE s.scope_key = e.scope_key),
    e.session_id, e.created_at, e.situation, e.action, e.outcome, e.outcome_details, e.error,
    e.lesson, e.importance, e.category, e.tools, e.entities, e.metadata, e.fingerprint,
    e.consolidated_in, e.inserted_at
FROM episodes e ORDER BY e.seq;

-- A citation and an archive row take the tenant of the episode they named: ids were unique
-- across tenants until now, so the old id alone resolves it.
-- tenant comes after the key's columns: SQLite 3.40's integrity_check misreads a NOT NULL column
-- declared between the primary key's columns of a WITHOUT ROWID table as NULL.
CREATE TABLE citations_next (
    page_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    episode_id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    PRIMARY KEY (page_id, revision, episode_id),
    FOREIGN KEY (page_id, revision) REFERENCES revisions(page_id, number),
    FOREIGN KEY (tenant, episode_id) REFERENCES episodes(tenant, id)
) STRICT, WITHOUT ROWID;
INSERT INTO citations_next (page_id, revision, episode_id, tenant)
SELECT c.page_id, c.revision, c.episode_id, (SELECT s.tenant FROM episodes e JOIN scopes s
    ON s.scope_key = e.scope_key WHERE e.id = c.episode_id)
FROM citations c;

CREATE TABLE archived_episodes_next (
    tenant TEXT NOT NULL,
    episode_id TEXT NOT NULL,
    bundle TEXT NOT NULL REFERENCES archive_bundles(hash),
    seq INTEGER NOT NULL,
    PRIMARY KEY (tenant, episode_id),
    FOREIGN KEY (tenant, episode_id) REFERENCES episodes(tenant, id)
) STRICT;
INSERT INTO archived_episodes_next (tenant, episode_id, bundle, seq)
SELECT (SELECT s.tenant FROM episodes e JOIN scopes s ON s.scope_key = e.scope_key
    WHERE e.id = a.episode_id), a.episode_id, a.bundle, a.seq
FROM archived_episodes a;

CREATE TABLE vector_units_next (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    scope_key TEXT NOT NULL,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    ref TEXT NOT NULL,
    seq INTEGER,
    hash TEXT NOT NULL,
    UNIQUE (scope_key, model, kind, ref)
) STRICT;
INSERT INTO vector_units_next (n, scope_key, model, kind, ref, seq, hash)
SELECT n, scope_key, model, kind, ref, seq, hash FROM vector_units ORDER BY n;

-- The counters: the old tables' values, whatever rows the copies got.
DELETE FROM sqlite_sequence WHERE name IN ('episodes_next', 'vector_units_next');
INSERT INTO sqlite_sequence (name, seq)
SELECT name || '_next', seq FROM sqlite_sequence WHERE name IN ('episodes', 'vector_units');

DROP TABLE citations;
DROP TABLE archived_episodes;
DROP TABLE episodes;
DROP TABLE vector_units;
ALTER TABLE episodes_next RENAME TO episodes;
ALTER TABLE citations_next RENAME TO citations;
ALTER TABLE archived_episodes_next RENAME TO archived_episodes;
ALTER TABLE vector_units_next RENAME TO vector_units;

CREATE INDEX episodes_scope_seq ON episodes(scope_key, seq);
CREATE INDEX episodes_marked ON episodes(consolidated_in) WHERE consolidated_in IS NOT NULL;
CREATE INDEX citations_episode ON citations(tenant, episode_id);
CREATE INDEX archived_episodes_bundle ON archived_episodes(bundle);
CREATE INDEX vector_units_scope ON vector_units(scope_key, model, n);
CREATE INDEX vector_units_hash ON vector_units(scope_key, model, hash);
