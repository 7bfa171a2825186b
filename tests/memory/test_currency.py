"""Facts stay current — future timestamps refused at ingest and ignored by
cycles, mentions that never flip a value, and late arrivals that never win."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app
from reverie.config import Config, DreamConfig, MemoryConfig
from reverie.dream.facts import assertions, mentions
from reverie.errors import InvalidInput
from reverie.intake import IngestClock, admit
from reverie.models import Episode, PageStatus

SCOPE = "acme/coder"
NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)
JAN, APR, AUG = (datetime(2026, m, 5, 9, tzinfo=UTC) for m in (1, 4, 8))


def said(n: str, value: str, when: datetime, **fact: Any) -> dict[str, Any]:
    return {
        "id": f"pref-{n}",
        "scope": SCOPE,
        "created_at": when,
        "situation": "the user asked to open a file",
        "action": f"opened it in {value}",
        "category": "preference",
        "metadata": {"fact": {"subject": "user", "attribute": "editor", "value": value, **fact}},
    }


def current(rv: Reverie) -> list[str]:
    return sorted(p.title for p in rv.pages(SCOPE) if p.topic_key.startswith("fact|"))


# -- the future at ingest ------------------------------------------------------------------------


def test_remember_refuses_a_created_at_beyond_the_skew(rv: Reverie) -> None:
    with pytest.raises(InvalidInput) as info:
        rv.remember(said("x", "vim", datetime(9999, 12, 31, tzinfo=UTC)), now=NOW)
    assert info.value.field == "created_at"
    assert "9999-12-31T00:00:00+00:00" in info.value.reason
    assert "300 s" in info.value.reason and "2026-06-01T12:05:00+00:00" in info.value.reason
    assert rv.status(SCOPE).episodes == 0
    rv.remember(said("ok", "vim", NOW + timedelta(minutes=4)), now=NOW)  # within the skew
    assert rv.status(SCOPE).episodes == 1


def test_batch_ingest_names_the_future_item_by_position_and_stores_the_rest(rv: Reverie) -> None:
    items = [
        said("1", "vim", JAN),
        said("2", "emacs", NOW + timedelta(days=1)),
        said("3", "x", APR),
    ]
    result = rv.ingest(items, now=NOW)
    assert result.stored == 2 and [(e.index, e.field) for e in result.errors] == [(1, "created_at")]


def test_admit_is_pure_and_takes_the_clock_it_is_given() -> None:
    clock = IngestClock.at(NOW, 300)
    item = {"scope": SCOPE, "situation": "s", "created_at": NOW + timedelta(seconds=300)}
    assert admit(item, None, clock).created_at == NOW + timedelta(seconds=300)  # the edge
    with pytest.raises(InvalidInput, match="latest 2026-06-01T12:05:00"):
        admit({**item, "created_at": NOW + timedelta(seconds=301)}, None, clock)


def test_the_skew_is_a_setting(tmp_path: Path) -> None:
    config = Config(dream=DreamConfig(memory=MemoryConfig(future_skew_s=3600)))
    with Reverie.open(tmp_path / "b.db", config=config) as rv:
        rv.remember(said("1", "vim", NOW + timedelta(minutes=30)), now=NOW)
        with pytest.raises(InvalidInput, match="3600 s"):
            rv.remember(said("2", "vim", NOW + timedelta(minutes=61)), now=NOW)


def test_an_episode_without_created_at_is_dated_by_the_given_clock(rv: Reverie) -> None:
    item = {"scope": SCOPE, "situation": "s", "action": "a"}
    assert rv.remember({**item, "id": "a"}, now=NOW).created_at == NOW
    assert rv.ingest([{**item, "id": "b"}], now=NOW).stored == 1
    assert rv.episode("b", tenant="acme").created_at == NOW


def test_the_ingest_clock_is_read_at_the_edge_when_not_given(rv: Reverie) -> None:
    with pytest.raises(InvalidInput, match="created_at"):
        rv.remember(said("1", "vim", datetime.now(UTC) + timedelta(days=1)))


def test_the_cli_edge_refuses_it_too(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    future = said("f", "vim", datetime(9999, 12, 31, tzinfo=UTC))
    path.write_text(Episode.parse(future).model_dump_json() + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["--db", str(tmp_path / "c.db"), "ingest", str(path)])
    assert "created_at" in result.output and "in the future" in result.output


# -- an old store that already holds one ---------------------------------------------------------


def _store_raw(rv: Reverie, item: dict[str, Any]) -> None:
    """An episode written before ingest refused the future (straight to the store)."""
    rv.store.append([Episode.parse(item)])


def test_a_far_future_fact_already_stored_does_not_pin_the_value(rv: Reverie) -> None:
    rv.remember(said("1", "vim", JAN), now=NOW)
    _store_raw(rv, said("2", "nano", datetime(9999, 12, 31, tzinfo=UTC)))
    report = rv.dream(SCOPE, now=NOW)
    assert current(rv) == ["user editor: vim"]
    assert report.deferred == 1 and any("pref-2" in n for n in report.deferred_groups)
    assert rv.store.episode("pref-2", tenant="acme").consolidated_in is None  # still eligible
    rv.remember(said("3", "helix", APR), now=NOW)
    rv.dream(SCOPE, now=NOW + timedelta(hours=1))
    assert current(rv) == ["user editor: helix"]


def test_a_future_fact_consolidated_by_an_old_cycle_is_superseded_by_new_evidence(
    rv: Reverie,
) -> None:
    _store_raw(rv, said("1", "nano", datetime(9999, 12, 31, tzinfo=UTC)))
    rv.dream(SCOPE, now=datetime(9999, 12, 31, 1, tzinfo=UTC))  # an old cycle took it
    assert current(rv) == ["user editor: nano"]
    rv.remember(said("2", "helix", APR), now=NOW)
    rv.dream(SCOPE, now=NOW)
    assert current(rv) == ["user editor: helix"]
    (nano,) = [p for p in rv.pages(SCOPE, None) if p.title == "user editor: nano"]
    assert nano.status is PageStatus.SUPERSEDED and "after this cycle's clock" in (
        nano.revision.reason or ""
    )


# -- asserted as current -------------------------------------------------------------------------


def test_a_mention_is_not_an_assertion() -> None:
    ep = Episode.parse(said("1", "vim", JAN, current=False))
    assert assertions(ep) == [] and [a.value for a in mentions(ep)] == ["vim"]
    failed = Episode.parse(
        {
            "scope": SCOPE,
            "situation": "connecting to the db",
            "outcome": "failure",
            "entities": ["db.port=5432"],
        }
    )
    assert assertions(failed) == [] and [a.value for a in mentions(failed)] == ["5432"]
    ok = Episode.parse({**failed.model_dump(exclude={"id"}), "outcome": "success"})
    assert [a.value for a in assertions(ok)] == ["5432"]


def test_a_later_stray_mention_of_an_old_value_does_not_flip_it_back(rv: Reverie) -> None:
    rv.ingest([said("1", "vim", JAN), said("2", "helix", APR)], now=NOW)
    rv.dream(SCOPE, now=NOW)
    rv.remember(said("3", "vim", AUG, current=False), now=AUG)  # "I used vim back then"
    rv.dream(SCOPE, now=AUG)
    assert current(rv) == ["user editor: helix"]
    rv.remember(said("4", "vim", AUG + timedelta(days=1)), now=AUG + timedelta(days=1))
    rv.dream(SCOPE, now=AUG + timedelta(days=1))  # newer and asserted: it does
    assert current(rv) == ["user editor: vim"]


def test_a_failed_attempt_with_an_old_port_does_not_change_the_port(rv: Reverie) -> None:
    base = {"scope": SCOPE, "situation": "connecting to the staging db", "category": "db"}
    rv.ingest(
        [
            {**base, "id": "p1", "created_at": JAN, "entities": ["db.port=5432"]},
            {**base, "id": "p2", "created_at": APR, "entities": ["db.port=5433"]},
            {**base, "id": "p3", "created_at": AUG, "entities": ["db.port=5432"],
             "outcome": "failure", "error": "connection refused"},
        ],
        now=AUG,
    )  # fmt: skip
    rv.dream(SCOPE, now=AUG)
    assert current(rv) == ["db port: 5433"]


# -- late arrivals (property) --------------------------------------------------------------------

VALUES = st.sampled_from(["vim", "emacs", "helix"])
STATED = st.lists(
    st.tuples(VALUES, st.integers(0, 300), st.booleans()),
    min_size=1,
    max_size=8,
    unique_by=lambda t: t[1],
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stated=STATED, order=st.randoms(use_true_random=False), cuts=st.integers(1, 3))
def test_the_newest_asserted_value_is_current_whatever_arrives_late(
    tmp_path_factory: pytest.TempPathFactory,
    stated: list[tuple[str, int, bool]],
    order: Any,
    cuts: int,
) -> None:
    """Invariant: the current value is the newest asserted one by created_at, in any arrival
    order and any split over cycles; mentions never decide it."""
    items = [
        said(str(n), v, JAN + timedelta(days=d), **({} if asserted else {"current": False}))
        for n, (v, d, asserted) in enumerate(stated)
    ]
    asserted = [(d, v) for v, d, a in stated if a]
    order.shuffle(items)
    end = JAN + timedelta(days=400)
    with Reverie.open(tmp_path_factory.mktemp("late") / "b.db") as rv:
        step = max(1, len(items) // cuts)
        for i in range(0, len(items), step):
            rv.ingest(items[i : i + step], now=end)
            rv.dream(SCOPE, now=end + timedelta(hours=i))
        got = current(rv)
    assert got == ([f"user editor: {max(asserted)[1]}"] if asserted else [])
