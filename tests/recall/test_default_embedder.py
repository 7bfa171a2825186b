"""Recall by meaning with the default embedder (MiniLM, the ``embed`` extra), before any cycle.

The real model runs here: what is added is found by meaning at once (recall embeds the episodes
stored since the last indexing), and the answer floor follows the brain's size
(:mod:`reverie.recall.floor`), so a tiny brain answers a paraphrase and a never-stored question
still gets an empty section.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from reverie import Reverie
from reverie.bench.floor import run_floor_bench
from reverie.cli.demo import DEMO_SCOPE, _replay_week
from reverie.embed import minilm_available
from reverie.recall.floor import calibrated, expected_max

pytestmark = pytest.mark.skipif(not minilm_available(), reason="needs the embed extra")

MINILM = "all-MiniLM-L6-v2-int8"


@pytest.fixture
def default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Nothing names an embedder: the default a new user gets."""
    monkeypatch.delenv("REVERIE_EMBEDDER", raising=False)
    monkeypatch.setenv("REVERIE_CONFIG", str(tmp_path / "none.toml"))


@pytest.fixture
def alice(default: None, tmp_path: Path) -> Reverie:
    rv = Reverie.open(tmp_path / "mem0.db")
    rv.add(
        "I am working on improving my tennis skills. Suggest some online courses.",
        user_id="alice",
    )
    rv.add(
        [
            {"role": "user", "content": "I'm a vegetarian and allergic to nuts."},
            {"role": "assistant", "content": "Noted! I'll avoid nuts in my suggestions."},
        ],
        user_id="alice",
    )
    return rv


@pytest.mark.parametrize("question", ["Does alice have allergies?", "what food should I avoid?"])
def test_the_mem0_quickstart_is_answered_by_meaning_before_any_dream(
    alice: Reverie, question: str
) -> None:
    assert alice.embedder is not None and alice.embedder.model_id == MINILM
    found = alice.search(question, user_id="alice")
    assert found and "vegetarian" in found[0].memory
    assert all("tennis" not in m.memory for m in found)
    alice.close()


@pytest.mark.xfail(
    strict=True,
    reason="before a dream the tennis turn holds a request too ('Suggest some online courses.'):"
    " MiniLM puts 'What are hobbies?' at cosine 0.148 from it, under the answer floor of a"
    " brain of two (0.167); the capital of Mongolia is at 0.07 from the vegetarian line",
)
def test_the_mem0_hobbies_question(alice: Reverie) -> None:
    found = alice.search("What are Alice's hobbies?", user_id="alice")
    alice.close()
    assert found and "tennis" in found[0].memory


@pytest.mark.parametrize(
    ("question", "key"),
    [
        pytest.param(
            "What are Alice's hobbies?",
            "tennis",
            marks=pytest.mark.xfail(
                strict=True,
                reason="after the dream the tennis statement on its own reaches 0.213, under the"
                " floor of two turns and four claims counted as six draws (0.223); counting the"
                " claims as restating their turns (four draws) passed it, but cost the ops"
                " world three never-stored questions",
            ),
        ),
        ("Does alice have allergies?", "vegetarian"),
        ("what food should I avoid?", "vegetarian"),
    ],
)
def test_the_mem0_quickstart_is_answered_after_the_dream(
    alice: Reverie, question: str, key: str
) -> None:
    alice.dream("default/default/alice")
    found = alice.search(question, user_id="alice")
    assert found and key in found[0].memory, found
    assert alice.search("What is the capital of Mongolia?", user_id="alice") == []
    alice.close()


def test_a_never_stored_question_to_the_quickstart_brain_is_empty(alice: Reverie) -> None:
    assert alice.search("What is the capital of Mongolia?", user_id="alice") == []
    alice.close()


@pytest.mark.usefixtures("default")
def test_a_brain_of_three_memories_answers_a_paraphrase(tmp_path: Path) -> None:
    scope = "acme/assistant/bob"
    with Reverie.open(tmp_path / "three.db") as rv:
        for text in (
            "Our production database runs on db-3.internal, port 5433.",
            "I take the train to work every morning at 7:40.",
            "My daughter Emma starts school in September.",
        ):
            rv.add(text, scope=scope)
        answer = rv.recall("when does my kid begin her classes", scope, 300)
        assert "Emma" in answer.text and "db-3" not in answer.text
        assert rv.recall("what is the boiling point of mercury", scope, 300).text == ""


@pytest.mark.usefixtures("default")
def test_the_demo_brain_answers_a_paraphrase_with_its_deploy_knowledge(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "demo.db") as rv:
        last = _replay_week(rv, Console(file=io.StringIO()))
        answer = rv.recall("how do I ship the service to the cluster", DEMO_SCOPE, 250, now=last)
        pages = [i for i in answer.items if i.kind == "page"]
        assert any("kubectl rollout status" in i.text for i in pages), answer.text
        assert rv.recall("how tall is the Eiffel tower", DEMO_SCOPE, 250, now=last).text == ""


@pytest.mark.parametrize(
    ("n", "k"), [(1, 0.0), (3, 0.87), (100, 2.5), (20_000, 4.0), (100_000, 4.37)]
)
def test_the_expected_best_of_n_unrelated_draws(n: int, k: float) -> None:
    assert expected_max(n) == pytest.approx(k, abs=0.02)


def test_the_floors_rise_with_the_brain_and_exist_only_for_a_measured_model() -> None:
    floors = [calibrated(MINILM, n) for n in (3, 100, 20_000)]
    answers = [f.answer for f in floors if f is not None]
    assert len(answers) == 3 and answers == sorted(answers) and answers[0] < 0.3 < answers[-1]
    assert all(f is not None and f.unit < f.plain <= f.answer for f in floors)
    assert calibrated("hashing-v1-256", 100) is None


def test_one_calibration_answers_three_memories_and_empties_a_large_brain() -> None:
    """`reverie bench floor` at a test's size: the same floors answer paraphrases in a brain of
    three and leave never-stored questions (checked absent from every episode) empty in a
    generated brain of hundreds, while on-topic queries there still find something."""
    result = run_floor_bench(400, queries=10)
    assert all(result.small_paraphrases) and all(result.small_never)
    assert len(result.large_never) >= 50 and result.never_empty >= 0.9, result.to_dict()
    assert sum(result.large_on_topic) >= 8
