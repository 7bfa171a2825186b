"""The cold tier: same data -> same bytes, verified before removal, restorable, lineage intact."""

from __future__ import annotations

import gzip
import hashlib
from datetime import timedelta
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.embed import HashingEmbedder
from reverie.errors import InvalidInput, ScopesFailed, UndoRefused
from reverie.memory.archive import Archive, BundleFiles, bundle_bytes
from reverie.models import Scope
from reverie.store.records import is_stub
from tests import conftest
from tests.conftest import T0, EpisodeFactory

SCOPE = Scope.parse("acme/coder")
LATER = T0 + timedelta(days=90)


def _brain(path: Path, make_episode: EpisodeFactory, n: int = 6) -> Reverie:
    rv = Reverie.open(path)
    rv.ingest([make_episode(lesson=f"wait for rollout {i}") for i in range(n)])
    # routine successes of another problem: not knowledge, so passed and never consolidated
    rv.ingest([make_episode(importance=1, error=None, outcome="success", category=f"c{i}",
                            situation=f"checking disk usage on build host {i}", action="df -h",
                            created_at=T0 - timedelta(days=50)) for i in range(2)])  # fmt: skip
    rv.dream(SCOPE, now=T0 + timedelta(days=1))
    return rv


def _fresh_factory() -> EpisodeFactory:
    """The conftest factory again, numbering from 1: a second brain holds the same episodes."""
    return conftest.make_episode.__wrapped__()  # type: ignore[attr-defined,no-any-return]


def _db_files(tmp_path: Path) -> set[Path]:
    return {p for p in tmp_path.rglob("*") if p.is_file()}


def test_dry_run_changes_nothing_and_apply_moves(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    with _brain(tmp_path / "b.db", make_episode) as rv:
        archive = Archive(rv.store)
        dry = archive.run(timedelta(days=30), LATER)
        assert not dry.applied and dry.episodes == 6 and len(dry.bundles) == 1
        assert not (tmp_path / "archive").exists()
        assert rv.store.episode("ep-00001", tenant="acme").situation  # still hot
        done = archive.run(timedelta(days=30), LATER, apply=True)
        assert done.bundles[0].hash == dry.bundles[0].hash  # the dry run named the same bytes
        files = list((tmp_path / "archive").iterdir())
        assert [f.name for f in files] == [done.bundles[0].file_name]
        data = files[0].read_bytes()
        assert "sha256:" + hashlib.sha256(data).hexdigest() == done.bundles[0].hash
        assert all(is_stub(rv.store.episode(f"ep-{i:05d}", tenant="acme")) for i in range(1, 7))
        # unconsolidated episodes (ineligible ones here) stay hot, however old
        unmarked = [e for e in rv.store.recent_episodes(SCOPE, 100) if not e.consolidated_in]
        assert unmarked and not any(is_stub(e) for e in unmarked)
        assert archive.run(timedelta(days=30), LATER, apply=True).episodes == 0
        assert rv.store.integrity_check() == "ok"


def test_same_data_gives_the_same_bytes(tmp_path: Path, make_episode: EpisodeFactory) -> None:
    hashes = []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        with _brain(folder / "b.db", make_episode) as rv:
            run = Archive(rv.store).run(timedelta(days=30), LATER, apply=True)
            hashes.append((run.bundles[0].hash, (folder / "archive" / run.bundles[0].file_name)
                           .read_bytes()))  # fmt: skip
        make_episode = _fresh_factory()
    assert hashes[0] == hashes[1]
    assert gzip.decompress(hashes[0][1]).count(b"\n") == 6


class CorruptingFiles(BundleFiles):
    def read(self, bundle_hash: str) -> bytes:
        return super().read(bundle_hash)[:-8] + b"\0" * 8


def test_failed_verification_removes_nothing(tmp_path: Path, make_episode: EpisodeFactory) -> None:
    with _brain(tmp_path / "b.db", make_episode) as rv:
        before = [e.model_dump() for e in rv.store.recent_episodes(SCOPE, 100)]
        archive = Archive(rv.store, files=CorruptingFiles(tmp_path / "archive"))
        with pytest.raises(ScopesFailed, match="does not hash to its name") as failed:
            archive.run(timedelta(days=30), LATER, apply=True)
        assert list(failed.value.failures) == [SCOPE.key] and failed.value.done.bundles == []
        assert [e.model_dump() for e in rv.store.recent_episodes(SCOPE, 100)] == before
        assert Archive(rv.store).bundles() == []
        assert rv.recall("rollout", SCOPE).items  # still searchable


def test_restore_round_trips_and_lineage_reads_the_bundle(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    with _brain(tmp_path / "b.db", make_episode) as rv:
        before = {e.id: e.model_dump() for e in rv.store.recent_episodes(SCOPE, 100)}
        page = rv.pages(SCOPE)[0]
        lineage_before = rv.why(page.id).episodes
        archive = Archive(rv.store)
        run = archive.run(timedelta(days=30), LATER, apply=True)
        assert rv.why(page.id).episodes == lineage_before  # fetched from the bundle
        assert rv.episode("ep-00001", tenant="acme").situation == before["ep-00001"]["situation"]
        assert [e.id for e in archive.fetch(run.bundles[0].hash)] == [
            f"ep-{i:05d}" for i in range(1, 7)
        ]
        hits = rv.store.search_episodes(SCOPE, ["rollout"], 10)
        assert hits == []  # the FTS rows were deleted with their original values
        cycle = rv.cycles(SCOPE)[0].id
        with pytest.raises(UndoRefused):
            rv.undo(cycle)
        # re-sending an archived episode is still a duplicate, never a second consolidation
        assert rv.ingest([_same(before["ep-00001"])]).stored == 0
        assert archive.restore(run.bundles[0].hash, LATER) == 6
        assert {e.id: e.model_dump() for e in rv.store.recent_episodes(SCOPE, 100)} == before
        assert rv.store.search_episodes(SCOPE, ["rollout"], 10)
        assert rv.store.integrity_check() == "ok"
        rv.undo(cycle)  # allowed again once restored


def _same(dumped: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in dumped.items() if k not in ("seq", "consolidated_in")}


def test_bundle_bytes_do_not_depend_on_input_order(make_episode: EpisodeFactory) -> None:
    eps = [make_episode().model_copy(update={"seq": i}) for i in range(1, 5)]
    assert bundle_bytes(eps) == bundle_bytes(list(reversed(eps)))


def test_memory_store_has_no_cold_tier() -> None:
    with Reverie.open(":memory:") as rv, pytest.raises(InvalidInput):
        Archive(rv.store)


def test_restored_episodes_are_found_by_vectors_again_without_a_model_call(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    embedder = HashingEmbedder()
    with Reverie.open(tmp_path / "b.db", embedder=embedder) as rv:
        rv.ingest([make_episode(lesson=f"wait for rollout {i}") for i in range(6)])
        rv.dream(SCOPE, now=T0 + timedelta(days=1))

        def units() -> set[str]:
            rows = rv.store.read(  # type: ignore[attr-defined]
                "SELECT ref FROM vector_units WHERE kind = 'episode'"
            )
            return {r[0] for r in rows}

        indexed = units()
        assert len(indexed) == 6
        archive = Archive(rv.store)
        run = archive.run(timedelta(days=30), LATER, apply=True)
        assert units() == set()  # archived: out of vector recall too
        cached = rv.store.read("SELECT count(*) FROM embeddings")[0][0]  # type: ignore[attr-defined]
        archive.restore(run.bundles[0].hash, LATER)
        assert units() == indexed
        assert rv.store.read("SELECT count(*) FROM embeddings")[0][0] == cached  # type: ignore[attr-defined]
        assert rv.index(SCOPE) == 0  # nothing to embed again
        assert rv._vectors is not None
        index = rv._vectors.index(rv.store, SCOPE)  # type: ignore[arg-type]
        query = rv._vectors.embed_query("deploying service to the staging cluster")
        assert {h.ref for h in index.search(query, 10, "episode")} == indexed


def test_a_line_separator_in_an_episode_survives_the_bundle(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    with Reverie.open(tmp_path / "b.db") as rv:
        rv.ingest([make_episode(lesson=f"wait\u2028for\x85rollout {i}") for i in range(4)])
        rv.dream(SCOPE, now=T0 + timedelta(days=1))
        run = Archive(rv.store).run(timedelta(days=30), LATER, apply=True)
        assert run.episodes == 4
        assert rv.episode("ep-00001", tenant="acme").lesson == "wait\u2028for\x85rollout 0"
