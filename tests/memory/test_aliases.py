"""One setting named two ways has one current value: slots joined by their timelines.

Names and values are random words, so nothing here matches a list the code could hold."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.dream.aliases import agree
from reverie.models import PageStatus

SCOPE = "acme/desk"
T0 = datetime(2026, 9, 1, 9, tzinfo=UTC)


def word(rng: random.Random, n: int = 7) -> str:
    return "".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(n // 2))


def row(n: int, day: int, action: str, details: str, situation: str = "") -> dict[str, Any]:
    return {
        "id": f"r{n}",
        "situation": situation or f"routine task {n}",
        "action": action,
        "outcome": "success",
        "outcome_details": details,
        "created_at": T0 + timedelta(days=day, hours=n % 5),
    }


def nightly(rv: Reverie, rows: list[dict[str, Any]]) -> None:
    for day in sorted({r["created_at"].date() for r in rows}):
        rv.ingest([r for r in rows if r["created_at"].date() == day], scope=SCOPE)
        rv.dream(SCOPE, now=datetime.combine(day, datetime.max.time(), UTC))


def facts(rv: Reverie) -> dict[str, PageStatus]:
    return {p.title: p.status for p in rv.pages(SCOPE, "all") if p.kind == "fact"}


def active(rv: Reverie) -> list[str]:
    return sorted(t for t, s in facts(rv).items() if s is PageStatus.ACTIVE)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_setting_written_under_two_keys_has_one_current_value(tmp_path: Path, seed: int) -> None:
    """A change is made under one key and read back under another: whichever changed last
    holds, and the other key's older value is not current."""
    rng = random.Random(seed)
    set_key, read_key = f"{word(rng)}.{word(rng)}", f"{word(rng)}.{word(rng)}_{word(rng)}"
    a, b, c = (word(rng).title() for _ in range(3))
    rows = [
        row(1, 0, f"config.set {set_key}={a}", "ok"),
        row(2, 1, f"{word(rng)}.get", f"{read_key}=Dr. {a}"),
        row(3, 5, f"{word(rng)}.get", f"{read_key}=Dr. {b}"),
        row(4, 6, f"config.set {set_key}={b}", "ok"),
        row(5, 10, f"{word(rng)}.get", f"{read_key}=Dr. {c}"),
    ]
    with Reverie.open(tmp_path / "brain.db") as rv:
        nightly(rv, rows)
        current = active(rv)
        assert len(current) == 1 and current[0].endswith(f"Dr. {c}"), facts(rv)
        text = rv.recall(set_key.replace(".", " "), SCOPE, 200, now=T0 + timedelta(days=11)).text
        assert c in text and a not in text and b not in text


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_lookup_that_prints_a_settings_name_is_its_history(tmp_path: Path, seed: int) -> None:
    """A bare field printed by a lookup (``name=value``), before and after the setting was
    written, is the setting's value at that time; the lookups that teach a lesson keep it."""
    rng = random.Random(seed)
    name = f"{word(rng)}_{word(rng)}"
    key = f"{word(rng)}.{name}"
    old, new, newest = (f"{rng.randint(100, 999)}-{rng.randint(1000, 9999)}" for _ in range(3))
    lookup, refresh = f'{word(rng)}.get {{"dest": "{name}"}}', f"{word(rng)} refresh"
    lesson = f"{word(rng)} answers slowly before {word(rng)}; retry once".capitalize()
    rows = [row(n, n, lookup, f"{name}={old}", refresh) | {"lesson": lesson} for n in range(4)]
    rows += [
        row(5, 5, lookup, f"{name}={new}", refresh),
        row(6, 6, f"config.set {key}={new}", "ok, 1 key changed"),
        row(7, 9, lookup, f"{name}={newest}", refresh),
    ]
    with Reverie.open(tmp_path / "brain.db") as rv:
        nightly(rv, rows)
        pages = facts(rv)
        setting = key.replace(".", " ", 1)  # the field is read as the setting it prints
        assert [t for t, s in pages.items() if s is PageStatus.ACTIVE] == [f"{setting}: {newest}"]
        superseded = [t for t, s in pages.items() if s is PageStatus.SUPERSEDED]
        assert any(old in t for t in superseded) and any(new in t for t in superseded)
        taught = [p for p in rv.pages(SCOPE) if p.kind != "fact" and "r0" in p.citations]
        assert taught and taught[0].revision.claims[0].text == lesson


def test_two_settings_that_trade_values_stay_two(tmp_path: Path) -> None:
    """A primary and a backup hold different values at the same time; swapping them shares
    values, yet each keeps its own current one."""
    rng = random.Random(7)
    ns = word(rng)
    x, y = f"{word(rng)}-1", f"{word(rng)}-2"
    rows = []
    for day in range(6):
        rows += [row(10 * day, day, f"config.set {ns}.primary={x}", "ok"),
                 row(10 * day + 1, day, f"config.set {ns}.backup={y}", "ok")]  # fmt: skip
    rows += [row(90, 8, f"config.set {ns}.primary={y}", "ok"),
             row(91, 8, f"config.set {ns}.backup={x}", "ok")]  # fmt: skip
    with Reverie.open(tmp_path / "brain.db") as rv:
        nightly(rv, rows)
        assert active(rv) == [f"{ns} backup: {x}", f"{ns} primary: {y}"]


def test_bare_fields_alone_are_never_facts(tmp_path: Path) -> None:
    """``status=ok count=3`` in a tool's output is one case's log, however often printed."""
    rng = random.Random(3)
    field = word(rng)
    rows = [row(n, n, f"{word(rng)}.run", f"status=ok {field}={n % 2}") for n in range(6)]
    with Reverie.open(tmp_path / "brain.db") as rv:
        nightly(rv, rows)
        assert facts(rv) == {}


def test_values_agree_as_whole_words_only() -> None:
    assert agree("Hollins", "Dr. Hollins") and agree("Dr. Vasquez-Reid", "vasquez-reid")
    assert not agree("15:15", "15:45") and not agree("10.0.0.1", "10.0.0.12")
    assert not agree("us-east-1", "us-east-1a") and not agree("on", "on call")
