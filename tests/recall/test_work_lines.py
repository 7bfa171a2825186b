"""A failed attempt's recall line says what was tried and how it failed; a success's line and a
turn of a dialogue stay the excerpt of what matched (:func:`~reverie.recall.units.episode_excerpt`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from reverie import Reverie
from reverie.models import Episode, Outcome
from reverie.recall.query import stems
from reverie.recall.units import WORK_EXCERPT_CHARS, episode_excerpt, excerpt

T0 = datetime(2026, 6, 3, 9, tzinfo=UTC)


def _episode(**fields: object) -> Episode:
    base: dict[str, object] = {
        "id": "ep-1",
        "scope": "orbit/backend",
        "created_at": T0,
        "situation": "Full build of the SDK for the sample app",
        "action": "./gradlew assembleRelease --offline",
        "outcome": Outcome.FAILURE,
        "error": "R8: Missing class com.lumen.sdk.model.Payload",
    }
    return Episode.model_validate(base | fields)


def _line(episode: Episode, question: str) -> str:
    return episode_excerpt(episode, excerpt(episode.text, sorted(stems(question))))


def test_a_failed_attempt_shows_its_situation_action_and_error_in_reading_order() -> None:
    line = _line(_episode(), "the sdk build for the sample app")
    assert line == (
        "Full build of the SDK for the sample app — ./gradlew assembleRelease --offline"
        " — R8: Missing class com.lumen.sdk.model.Payload"
    )


def test_what_the_excerpt_picked_beyond_the_course_is_kept_in_its_place() -> None:
    ep = _episode(lesson="Shrinking drops classes used only by reflection")
    line = _line(ep, "reflection classes dropped")
    assert line.endswith("Payload — Shrinking drops classes used only by reflection")
    assert line.startswith("Full build of the SDK")


def test_a_success_and_a_turn_keep_the_excerpt_of_what_matched() -> None:
    done = _episode(outcome=Outcome.SUCCESS, error=None)
    assert _line(done, "sdk sample app") == done.situation
    turn = Episode.model_validate(
        {
            "id": "ep-2",
            "scope": "acme/assistant/maya",
            "created_at": T0,
            "situation": "I moved to Lisbon last spring.",
            "action": "Noted!",
            "outcome": Outcome.UNKNOWN,
            "metadata": {"role": "user"},
        }
    )
    assert _line(turn, "where does she live") == turn.situation


def test_a_long_course_is_cut_at_a_word_without_a_dangling_separator() -> None:
    ep = _episode(action="edit_file " + '{"path": "src/app.rs", ' * 12 + "}")
    line = _line(ep, "sdk build")
    assert len(line) <= WORK_EXCERPT_CHARS + 2 and line.endswith(" …")
    assert not line.removesuffix(" …").endswith("—")


def test_recall_of_a_failure_tells_the_agent_what_not_to_do_again(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "b.db", embedder=None) as rv:
        rv.ingest([_episode().model_dump(mode="json")])
        section = rv.recall("sdk build for the sample app", "orbit/backend", 200).text
    assert "./gradlew assembleRelease --offline — R8: Missing class" in section
    assert "[1, 2026-06-03, failure] Full build of the SDK" in section
