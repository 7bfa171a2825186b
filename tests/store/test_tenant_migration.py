"""Migration 0014 (episode ids are their tenant's own) on a brain made before it.

The brain is made by the real engine — episodes, cycles, pages and their citations, an org copy
made by promotion, vectors, an archive bundle with its stubs, an erasure that took the episode
with the highest ``seq`` — and then taken back to the schema of migration 0013 by the inverse
of 0014. That it is exactly the old schema is checked against a database built by migrations
0001–0013 alone. Opening it again runs 0014; what the brain held must be as it was: ``reverie
verify`` passes, recall answers the same, every lineage resolves, archived episodes read back,
a new episode's ``seq`` comes after every one handed out before, and another tenant may now use
an id the first one has.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app
from reverie.dream.archive import Archive
from reverie.embed import HashingEmbedder
from reverie.errors import MigrationError
from reverie.models import Scope
from reverie.store.migrations import load_migrations, split_statements
from reverie.store.postgres import PostgresStore
from reverie.store.records import is_stub
from tests.pg import schema_url

CODER, ORG = Scope.parse("acme/coder"), Scope.parse("acme/_org")
DAY0 = datetime(2026, 5, 1, 22, tzinfo=UTC)
LATER = DAY0 + timedelta(days=120)
QUERY = "kubectl rollout status timeout"
TENANT_IDS = "0014_tenant_ids"

DOWN = """
DROP TABLE IF EXISTS episodes_fts_parts;
DELETE FROM _migrations WHERE name = '0018_episode_text_parts';
DROP TABLE IF EXISTS recall_stats;
DELETE FROM _migrations WHERE name = '0017_recall_stats';
DROP TABLE IF EXISTS brain_meta;
DELETE FROM _migrations WHERE name = '0015_brain_meta';
DROP INDEX scopes_tenant;
CREATE TABLE episodes_old (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    scope_key TEXT NOT NULL REFERENCES scopes(scope_key),
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
    inserted_at TEXT NOT NULL
) STRICT;
INSERT INTO episodes_old SELECT seq, id, scope_key, session_id, created_at, situation, action,
    outcome, outcome_details, error, lesson, importance, category, tools, entities, metadata,
    fingerprint, consolidated_in, inserted_at FROM episodes;
CREATE TABLE citations_old (
    page_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    episode_id TEXT NOT NULL REFERENCES episodes(id),
    PRIMARY KEY (page_id, revision, episode_id),
    FOREIGN KEY (page_id, revision) REFERENCES revisions(page_id, number)
) STRICT, WITHOUT ROWID;
INSERT INTO citations_old SELECT page_id, revision, episode_id FROM citations;
CREATE TABLE archived_episodes_old (
    episode_id TEXT PRIMARY KEY REFERENCES episodes(id),
    bundle TEXT NOT NULL REFERENCES archive_bundles(hash),
    seq INTEGER NOT NULL
) STRICT;
INSERT INTO archived_episodes_old SELECT episode_id, bundle, seq FROM archived_episodes;
CREATE TABLE vector_units_old (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    scope_key TEXT NOT NULL,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    ref TEXT NOT NULL,
    seq INTEGER,
    hash TEXT NOT NULL,
    UNIQUE (model, kind, ref)
) STRICT;
INSERT INTO vector_units_old SELECT * FROM vector_units;
DELETE FROM sqlite_sequence WHERE name IN ('episodes_old', 'vector_units_old');
INSERT INTO sqlite_sequence (name, seq)
SELECT name || '_old', seq FROM sqlite_sequence WHERE name IN ('episodes', 'vector_units');
DROP TABLE citations;
DROP TABLE archived_episodes;
DROP TABLE episodes;
DROP TABLE vector_units;
ALTER TABLE episodes_old RENAME TO episodes;
ALTER TABLE citations_old RENAME TO citations;
ALTER TABLE archived_episodes_old RENAME TO archived_episodes;
ALTER TABLE vector_units_old RENAME TO vector_units;
CREATE INDEX episodes_scope_seq ON episodes(scope_key, seq);
CREATE INDEX episodes_marked ON episodes(consolidated_in) WHERE consolidated_in IS NOT NULL;
CREATE INDEX citations_episode ON citations(episode_id);
CREATE INDEX archived_episodes_bundle ON archived_episodes(bundle);
CREATE INDEX vector_units_scope ON vector_units(scope_key, model, n);
CREATE INDEX vector_units_hash ON vector_units(scope_key, model, hash);
DELETE FROM _migrations WHERE name = '0014_tenant_ids';
"""
"""The inverse of migration 0014 (and of 0015, 0017 and 0018 after it, which only add tables),
run with foreign keys off as 0014 itself is."""


def _day(day: int, n: int = 3) -> list[dict[str, Any]]:
    return [
        {
            "id": f"ep-{day}-{i}",
            "scope": CODER.key,
            "created_at": (DAY0 + timedelta(days=day, hours=i - 9)).isoformat(),
            "situation": "deploying the api to staging",
            "action": "kubectl apply then rollout status",
            "outcome": "success" if i % 2 else "failure",
            "error": None if i % 2 else "timed out waiting for the condition",
            "lesson": "wait on kubectl rollout status with a 10m timeout after apply",
            "category": "deploy",
            "tools": ["kubectl"],
        }
        for i in range(n)
    ]


def _make_brain(db: Path) -> None:
    """Three nights of dreaming (the third promotes the page to the org brain), vectors, an
    archive bundle, and an erasure of the newest episode (the seq counter passes every row)."""
    with Reverie.open(db, embedder=HashingEmbedder()) as rv:
        for day in range(3):
            rv.ingest(_day(day))
            rv.dream(CODER, now=DAY0 + timedelta(days=day))
        rv.index(CODER)
        Archive(rv.store).run(timedelta(days=100), LATER, apply=True)
        rv.remember({"id": "scratch-1", "scope": "acme/scratch", "situation": "s", "action": "a"})
        rv.forget(episodes=["scratch-1"], scope="acme/scratch", apply=True)


def _schema(c: sqlite3.Connection) -> dict[str, Any]:
    """Every table's columns, foreign keys and indexes (with their columns and uniqueness),
    but the migration runner's own record."""
    rows = c.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name != ?", ("_migrations",)
    )
    tables = [r[0] for r in rows]
    out: dict[str, Any] = {}
    for t in sorted(tables):
        indexes = {
            r[1]: (r[2], [i[2] for i in c.execute(f"PRAGMA index_info('{r[1]}')")])
            for r in c.execute(f"PRAGMA index_list('{t}')")
            if not r[1].startswith("sqlite_autoindex")
        }
        autos = sorted(
            (r[2], tuple(i[2] for i in c.execute(f"PRAGMA index_info('{r[1]}')")))
            for r in c.execute(f"PRAGMA index_list('{t}')")
            if r[1].startswith("sqlite_autoindex")
        )
        out[t] = {
            "columns": [tuple(r[1:]) for r in c.execute(f"PRAGMA table_info('{t}')")],
            "keys": sorted(tuple(r[2:5]) for r in c.execute(f"PRAGMA foreign_key_list('{t}')")),
            "indexes": indexes,
            "unique": autos,
        }
    return out


def _schema_at_0013(path: Path) -> dict[str, Any]:
    with sqlite3.connect(path) as c:
        for name, sql in load_migrations("sqlite"):
            if name == TENANT_IDS:
                break
            for statement in split_statements(sql):
                c.execute(statement)
        return _schema(c)


def _downgrade(db: Path) -> None:
    c = sqlite3.connect(db, isolation_level=None)
    try:
        c.execute("PRAGMA foreign_keys = OFF")
        c.execute("BEGIN")
        for statement in split_statements(DOWN):
            c.execute(statement)
        assert c.execute("PRAGMA foreign_key_check").fetchall() == []
        c.execute("COMMIT")
    finally:
        c.close()


def _snapshot(rv: Reverie) -> dict[str, Any]:
    pages = rv.pages(CODER, None) + rv.pages(ORG, None)
    return {
        "recall": rv.recall(QUERY, CODER, 2000, now=LATER).text,
        "org_recall": rv.recall(QUERY, CODER, 2000, now=LATER, include_org=True).text,
        "lineage": {p.id: [(e.id, e.situation) for e in rv.why(p.id).episodes] for p in pages},
        "hashes": {p.id: [r.hash for r in rv.revisions(p.id)] for p in pages},
        "status": rv.status(CODER),
    }


def test_a_brain_made_before_migration_0014_migrates_and_keeps_everything(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    _make_brain(db)
    with Reverie.open(db, embedder=HashingEmbedder()) as rv:
        before = _snapshot(rv)
        stubs = [e for e in rv.store.recent_episodes(CODER, 100) if is_stub(e)]
        counter = rv.store.read("SELECT seq FROM sqlite_sequence WHERE name = 'episodes'")[0][0]
        top = max(e.seq or 0 for s in rv.scopes() for e in rv.store.recent_episodes(s, 100))
        assert stubs and rv.pages(ORG) and counter > top  # archived, promoted, the top one erased
    assert all(before["lineage"].values())

    _downgrade(db)
    with sqlite3.connect(db) as c:
        assert _schema(c) == _schema_at_0013(tmp_path / "at-0013.db")

    with Reverie.open(db, embedder=HashingEmbedder()) as rv:
        assert TENANT_IDS in rv.store.migrations()
        assert rv.store.read("PRAGMA foreign_key_check") == []
        report = rv.verify()
        assert report.ok and report.integrity == "ok", report.problems
        assert _snapshot(rv) == before
        archived = rv.episode(stubs[0].id, tenant="acme")  # fetched back from its bundle
        assert archived.situation == "deploying the api to staging" and archived.seq == stubs[0].seq
        [new] = rv.store.append([rv.episode("ep-2-2", tenant="acme").model_copy(
            update={"id": "ep-3-0", "seq": None, "consolidated_in": None})])  # fmt: skip
        assert (new.seq or 0) > counter  # never a seq handed out before
        theirs = rv.remember({"id": "ep-0-0", "scope": "globex/bot", "situation": "globex's"})
        assert theirs.seq and rv.episode("ep-0-0", tenant="globex").situation == "globex's"
        assert rv.episode("ep-0-0", tenant="acme").situation == "deploying the api to staging"
    result = CliRunner().invoke(app, ["--db", str(db), "verify"])
    assert result.exit_code == 0, result.output


def test_a_migration_that_would_leave_a_key_pointing_at_nothing_changes_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "brain.db"
    _make_brain(db)
    _downgrade(db)
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("UPDATE archived_episodes SET bundle = 'sha256:gone'")  # foreign keys are off
    c.close()
    with pytest.raises(MigrationError, match=r"0014_tenant_ids failed.*archived_episodes"):
        Reverie.open(db)
    with sqlite3.connect(db) as c:
        applied = [r[0] for r in c.execute("SELECT name FROM _migrations")]
        assert TENANT_IDS not in applied and "0013_erasure" in applied
        assert [r[1] for r in c.execute("PRAGMA table_info('episodes')")][:3] == [
            "seq",
            "id",
            "scope_key",
        ]  # still the table 0013 left


PG_DOWN = """
DELETE FROM _migrations WHERE name = '0018_episode_text_parts';
DROP TABLE IF EXISTS recall_stats;
DELETE FROM _migrations WHERE name = '0017_recall_stats';
DROP TRIGGER IF EXISTS archive_bundles_blob ON archive_bundles;
DROP FUNCTION IF EXISTS archive_blob_unindexed();
DROP TABLE IF EXISTS archive_blobs;
DELETE FROM _migrations WHERE name = '0016_bundles_in_database';
DROP TABLE IF EXISTS brain_meta;
DELETE FROM _migrations WHERE name = '0015_brain_meta';
ALTER TABLE vector_units DROP CONSTRAINT vector_units_unit_key;
ALTER TABLE vector_units ADD CONSTRAINT vector_units_model_kind_ref_key UNIQUE (model, kind, ref);
ALTER TABLE citations DROP CONSTRAINT citations_episode_fkey;
ALTER TABLE archived_episodes DROP CONSTRAINT archived_episodes_episode_fkey;
ALTER TABLE archived_episodes DROP CONSTRAINT archived_episodes_pkey;
ALTER TABLE episodes DROP CONSTRAINT episodes_scope_fkey;
ALTER TABLE episodes DROP CONSTRAINT episodes_tenant_id_key;
ALTER TABLE episodes ADD CONSTRAINT episodes_id_key UNIQUE (id);
ALTER TABLE episodes ADD CONSTRAINT episodes_scope_key_fkey
    FOREIGN KEY (scope_key) REFERENCES scopes(scope_key);
ALTER TABLE citations ADD CONSTRAINT citations_episode_id_fkey
    FOREIGN KEY (episode_id) REFERENCES episodes(id);
ALTER TABLE archived_episodes ADD PRIMARY KEY (episode_id);
ALTER TABLE archived_episodes ADD CONSTRAINT archived_episodes_episode_id_fkey
    FOREIGN KEY (episode_id) REFERENCES episodes(id);
DROP INDEX citations_episode;
CREATE INDEX citations_episode ON citations(episode_id);
ALTER TABLE citations DROP COLUMN tenant;
ALTER TABLE archived_episodes DROP COLUMN tenant;
ALTER TABLE episodes DROP COLUMN tenant;
ALTER TABLE scopes DROP CONSTRAINT scopes_tenant;
DELETE FROM _migrations WHERE name = '0014_tenant_ids';
"""
"""The inverse of the PostgreSQL port of migration 0014 (and of 0015, 0016 and 0017 after it,
which only add tables)."""


def _pg_schema(url: str) -> dict[str, Any]:
    """Every table's columns, constraints and indexes in the URL's schema (names as given),
    but the runner's record and the vector indexes the store makes per dimension it meets."""
    import psycopg  # noqa: PLC0415 (extra: postgres)

    with psycopg.connect(url) as c:
        columns = c.execute(
            "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name != '_migrations'"
        ).fetchall()
        constraints = c.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE connamespace = current_schema()::regnamespace"
        ).fetchall()
        indexes = c.execute(
            "SELECT tablename, indexname, replace(indexdef, current_schema() || '.', '')"
            " FROM pg_indexes WHERE schemaname = current_schema()"
        ).fetchall()
    return {
        "columns": sorted(columns),
        "constraints": sorted(r for r in constraints if r[0] != "_migrations"),
        "indexes": sorted(
            r for r in indexes if r[0] != "_migrations" and not r[1].startswith("embeddings_hnsw")
        ),
    }


def _pg_schema_at_0013() -> dict[str, Any]:
    import psycopg  # noqa: PLC0415 (extra: postgres)

    with schema_url() as url:
        with psycopg.connect(url) as c:
            for name, sql in load_migrations("postgres"):
                if name == TENANT_IDS:
                    break
                c.execute(sql.encode())
        return _pg_schema(url)


def _pg_brain(url: str) -> None:
    store = PostgresStore(url)
    store.migrate()
    with Reverie(store, embedder=HashingEmbedder()) as rv:
        for day in range(3):
            rv.ingest(_day(day))
            rv.dream(CODER, now=DAY0 + timedelta(days=day))
        rv.index(CODER)


def test_a_postgres_brain_made_before_migration_0014_migrates_and_keeps_everything() -> None:
    import psycopg  # noqa: PLC0415 (extra: postgres)

    with schema_url() as url:
        _pg_brain(url)
        with Reverie.from_store(PostgresStore(url), embedder=HashingEmbedder()) as rv:
            before = _snapshot(rv)
            assert "kubectl rollout status" in before["recall"]
            assert rv.pages(ORG) and all(before["lineage"].values())
        with psycopg.connect(url) as c:
            c.execute(PG_DOWN.encode())
        assert _pg_schema(url) == _pg_schema_at_0013()
        store = PostgresStore(url)
        assert store.migrate()[:1] == [TENANT_IDS]  # then the migrations after it
        with Reverie(store, embedder=HashingEmbedder()) as rv:
            report = rv.verify()
            assert report.ok and report.integrity == "ok", report.problems
            assert _snapshot(rv) == before
            theirs = rv.remember({"id": "ep-0-0", "scope": "globex/bot", "situation": "globex's"})
            assert theirs.seq and rv.episode("ep-0-0", tenant="globex").situation == "globex's"
            assert rv.episode("ep-0-0", tenant="acme").situation == "deploying the api to staging"
