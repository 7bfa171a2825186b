"""The cold tier on every backend: SQLite keeps bundles as files beside the database, PostgreSQL
in the database itself; the guarantees are the same on both (docs/store.md)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.dream.archive import Archive, bundle_storage
from reverie.errors import ArchiveUnreadable, NotFound, ScopesFailed, UndoRefused
from reverie.models import Scope
from reverie.store.base import BundleBytes
from reverie.store.records import is_stub
from tests.conftest import T0, EpisodeFactory
from tests.pg import schema_url

SCOPE = Scope.parse("acme/coder")
LATER = T0 + timedelta(days=90)


@pytest.fixture(params=["sqlite", "postgres"])
def rv(
    request: pytest.FixtureRequest, tmp_path: Path, make_episode: EpisodeFactory
) -> Iterator[Reverie]:
    """A brain of six consolidated deploy episodes, on each backend."""
    if request.param == "sqlite":
        with Reverie.open(tmp_path / "b.db") as brain:
            yield _dreamed(brain, make_episode)
        return
    with schema_url() as url, Reverie.open(url) as brain:
        assert isinstance(brain.store, BundleBytes)
        yield _dreamed(brain, make_episode)


def _dreamed(rv: Reverie, make_episode: EpisodeFactory) -> Reverie:
    rv.ingest([make_episode(lesson=f"wait for rollout {i}") for i in range(6)])
    rv.dream(SCOPE, now=T0 + timedelta(days=1))
    return rv


class Corrupting:
    """The backend's own bundle storage, with the last bytes of every read zeroed."""

    def __init__(self, rv: Reverie) -> None:
        self.inner = bundle_storage(rv.store)

    def write(self, bundle_hash: str, data: bytes) -> None:
        self.inner.write(bundle_hash, data)

    def read(self, bundle_hash: str) -> bytes:
        return self.inner.read(bundle_hash)[:-8] + b"\0" * 8

    def where(self, bundle_hash: str) -> str:
        return self.inner.where(bundle_hash)


def test_archive_moves_verified_bytes_and_restore_brings_them_back(rv: Reverie) -> None:
    before = {e.id: e.model_dump() for e in rv.store.recent_episodes(SCOPE, 100)}
    page = rv.pages(SCOPE)[0]
    lineage = rv.why(page.id).episodes
    archive = Archive(rv.store)
    dry = archive.run(timedelta(days=30), LATER)
    assert not dry.applied and not any(is_stub(e) for e in rv.store.recent_episodes(SCOPE, 100))
    run = archive.run(timedelta(days=30), LATER, apply=True)
    [bundle] = run.bundles
    assert bundle.hash == dry.bundles[0].hash and run.episodes == 6
    data = bundle_storage(rv.store).read(bundle.hash)
    assert "sha256:" + hashlib.sha256(data).hexdigest() == bundle.hash  # content-addressed
    assert all(is_stub(e) for e in rv.store.recent_episodes(SCOPE, 100))
    assert rv.store.search_episodes(SCOPE, ["rollout"], 10) == []
    assert rv.why(page.id).episodes == lineage  # read back from the bundle
    with pytest.raises(UndoRefused):
        rv.undo(rv.cycles(SCOPE)[0].id)
    assert archive.restore(bundle.hash, LATER) == 6
    assert {e.id: e.model_dump() for e in rv.store.recent_episodes(SCOPE, 100)} == before
    assert rv.store.search_episodes(SCOPE, ["rollout"], 10)
    assert rv.store.integrity_check() == "ok"


def test_a_bundle_that_does_not_read_back_removes_nothing(rv: Reverie) -> None:
    before = [e.model_dump() for e in rv.store.recent_episodes(SCOPE, 100)]
    archive = Archive(rv.store, files=Corrupting(rv))
    with pytest.raises(ScopesFailed, match="does not hash to its name"):
        archive.run(timedelta(days=30), LATER, apply=True)
    assert [e.model_dump() for e in rv.store.recent_episodes(SCOPE, 100)] == before
    assert Archive(rv.store).bundles() == []
    assert rv.recall("rollout", SCOPE).items


def test_an_altered_bundle_is_named_not_shown_as_empty(rv: Reverie) -> None:
    [bundle] = Archive(rv.store).run(timedelta(days=30), LATER, apply=True).bundles
    with pytest.raises(ArchiveUnreadable, match="altered"):
        Archive(rv.store, files=Corrupting(rv)).fetch_known(bundle.hash)


def test_erasing_the_scope_removes_its_bundles_and_their_bytes(rv: Reverie) -> None:
    [bundle] = Archive(rv.store).run(timedelta(days=30), LATER, apply=True).bundles
    receipt = rv.forget(scope=SCOPE, apply=True)
    assert receipt.finished_at is not None and receipt.counts["bundles_removed"] == 1
    assert Archive(rv.store).bundles() == []
    with pytest.raises(NotFound, match="no archive bundle"):
        bundle_storage(rv.store).read(bundle.hash)


def test_erasing_one_archived_episode_rewrites_its_bundle(rv: Reverie) -> None:
    [old] = Archive(rv.store).run(timedelta(days=30), LATER, apply=True).bundles
    receipt = rv.forget(episodes=["ep-00002"], scope=SCOPE, apply=True)
    assert receipt.counts["bundles_rewritten"] == 1 and receipt.finished_at is not None
    [new] = Archive(rv.store).bundles()
    assert new.hash != old.hash and new.episodes == 5
    assert [e.id for e in Archive(rv.store).fetch(new.hash)] == [
        f"ep-{i:05d}" for i in (1, 3, 4, 5, 6)
    ]
    with pytest.raises(NotFound, match="no archive bundle"):
        bundle_storage(rv.store).read(old.hash)  # the old bytes went with the erasure


def test_archiving_again_after_a_restore_names_the_same_bundle(rv: Reverie) -> None:
    archive = Archive(rv.store)
    [first] = archive.run(timedelta(days=30), LATER, apply=True).bundles
    archive.restore(first.hash, LATER)
    [again] = archive.run(timedelta(days=30), LATER, apply=True).bundles
    assert again.hash == first.hash
    [listed] = archive.bundles()
    assert listed.restored_at is None and listed.episodes == 6
    assert all(is_stub(e) for e in rv.store.recent_episodes(SCOPE, 100))
    assert [e.id for e in archive.fetch(again.hash)] == [f"ep-{i:05d}" for i in range(1, 7)]
