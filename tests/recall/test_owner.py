"""A brain of one person is that person: a question naming them asks about the scope itself.

People do not say their own name, so in their scope it is neither a term to search for nor
something "never mentioned" that asks a unit for one shared term more; for meaning it is the
speaker of every first-person statement, whose words never hold it
(:func:`reverie.recall.query.unnamed`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.recall.query import owner_words, unnamed
from reverie.recall.units import excerpt

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)


@pytest.mark.parametrize(
    ("user", "words"),
    [
        ("maya", {"maya"}),
        ("priya-00", {"priya"}),
        ("j.smith@acme", {"smith"}),
        (None, set()),
    ],
)
def test_the_words_of_a_user_id_that_name_the_person(user: str | None, words: set[str]) -> None:
    assert owner_words(user) == words


def test_the_embedder_reads_a_question_about_the_owner_without_their_name() -> None:
    owner = owner_words("maya-3")
    assert unnamed("What is Maya's city? Does maya have a dog?", owner) == (
        "What is city? Does have a dog?"
    )
    assert unnamed("Where does Mayan art come from?", owner) == "Where does Mayan art come from?"
    assert unnamed("Where does Maya live?", frozenset()) == "Where does Maya live?"


TALK = (
    "Can you suggest a podcast for a long train ride?",
    "Write me a short poem about autumn leaves.",
    "Is there a live recording of that concert?",
    "Explain compound interest like I'm twelve.",
    "Now that I live in Lisbon, my mornings look totally different.",
)


@pytest.mark.parametrize("question", ["Where does Maya live?", "Where does maya live now?"])
def test_the_owner_s_name_does_not_count_against_a_question_about_them(
    tmp_path: Path, question: str
) -> None:
    # the name no line holds would be the rarest term of the question, and something the
    # brain "never mentions": neither, in Maya's own brain
    with Reverie.open(tmp_path / "maya.db", embedder="none") as rv:
        for i, text in enumerate(TALK):
            turn = [{"role": "user", "content": text}, {"role": "assistant", "content": "Sure."}]
            rv.add(turn, user_id="maya-3", now=T0 + timedelta(hours=i))
        found = rv.recall(question, "default/default/maya-3", 300, now=T0 + timedelta(days=1))
        assert "Lisbon" in found.text, found.text


def test_an_episode_found_by_meaning_alone_shows_what_its_speaker_said_first() -> None:
    text = "Morning! I keep Tuesday free for my family, no meetings.\nGot it, I'll remember that."
    assert excerpt(text, ["schedul"]) == "Morning! I keep Tuesday free for my family, no meetings."
    asked = "Any tips for staying focused?\nHere are three options."
    assert excerpt(asked, ["fun"]) == "Any tips for staying focused?"
    assert excerpt(text, ["tuesdai"]) == "I keep Tuesday free for my family, no meetings."
