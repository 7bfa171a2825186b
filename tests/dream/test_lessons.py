"""What one problem teaches: lessons synthesised across paraphrases, fixes from failure then
success."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from reverie.config import DreamConfig
from reverie.dream.cluster import error_class
from reverie.dream.lessons import Fix, current_fix, synthesize_lessons
from reverie.models import ClaimRole, Episode, Scope

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
SCOPE = Scope(tenant="acme", agent="coder")
ROLLOUT = (
    "Wait for the rollout with kubectl rollout status --timeout=10m after every apply.",
    "After kubectl apply, always wait on kubectl rollout status with a 10m timeout.",
    "kubectl apply --wait times out; follow it with rollout status --timeout=10m instead.",
)


def episode(n: int, **fields: Any) -> Episode:
    data: dict[str, Any] = {
        "id": f"ep-{n:05d}",
        "seq": n,
        "scope": SCOPE,
        "created_at": T0 + timedelta(hours=n),
        "situation": "deploying the api service to staging",
        "action": "kubectl apply -f manifests/",
        "outcome": "failure",
        "error": "TimeoutError: timed out waiting for the condition",
    }
    data.update(fields)
    return Episode.parse(data)


def taught(*lessons: str | None) -> list[Episode]:
    return [episode(i + 1, lesson=text) for i, text in enumerate(lessons)]


# --- stated lessons ----------------------------------------------------------------------------


def test_paraphrases_are_one_lesson_worded_by_the_most_central_variant() -> None:
    eps = taught(ROLLOUT[0], ROLLOUT[1], ROLLOUT[2], ROLLOUT[1], "Pin the chart version.")
    rollout, chart = synthesize_lessons(eps)
    assert rollout.text == ROLLOUT[1]  # taught twice, like the others: the centre
    assert [e.id for e in rollout.episodes] == ["ep-00001", "ep-00002", "ep-00003", "ep-00004"]
    assert (chart.text, chart.support) == ("Pin the chart version.", 1)
    claim = rollout.claim(400)
    assert claim.role is ClaimRole.LESSON and claim.text == ROLLOUT[1]
    assert claim.episode_ids == ("ep-00001", "ep-00002", "ep-00003", "ep-00004")
    assert (claim.support, claim.first_seen, claim.last_seen) == (
        4,
        eps[0].created_at,
        eps[3].created_at,
    )


def test_the_same_words_in_another_case_or_punctuation_are_one_variant() -> None:
    eps = taught("Pin the chart version.", "pin the chart version", "PIN THE CHART VERSION!")
    (lesson,) = synthesize_lessons(eps)
    assert lesson.text == "Pin the chart version." and lesson.support == 3  # first wording


def test_templates_are_never_lessons() -> None:
    eps = taught("n/a", "N/A", None, "", "TBD.", "ok")
    assert synthesize_lessons(eps) == []


def test_most_supported_first_then_first_taught() -> None:
    eps = taught("Drain the node first.", "Pin the chart version.", "Pin the chart version.",
                 "Rotate the registry token.")  # fmt: skip
    assert [g.text for g in synthesize_lessons(eps)] == [
        "Pin the chart version.",
        "Drain the node first.",
        "Rotate the registry token.",
    ]


def test_relative_dates_are_resolved_against_the_teaching_episode() -> None:
    (lesson,) = synthesize_lessons(taught("The API changed yesterday; pin the client."))
    assert lesson.text == "The API changed yesterday (2026-11-01); pin the client."


def test_a_dont_is_a_warning_and_long_lessons_are_cut() -> None:
    (warning,) = synthesize_lessons(taught("Don't deploy while the node pool is scaling."))
    assert warning.claim(400).role is ClaimRole.WARNING
    (long,) = synthesize_lessons(taught("drain the node " * 70))  # words about the work
    claim = long.claim(100)
    assert len(claim.text) == 100 and claim.text.endswith("…") and "\n" not in claim.text


class TableEmbedder:
    """Texts in a table get its vector, others their own axis: meaning without shared words."""

    model_id = "table"
    dim = 3

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        self.table = table

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        rows = [self.table.get(t, (0.0, 0.0, 1.0)) for t in texts]
        out = np.asarray(rows, dtype=np.float32)
        return np.asarray(out / np.linalg.norm(out, axis=1, keepdims=True), dtype=np.float32)


def test_with_an_embedder_lessons_are_one_by_meaning() -> None:
    quota = "The search API allows ten requests a minute."
    throttle = "Throttle queries to one every six seconds."
    eps = taught(quota, throttle, throttle)
    assert len(synthesize_lessons(eps)) == 2  # no words in common
    near = TableEmbedder({quota: (1.0, 0.1, 0.0), throttle: (1.0, 0.0, 0.0)})
    (lesson,) = synthesize_lessons(eps, embedder=near, config=DreamConfig(lesson_cosine=0.75))
    assert lesson.text == throttle and lesson.support == 3
    far = TableEmbedder({quota: (1.0, 0.0, 0.0), throttle: (0.0, 1.0, 0.0)})
    assert len(synthesize_lessons(eps, embedder=far, config=DreamConfig(lesson_cosine=0.75))) == 2


@given(
    st.lists(st.sampled_from([*ROLLOUT, "Pin the chart version.", "ok", None]), max_size=12),
    st.randoms(use_true_random=False),
)
@settings(max_examples=50, deadline=None)
def test_lessons_ignore_order_and_cite_each_teacher_once(
    lessons: list[str | None], rnd: Any
) -> None:
    eps = taught(*lessons)
    groups = synthesize_lessons(eps)
    shuffled = list(eps)
    rnd.shuffle(shuffled)
    assert synthesize_lessons(shuffled) == groups
    cited = [e.id for g in groups for e in g.episodes]
    assert len(cited) == len(set(cited))
    assert set(cited) == {e.id for e in eps if e.lesson in (*ROLLOUT, "Pin the chart version.")}


# --- failure then fix --------------------------------------------------------------------------


def attempt(n: int, action: str, ok: bool, **fields: Any) -> Episode:
    result = {"outcome": "success", "error": None} if ok else {}
    return episode(n, action=action, **{**result, **fields})


def fix_of(eps: Sequence[Episode]) -> Fix | None:
    return current_fix(eps, lambda ep: error_class(ep.error))


def test_no_failure_no_fix() -> None:
    assert fix_of([attempt(1, "kubectl apply", True), attempt(2, "helm upgrade", True)]) is None
    assert fix_of([]) is None


def test_a_different_action_that_worked_after_a_failure_is_the_fix() -> None:
    eps = [
        attempt(1, "helm upgrade --install", True),  # before any failure: not a fix
        attempt(2, "kubectl apply", False),
        attempt(3, "kubectl apply", False, error="HTTP Error 503"),
        attempt(4, "kubectl apply", False),
        attempt(5, "kubectl apply --timeout=10m", True),
    ]
    fix = fix_of(eps)
    assert fix is not None
    assert (fix.action, fix.error, fix.situation) == (
        "kubectl apply --timeout=10m",
        "TimeoutError",  # the commonest class of the failures before it
        "deploying the api service to staging",
    )
    assert [e.id for e in fix.successes] == ["ep-00005"] and fix.attempts == 1
    assert fix.since == eps[-1].created_at
    claim = fix.claim(400)
    assert claim.text == (
        "When deploying the api service to staging fails with TimeoutError:"
        " kubectl apply --timeout=10m worked (1 of 1 times since 2026-11-02)."
    )
    assert (claim.role, claim.episode_ids, claim.support) == (ClaimRole.FIX, ("ep-00005",), 1)


def test_a_retry_of_the_action_that_failed_is_no_fix() -> None:
    eps = [attempt(1, "kubectl apply -f manifests/", False)]
    eps += [attempt(2, "kubectl apply -f manifests/", True)]
    assert fix_of(eps) is None


def test_attempts_of_the_fix_count_its_failures_too() -> None:
    eps = [
        attempt(1, "kubectl apply", False),
        attempt(2, "kubectl apply --timeout=10m", True),
        attempt(3, "kubectl apply --timeout=10m manifests", False),  # the same, reworded
        attempt(4, "kubectl apply --timeout=10m", True),
    ]
    fix = fix_of(eps)
    assert fix is not None and fix.attempts == 3
    assert [e.id for e in fix.successes] == ["ep-00002", "ep-00004"]
    claim = fix.claim(400)
    assert "(2 of 3 times since 2026-11-02)" in claim.text and claim.support == 2
    assert (claim.first_seen, claim.last_seen) == (eps[1].created_at, eps[3].created_at)


def test_a_fix_that_failed_once_and_worked_again_is_still_the_fix() -> None:
    longer = "kubectl apply with a longer timeout"
    eps = [attempt(1, "kubectl apply", False), attempt(2, longer, True)]
    eps += [attempt(3, longer, False), attempt(4, longer, True)]
    fix = fix_of(eps)  # its later failure does not make its first success a retry
    assert fix is not None and fix.action == longer
    assert (len(fix.successes), fix.attempts) == (2, 3)


def test_adding_a_flag_is_another_action() -> None:
    eps = [attempt(1, "kubectl apply", False), attempt(2, "kubectl apply --timeout=10m", True)]
    fix = fix_of(eps)
    assert fix is not None and fix.action == "kubectl apply --timeout=10m"
    same_flags = [
        attempt(1, "kubectl apply --wait", False),
        attempt(2, "kubectl apply --wait", True),
    ]
    assert fix_of(same_flags) is None


def test_a_fix_whose_last_attempt_failed_has_stopped_working() -> None:
    eps = [
        attempt(1, "kubectl apply", False),
        attempt(2, "kubectl apply --timeout=10m", True),
        attempt(3, "kubectl apply --timeout=10m", False),
    ]
    assert fix_of(eps) is None
    newer = fix_of([*eps, attempt(4, "helm upgrade --wait --atomic", True)])
    assert newer is not None and newer.action == "helm upgrade --wait --atomic"


def test_among_working_fixes_the_latest_success_wins() -> None:
    eps = [
        attempt(1, "kubectl apply", False),
        attempt(2, "kubectl apply --timeout=10m", True),
        attempt(3, "kubectl apply", False),
        attempt(4, "helm upgrade --wait --atomic", True),
    ]
    fix = fix_of(eps)
    assert fix is not None and fix.action == "helm upgrade --wait --atomic"
    again = fix_of([*eps, attempt(5, "kubectl apply --timeout=10m", True)])
    assert again is not None and again.action == "kubectl apply --timeout=10m"
    assert len(again.successes) == 2


def test_a_routine_success_that_answers_no_failure_is_not_a_fix() -> None:
    eps = [
        attempt(1, "kubectl apply", False),
        attempt(2, "kubectl apply --timeout=10m", True),
        attempt(3, "kubectl get pods", True),
        attempt(4, "kubectl get pods", True),
    ]
    fix = fix_of(eps)
    assert fix is not None and fix.action == "kubectl apply --timeout=10m"
    in_session = [
        attempt(1, "kubectl apply", False, session_id="s1"),
        attempt(2, "kubectl get pods", True, session_id="s2"),
    ]
    assert fix_of(in_session) is None  # another session's success answers nothing
    answered = [*in_session, attempt(3, "kubectl apply --wait", True, session_id="s1")]
    fixed = fix_of(answered)
    assert fixed is not None and fixed.action == "kubectl apply --wait"


def test_a_fix_without_situation_or_error_class_still_reads() -> None:
    eps = [attempt(1, "make", False, situation=" ", error="boom"), attempt(2, "make clean", True)]
    fix = fix_of(eps)
    assert fix is not None and (fix.situation, fix.error) == ("", None)
    assert fix.claim(400).text.startswith("When this fails: make clean worked (1 of 1 times")


@pytest.mark.parametrize("shuffle_seed", range(5))
def test_the_fix_ignores_input_order(shuffle_seed: int) -> None:
    eps = [
        attempt(1, "kubectl apply", False),
        attempt(2, "kubectl apply --timeout=10m", True),
        attempt(3, "kubectl apply --timeout=10m", False),
        attempt(4, "helm upgrade --wait --atomic", True),
    ]
    shuffled = list(eps)
    random.Random(shuffle_seed).shuffle(shuffled)
    assert fix_of(shuffled) == fix_of(eps)
