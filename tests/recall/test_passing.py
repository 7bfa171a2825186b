"""A name said in passing before a change of value is the older side of that change
(:mod:`reverie.recall.passing`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.embed import minilm_available
from reverie.recall.passing import KIN_COSINE, Kin, nearest_kind, passing_names

T0 = datetime(2026, 5, 4, 18, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Writing to you from Porto, the trams are lovely today.", ["Porto"]),
        ("Porto is lovely. We ate at Tasca Lusa twice.", ["Tasca", "Lusa"]),
        ("I live in Oslo now.", []),
        (
            "Signed up for the Bergen marathon, wish me luck.",
            [],
        ),  # it names the marathon  # a value it states is no passing mention
        ("what a day, honestly", []),
    ],
)
def test_the_names_a_text_mentions_without_stating_them(text: str, names: list[str]) -> None:
    assert passing_names(text) == names


def _kin(table: dict[tuple[str, str], float]) -> Kin:
    def cosines(name: str, values: Sequence[str]) -> list[float]:
        return [table.get((name, v), 0.0) for v in values]

    return cosines


def test_the_kind_of_a_name_is_its_nearest_value_over_the_line() -> None:
    values = {"lives in": "Oslo", "works at": "Fabrikam", "reply in": "Dutch"}
    near = _kin({("Porto", "Oslo"): KIN_COSINE + 0.1, ("Porto", "Dutch"): KIN_COSINE + 0.05})
    assert nearest_kind("Porto", values, near) == "lives in"
    far = _kin({("Porto", "Oslo"): KIN_COSINE - 0.01})
    assert nearest_kind("Porto", values, far) is None
    assert nearest_kind("Oslo", values, near) is None  # a current value is not the old side
    assert nearest_kind("Porto", {}, near) is None


needs_minilm = pytest.mark.skipif(not minilm_available(), reason="needs the embed extra")

CHAT = (
    (0, "Writing to you from Porto, the trams are lovely today."),
    (1, "My son Rafael starts swimming lessons next week."),
    (3, "Just so you know, I live in Oslo now."),
)


def _brain(path: Path) -> Reverie:
    rv = Reverie.open(path, embedder="minilm")
    for day, text in CHAT:
        rv.add(text, user_id="ines", now=T0 + timedelta(days=day))
    return rv


@needs_minilm
def test_a_city_named_in_passing_before_a_move_does_not_answer_where_they_live(
    tmp_path: Path,
) -> None:
    with _brain(tmp_path / "ines.db") as rv:
        scope = "default/default/ines"
        now = T0 + timedelta(days=4)
        found = rv.recall("Which town does Ines call home?", scope, 400, now=now).text
        assert "Porto" not in found
        assert "Oslo" in found
        son = rv.recall("What is the name of Ines's boy?", scope, 400, now=now).text
        assert "Rafael" in son  # a name of another kind is left as it is
        then = rv.recall(
            "Which town does Ines call home?", scope, 400, as_of=T0 + timedelta(days=2)
        )
        assert "Oslo" not in then.text
