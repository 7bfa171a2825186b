"""Proof by search: after ``forget --subject`` not one byte of the subject is left anywhere.

A brain is built to spread unique markers everywhere they can reach: episodes (text, entities,
metadata, in several letter cases and one spelling with a non-ASCII letter), pages written by a
model distiller (so its answers sit in the response cache), vectors and the embedding cache,
the Markdown mirror, a training export, the cold archive, an org copy made by promotion, a plan
held for review, the journal and the cycle reports. Then the subject is forgotten, and every
byte under the data directory is read — the SQLite file, its WAL and SHM, the archive bundles
decompressed, the mirror, file names too — and, on PostgreSQL, every text, JSON, bytea and
tsvector column of every table. Zero occurrences, in any case or JSON escaping. The other
subjects' pages are intact, verify passes, and recall still finds them.
"""

from __future__ import annotations

import gzip
import json
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from reverie import Reverie
from reverie.bench.crash_lanes import model_lane
from reverie.config import Config, DreamConfig
from reverie.dream.archive import Archive
from reverie.memory.erasure import ForgetRequest
from reverie.memory.erasure import forget as run_forget
from reverie.memory.export import write_training
from reverie.store.postgres import PostgresStore
from tests.pg import schema_url, server_url

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SUBJECT = "qzx7vantablack"
MARKERS = ("qzx7vantablack", "zoë-qzx7")
"""The subject, and a name only the subject's episodes carry (erased with them)."""
SCOPE = "acme/support"
CONFIG = Config(dream=DreamConfig(promote_after_cycles=1, min_pattern=2))


def _spellings(marker: str) -> set[bytes]:
    """Every form the marker may take in a file: its letter cases, raw and JSON-escaped."""
    forms = {marker, marker.upper(), marker.title()}
    found = {f.encode() for f in forms}
    found |= {json.dumps(f).strip('"').encode() for f in forms}  # \u00eb and the like
    return found


def _episodes(first: int, count: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(first, first + count):
        rows.append(
            {
                "id": f"sub-{i}",
                "scope": SCOPE,
                "created_at": (T0 + timedelta(hours=i)).isoformat(),
                "situation": f"Customer {SUBJECT.upper() if i % 2 else SUBJECT} cannot sign in",
                "action": "reset the password from the admin console",
                "outcome": "failure",
                "error": "HTTP 401 for account Qzx7Vantablack",
                "lesson": f"accounts like {SUBJECT.title()} sign in through SSO only",
                "tools": ["admin-console"],
                "entities": [SUBJECT],
                "metadata": {"customer": "Zoë-QZX7", "ticket": {"owner": SUBJECT}},
            }
        )
        rows.append(
            {
                "id": f"other-{i}",
                "scope": SCOPE,
                "created_at": (T0 + timedelta(hours=i, minutes=30)).isoformat(),
                "situation": f"rollout of the billing service {i} timed out on staging",
                "action": "kubectl rollout status deploy/billing",
                "outcome": "failure",
                "error": "TimeoutError: timed out waiting for the rollout",
                "lesson": "raise the rollout timeout to ten minutes for billing on staging",
                "tools": ["kubectl"],
            }
        )
    return rows


@contextmanager
def _brain(target: str | Path) -> Iterator[Reverie]:
    with Reverie.open(target, config=CONFIG, embedder="hashing") as opened, ExitStack() as stack:
        distiller = stack.enter_context(model_lane(opened.store, _quiet, _quiet))
        yield Reverie(opened.store, config=CONFIG, embedder="hashing", distiller=distiller)


def _quiet(_line: str) -> None:
    return None


def _spread(rv: Reverie, mirror: Path, training: Path, *, archive: bool) -> None:
    """Dream, promote, export, archive and hold a plan, so the markers reach everything."""
    rv.ingest(_episodes(0, 6))
    for day in (1, 2):
        rv.dream(SCOPE, now=T0 + timedelta(days=day))
    assert rv.pages("acme/_org"), "a page was promoted to the org brain"
    rv.export_markdown(SCOPE, mirror, journal=True)
    write_training(rv.store, training, recorded_at=T0 + timedelta(days=2))
    if archive:
        Archive(rv.store).run(timedelta(days=1), T0 + timedelta(days=30), apply=True)
        assert Archive(rv.store).bundles()
    rv.ingest(_episodes(6, 3))
    rv.dream(SCOPE, now=T0 + timedelta(days=40), review=True)
    assert rv.plans(SCOPE), "a plan holding the markers awaits review"
    assert SUBJECT in rv.recall(f"customer {SUBJECT} cannot sign in", SCOPE).text.lower()


def _check_the_rest(rv: Reverie, before: dict[str, str]) -> None:
    """The other subject's pages are intact, verify passes, and recall still finds them."""
    kept = {p.id: p.revision.hash for p in rv.pages(SCOPE) if "rollout" in p.title.lower()}
    assert kept and kept == {k: v for k, v in before.items() if k in kept}
    assert rv.verify().ok
    found = rv.recall("billing rollout timed out on staging", SCOPE)
    cited = {c for item in found.items for c in (item.id, *item.citations)}
    assert "billing service" in found.text and "other-0" in cited  # full ids stay in the items
    assert not any(m in found.text.lower() for m in MARKERS)


def _rollout_pages(rv: Reverie) -> dict[str, str]:
    return {p.id: p.revision.hash for p in rv.pages(SCOPE) if "rollout" in p.title.lower()}


def _file_hits(root: Path) -> list[str]:
    hits = []
    forms = set().union(*(_spellings(m) for m in MARKERS))
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            data += gzip.decompress(data)
        names = str(path.relative_to(root)).encode()
        hits += [f"{path}: {form!r}" for form in forms if form in data or form in names]
    return hits


def test_forgetting_a_subject_leaves_no_byte_of_it_on_sqlite(tmp_path: Path) -> None:
    data, outside = tmp_path / "data", tmp_path / "outside"
    outside.mkdir()
    training = outside / "train.jsonl"
    with _brain(data / "brain.db") as rv:
        _spread(rv, data / "mirror", training, archive=True)
        assert _file_hits(data), "the markers were planted where the search looks"
        before = _rollout_pages(rv)
        receipt = rv.forget(subject=SUBJECT.upper(), apply=True, reason="erasure request 17")
        assert receipt.finished_at is not None and receipt.details["archived"]
        assert receipt.counts["bundles_rewritten"] + receipt.counts.get("bundles_removed", 0)
        assert receipt.counts["model_cache"] and receipt.counts["plans"] == 1
        assert [u["path"] for u in receipt.details["unreachable"]] == [str(training.resolve())]
        assert _file_hits(data) == []  # the database open, its WAL and SHM included
        _check_the_rest(rv, before)
    assert _file_hits(data) == []
    assert _file_hits(outside)  # the exported training rows are out of reach, as the receipt says


def _column_hits(store: PostgresStore) -> list[str]:
    columns = [
        (r[0], r[1])
        for r in store.stream(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND data_type IN"
            " ('text', 'jsonb', 'json', 'bytea', 'character varying', 'tsvector', 'ARRAY')"
        )
    ]
    hits = []
    for table, column in columns:
        for marker in MARKERS:
            n = store.stream(
                f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE'
                f" '%{marker}%' OR \"{column}\"::text ILIKE '%{json.dumps(marker).strip(chr(34))}%'"
            )
            count = next(iter(n))[0]
            hits += [f"{table}.{column}: {count} x {marker}"] if count else []
    return hits


def _blob_hits(store: PostgresStore) -> list[str]:
    """Markers inside the archive bundles PostgreSQL keeps (gzipped, so no column search
    sees them)."""
    forms = set().union(*(_spellings(m) for m in MARKERS))
    hits = []
    for bundle_hash, data in store.stream("SELECT hash, data FROM archive_blobs"):
        text = gzip.decompress(bytes(data))
        hits += [f"{bundle_hash}: {form!r}" for form in forms if form in text]
    return hits


def test_forgetting_a_subject_leaves_no_value_of_it_on_postgres(tmp_path: Path) -> None:
    with schema_url() as url, _brain(url) as rv:
        store = rv.store
        assert isinstance(store, PostgresStore)
        _spread(rv, tmp_path / "mirror", tmp_path / "train.jsonl", archive=True)
        assert _column_hits(store), "the markers were planted where the search looks"
        assert _blob_hits(store), "the archive's bundles hold the markers (gzipped)"
        before = _rollout_pages(rv)
        receipt = rv.forget(subject=SUBJECT, apply=True)
        assert receipt.finished_at is not None and receipt.counts["episodes"] == 9
        assert receipt.details["archived"] and receipt.counts["bundles_rewritten"]
        assert _column_hits(store) == [] and _blob_hits(store) == []
        assert _file_hits(tmp_path / "mirror") == []
        _check_the_rest(rv, before)


@contextmanager
def _own_database() -> Iterator[str]:
    """A URL to a new database of its own, dropped on exit: ``VACUUM FULL`` keeps the old row
    versions that any transaction of the same database may still see, so another test's open
    transaction on a shared database would keep them."""
    import psycopg  # noqa: PLC0415 (extra: postgres)

    base = server_url()
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    url = urlunsplit(urlsplit(base)._replace(path=f"/{name}"))
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield url
    finally:
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


_RELATIONS = (
    "WITH t AS (SELECT oid, reltoastrelid FROM pg_class WHERE relkind = 'r'"
    " AND relnamespace = current_schema()::regnamespace),"
    " r AS (SELECT oid AS owner, oid AS rel FROM t"
    " UNION ALL SELECT oid, reltoastrelid FROM t WHERE reltoastrelid <> 0),"
    " f AS (SELECT owner, rel FROM r UNION ALL"
    " SELECT r.owner, i.indexrelid FROM r JOIN pg_index i ON i.indrelid = r.rel)"
    " SELECT owner::regclass::text, current_setting('data_directory') || '/'"
    " || pg_relation_filepath(rel) FROM f"
)
"""Every file of the schema's tables: heap, TOAST and every index, named by the owning table."""


def _relation_hits(store: PostgresStore) -> dict[str, int]:
    """Marker spellings per table in the relation files on disk, after a checkpoint wrote
    every dirty page out (the cluster's files are read directly: root, or its owner)."""
    store.backend.run_alone("CHECKPOINT")
    forms = set().union(*(_spellings(m) for m in MARKERS))
    hits: dict[str, int] = {}
    for table, path in list(store.stream(_RELATIONS)):
        files = [Path(path), *Path(path).parent.glob(Path(path).name + ".[0-9]*")]
        try:
            data = b"".join(f.read_bytes() for f in files if f.exists())
        except PermissionError:
            pytest.skip("the cluster's files are not readable here (root or its owner reads them)")
        found = sum(data.count(form) for form in forms)
        if found:
            hits[table] = hits.get(table, 0) + found
    return hits


def test_forget_vacuum_leaves_no_byte_of_the_subject_in_postgres_files(tmp_path: Path) -> None:
    """Byte-level, as on SQLite: after the commit the erased rows' old versions are still in
    the files of the tables the receipt names (and only those); after ``--vacuum`` no table,
    TOAST or index file holds a byte of the subject. The WAL still does, as the receipt says."""
    with _own_database() as url, _brain(url) as rv:
        store = rv.store
        assert isinstance(store, PostgresStore)
        _spread(rv, tmp_path / "mirror", tmp_path / "train.jsonl", archive=True)
        committed: dict[str, int] = {}

        def look(step: str) -> None:
            if step == "erase-mirror":  # committed, not yet vacuumed
                committed.update(_relation_hits(store))

        request = ForgetRequest(subject=SUBJECT, vacuum=True)
        receipt = run_forget(store, request, datetime.now(UTC), apply=True, on_step=look)
        physical = receipt.physical
        assert committed, "the erased rows' old versions were on disk before the vacuum"
        named = {t.rsplit(".", 1)[-1] for t in physical["vacuumed"]}  # schema-qualified
        assert set(committed) <= named  # the receipt named every table that kept them
        assert _relation_hits(store) == {}
        assert physical["tables"] == [] and physical["wal"] and len(physical["purge"]) == 1
        assert _column_hits(store) == []
