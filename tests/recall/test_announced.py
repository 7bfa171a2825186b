"""A change a speaker announces retires what they said before it
(:mod:`reverie.recall.outdated`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.recall.outdated import announces

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
SCOPE = "default/default/bram"
QUESTION = "Which pill does Bram take in the morning?"


def _chat(rv: Reverie, *turns: tuple[int, str], user: str = "bram") -> None:
    for day, text in turns:
        rv.add(text, user_id=user, now=T0 + timedelta(days=day))


def _found(rv: Reverie, question: str = QUESTION, **when: datetime) -> str:
    return rv.recall(question, SCOPE, 400, **({"now": T0 + timedelta(days=30)} | when)).text


@pytest.mark.parametrize(
    ("text", "change"),
    [
        ("The pharmacist swapped me onto atorvastatin, I take it each morning now.", True),
        ("We changed our minds, and Norway won.", True),
        ("new boss: Ferdinand. starts monday", True),
        ("I no longer drive the Clio.", True),
        ("I take propranolol every morning.", False),
        ("I renewed my passport.", False),  # "new" inside a word says nothing
        ("I've been vegetarian for about six years now.", False),  # how long it has held
    ],
)
def test_the_words_that_announce_a_change(text: str, change: bool) -> None:
    assert announces(text) is change


def test_a_later_announced_change_retires_the_older_statement(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        _chat(
            rv,
            (0, "I take propranolol every morning, so flag anything that interacts."),
            (9, "The pharmacist swapped my morning pill: I take atorvastatin now."),
        )
        found = _found(rv)
        assert "atorvastatin" in found
        assert "propranolol" not in found
        before = _found(rv, as_of=T0 + timedelta(days=3))  # the past still answers as it was
        assert "propranolol" in before
        assert "atorvastatin" not in before


def test_a_statement_without_a_change_retires_nothing(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        _chat(
            rv,
            (0, "I take propranolol every morning, so flag anything that interacts."),
            (9, "I also take vitamin D with my morning pill."),
        )
        found = _found(rv)
        assert "propranolol" in found
        assert "vitamin" in found


def test_a_restatement_with_a_change_word_retires_nothing(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        _chat(
            rv,
            (0, "I take propranolol every morning."),
            (9, "I take propranolol every morning now."),
        )
        assert "propranolol" in _found(rv)


def test_another_speakers_change_never_retires_ones_words(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        rv.add(
            [
                {"role": "user", "content": "I take propranolol every morning."},
                {"role": "assistant", "content": "Noted: I will check interactions."},
            ],
            user_id="bram",
            now=T0,
        )
        rv.add(
            [
                {"role": "user", "content": "What should I ask the pharmacist?"},
                {"role": "assistant", "content": "Many take atorvastatin each morning now."},
            ],
            user_id="bram",
            now=T0 + timedelta(days=9),
        )
        assert "propranolol" in _found(rv)


def test_agent_work_is_never_retired(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        for day, text in (
            (0, "deploy api with morning pill schedule propranolol flag"),
            (9, "deploy api now uses morning pill schedule atorvastatin flag"),
        ):
            episode = {"situation": text, "action": "deploy api", "outcome": "success"}
            rv.remember(episode, scope=SCOPE, now=T0 + timedelta(days=day))
        found = _found(rv, "morning pill schedule flag for deploy api?")
        assert "propranolol" in found
        assert "atorvastatin" in found


def test_a_story_between_named_people_is_never_retired(tmp_path: Path) -> None:
    """Named speakers tell events, each true of its day: a "finally" replaces nothing."""
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        for day, text in (
            (0, "I take propranolol every morning, so flag anything that interacts."),
            (9, "The pharmacist swapped my morning pill: I take atorvastatin now."),
        ):
            turn = {"role": "user", "name": "Bram", "content": text}
            rv.add([turn], user_id="bram", now=T0 + timedelta(days=day))
        found = _found(rv)
        assert "propranolol" in found
        assert "atorvastatin" in found


def test_a_change_the_reader_can_name_retires_only_statements_of_it(tmp_path: Path) -> None:
    """ "A new job at Hooli" changes the employer: a diet said before it stays."""
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        _chat(
            rv,
            (0, "I've been vegetarian for about six years, so no meat in my lunch please."),
            (9, "I just started a new job at Hooli!"),
        )
        found = _found(rv, "Which lunch suits Bram at the new job, still vegetarian?")
        assert "vegetarian" in found
        assert "Hooli" in found
