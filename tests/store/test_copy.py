"""``reverie migrate --from sqlite:///… --to postgresql://…``: everything, verified."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app
from reverie.errors import Conflict
from reverie.models import Scope
from reverie.store.copy import copy_store
from reverie.store.records import VectorUnit
from tests.conftest import EpisodeFactory
from tests.pg import schema_url

SCOPE = Scope.parse("acme/coder")


def _brain(path: Path, make_episode: EpisodeFactory) -> str:
    url = f"sqlite:///{path}"
    with Reverie.open(url) as rv:
        rv.ingest([make_episode(lesson="pin the kubectl version") for _ in range(6)])
        rv.ingest([make_episode(scope="acme/other", metadata={"k": [1, 2.5]}) for _ in range(3)])
        rv.dream(SCOPE)
        rv.dream("acme/other")
        rv.ingest([make_episode()])  # one pending episode past the checkpoint
        store = rv.store
        when = datetime(2026, 1, 2, tzinfo=UTC)
        store.cache_put(
            "k1", {"model": "m", "response": {"a": 1}, "input_tokens": 3, "created_at": when}
        )
        blob = np.ones(8, dtype="<f4").tobytes()
        store.vectors_put("m", {"h": blob}, [VectorUnit(SCOPE, "episode", "ep-00001", "h", 1)])  # type: ignore[attr-defined]
        store.acquire_lease(SCOPE, "w1", 30, datetime(2026, 1, 1, tzinfo=UTC))
    return url


def test_copy_moves_every_table_and_verifies(tmp_path: Path, make_episode: EpisodeFactory) -> None:
    source = _brain(tmp_path / "brain.db", make_episode)
    with schema_url() as target:
        report = copy_store(source, target)
        tables = {t.table: t.rows for t in report.tables}
        for name in ("episodes", "pages", "revisions", "citations", "cycles", "checkpoints"):
            assert tables[name] > 0, name
        assert tables["episodes"] == 10 and tables["embeddings"] == 1 and tables["leases"] == 1
        assert {"model_cache", "observations", "journal", "scopes"} <= set(tables)
        with Reverie.open(source) as old, Reverie.open(target) as new:
            assert new.status() == old.status()
            for page in old.pages(SCOPE, status=None):
                assert [r.hash for r in new.revisions(page.id)] == [
                    r.hash for r in old.revisions(page.id)
                ]
            assert (
                new.recall("kubectl version", SCOPE).text
                == old.recall("kubectl version", SCOPE).text
            )
            assert [s.key for s in new.store.pending_scopes()] == ["acme/coder"]
            fresh = new.remember(make_episode(id="ep-after-copy"))
            assert (fresh.seq or 0) > 10  # seqs continue past the copied ones
        with pytest.raises(Conflict, match="empty"):
            copy_store(source, target)


def test_migrate_command_prints_verified_tables(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    source = _brain(tmp_path / "brain.db", make_episode)
    with schema_url() as target:
        result = CliRunner().invoke(app, ["migrate", "--from", source, "--to", target, "--json"])
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        rows = {t["table"]: t["rows"] for t in out["tables"]}
        assert rows["episodes"] == 10
        assert all(t["digest"].startswith("sha256:") for t in out["tables"])


def test_copy_carries_the_cold_tier_into_the_database(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    from datetime import timedelta  # noqa: PLC0415

    from reverie.dream.archive import Archive  # noqa: PLC0415

    source = _brain(tmp_path / "brain.db", make_episode)
    later = datetime(2030, 1, 1, tzinfo=UTC)
    with Reverie.open(source) as old:
        [bundle] = (
            Archive(old.store).run(timedelta(days=1), later, apply=True, scopes=[SCOPE]).bundles
        )
        page = old.pages(SCOPE)[0]
        lineage = old.why(page.id).episodes
    with schema_url() as target:
        assert copy_store(source, target).bundles == 1
        with Reverie.open(target) as new:
            assert new.why(page.id).episodes == lineage  # read from the copied bundle
            assert Archive(new.store).restore(bundle.hash, later) == bundle.episodes


def test_copy_refuses_a_bundle_whose_file_is_missing(
    tmp_path: Path, make_episode: EpisodeFactory
) -> None:
    from datetime import timedelta  # noqa: PLC0415

    from reverie.dream.archive import Archive  # noqa: PLC0415
    from reverie.errors import ArchiveUnreadable  # noqa: PLC0415

    source = _brain(tmp_path / "brain.db", make_episode)
    with Reverie.open(source) as old:
        run = Archive(old.store).run(
            timedelta(days=1), datetime(2030, 1, 1, tzinfo=UTC), apply=True, scopes=[SCOPE]
        )
    (tmp_path / "archive" / run.bundles[0].file_name).unlink()
    with schema_url() as target:
        with pytest.raises(ArchiveUnreadable, match="is missing"):
            copy_store(source, target)
        with Reverie.open(target) as new:
            assert new.status().episodes == 0  # one transaction: nothing was copied
