"""The extractive distiller: cited, deterministic claims and an honest confidence."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.config import DreamConfig
from reverie.dream.cluster import cluster
from reverie.dream.distill import ExtractiveDistiller, is_template_lesson
from reverie.dream.plan import CreatePage, Evidence, Plan, RevisePage, page_id_for, validate_plan
from reverie.models import (
    Claim,
    Episode,
    Outcome,
    Page,
    PageKind,
    PageStatus,
    Revision,
    Scope,
    revision_hash,
)

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 12, 1, tzinfo=UTC)
SCOPE = Scope(tenant="acme", agent="coder")
KEY = "deploy|kubectl"


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
        "category": "deploy",
        "tools": ["kubectl"],
    }
    data.update(fields)
    return Episode.parse(data)


def evidence(eps: list[Episode], key: str = KEY, page: Page | None = None) -> Evidence:
    history = {page.id: tuple(e for e in eps if e.id in page.citations)} if page else {}
    return Evidence(
        scope=SCOPE,
        topic_key=key,
        episodes=tuple(e for e in eps if not page or e.id not in page.citations),
        pages=(page,) if page else (),
        history=history,
        now=NOW,
    )


def only_op(plan: Plan) -> CreatePage | RevisePage:
    (op,) = plan.operations
    assert isinstance(op, CreatePage | RevisePage)
    return op


def created(plan: Plan) -> CreatePage:
    op = only_op(plan)
    assert isinstance(op, CreatePage)
    return op


def texts(op: CreatePage | RevisePage) -> list[str]:
    return [c.text for c in op.claims]


def page_from(op: CreatePage, revision_number: int = 1) -> Page:
    """The page the store would hold after applying ``op``."""
    hashed = revision_hash(
        title=op.title,
        kind=op.kind,
        claims=op.claims,
        confidence=op.confidence,
        status=PageStatus.ACTIVE,
        valid_from=op.valid_from,
        valid_until=None,
        superseded_by=None,
    )
    page_id = page_id_for(SCOPE, op.topic_key)
    revision = Revision(
        page_id=page_id,
        number=revision_number,
        hash=hashed,
        title=op.title,
        kind=op.kind,
        claims=op.claims,
        confidence=op.confidence,
        status=PageStatus.ACTIVE,
        valid_from=op.valid_from,
        created_at=NOW,
    )
    return Page(
        id=page_id,
        scope=SCOPE,
        topic_key=op.topic_key,
        revision=revision,
        created_at=NOW,
        updated_at=NOW,
    )


def four_of_six() -> list[Episode]:
    days = [0, 1, 2, 3, 3, 3]
    outcomes = ["failure", "success", "failure", "failure", "success", "failure"]
    return [
        episode(
            i + 1,
            created_at=T0 + timedelta(days=d, hours=i),
            outcome=o,
            error=None if o == "success" else "requests.exceptions.ReadTimeout: read timed out",
        )
        for i, (d, o) in enumerate(zip(days, outcomes, strict=True))
    ]


def test_tally_for_four_failures_in_six() -> None:
    eps = four_of_six()
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    failed, succeeded = op.claims[0], op.claims[1]
    assert failed.text == "Failed 4 of 6 times with TimeoutError (2026-11-02 to 2026-11-05)."
    assert failed.episode_ids == ("ep-00001", "ep-00003", "ep-00004", "ep-00006")
    assert succeeded.text == "Succeeded 2 of 6 times."
    assert succeeded.episode_ids == ("ep-00002", "ep-00005")


def test_other_outcomes_use_their_own_words() -> None:
    eps = [
        episode(1, outcome="timeout"),
        episode(2, outcome="partial", error=None),
        episode(3, outcome="unknown", error=None),
    ]
    tally = texts(only_op(ExtractiveDistiller().distill(evidence(eps))))
    assert "Timed out 1 of 3 times (2026-11-02)." in tally
    assert "Partially succeeded 1 of 3 times (2026-11-02)." in tally
    assert "Ended with an unknown outcome 1 of 3 times (2026-11-02)." in tally


def test_a_new_topic_is_created_with_the_evidence_topic_key() -> None:
    eps = four_of_six()
    plan = ExtractiveDistiller().distill(evidence(eps))
    op = only_op(plan)
    assert isinstance(op, CreatePage)
    assert op.topic_key == KEY
    assert op.title == "deploy · kubectl: fails with TimeoutError"
    assert op.valid_from == eps[0].created_at
    assert plan.distiller == "extractive"
    assert validate_plan(plan, evidence(eps)) == []


def test_titles_read_from_the_key() -> None:
    ok = [
        episode(i, category="search", tools=["web_search"], error=None, outcome="success")
        for i in range(1, 3)
    ]
    op = only_op(ExtractiveDistiller().distill(evidence(ok, "search|web_search")))
    assert op.title == "search · web_search"
    bare = only_op(ExtractiveDistiller().distill(evidence(ok, "general|-|database+orders")))
    assert bare.title == "general · database, orders"
    odd = only_op(ExtractiveDistiller().distill(evidence(ok, "my own topic")))
    assert odd.title == "my own topic"


def test_confidence_formula_and_consistency() -> None:
    eps = four_of_six()
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    support = sum(max(0.5, (e.importance or 5) / 5) for e in eps)  # failures 7, successes 3
    assert op.confidence == round(0.95 * (1 - 0.6**support) * (0.5 + 0.5 * 4 / 6), 3)


def test_low_confidence_is_always_a_note_even_with_a_lesson() -> None:
    lone = [episode(1, lesson="Raise the rollout timeout to 10 minutes for the api service.")]
    op = only_op(ExtractiveDistiller().distill(evidence(lone)))
    assert op.confidence < DreamConfig().lesson_min_confidence
    assert op.kind == PageKind.NOTE
    strict = ExtractiveDistiller(DreamConfig(lesson_min_confidence=0.99))
    assert only_op(strict.distill(evidence(four_of_six()))).kind == PageKind.NOTE


@pytest.mark.parametrize(
    ("outcomes", "lesson", "kind"),
    [
        (["failure"] * 3, "Raise the rollout timeout.", PageKind.LESSON),
        (["failure"] * 3, None, PageKind.WARNING),
        (["success"] * 3, None, PageKind.PROCEDURE),
        (["unknown"] * 3, None, PageKind.FACT),
    ],
)
def test_kind_follows_the_evidence(outcomes: list[str], lesson: str | None, kind: PageKind) -> None:
    eps = [
        episode(i + 1, outcome=o, lesson=lesson, error=None if o != "failure" else "boom")
        for i, o in enumerate(outcomes)
    ]
    assert only_op(ExtractiveDistiller().distill(evidence(eps))).kind == kind


@pytest.mark.parametrize(
    "text",
    [
        "approach worked",
        "Approach worked.",
        " IT WORKED! ",
        "worked",
        "Success",
        "succeeded",
        "failed",
        "N/A",
        "n/a.",
        "None",
        "ok",
        "OK!",
        "Task completed.",
        "no lesson",
        "",
        "  ...  ",
    ],
)
def test_template_lessons_are_recognised(text: str) -> None:
    assert is_template_lesson(text)


@pytest.mark.parametrize("text", ["Pin the chart version", "approach worked after pinning v2"])
def test_real_lessons_are_not_templates(text: str) -> None:
    assert not is_template_lesson(text)


_TEMPLATES = st.sampled_from(
    [
        "approach worked",
        "it worked",
        "worked",
        "success",
        "succeeded",
        "failed",
        "n/a",
        "none",
        "ok",
        "task completed",
        "no lesson",
    ]
)


@st.composite
def template_variants(draw: st.DrawFn) -> str:
    words = draw(_TEMPLATES)
    cased = "".join(c.upper() if draw(st.booleans()) else c for c in words)
    return (
        draw(st.sampled_from(["", " ", "  "])) + cased + draw(st.sampled_from(["", ".", "!", " ."]))
    )


@given(st.lists(template_variants(), min_size=1, max_size=6))
@settings(max_examples=40, deadline=None)
def test_template_lessons_never_make_a_lesson(lessons: list[str]) -> None:
    eps = [episode(i + 1, lesson=text) for i, text in enumerate(lessons)]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    assert op.kind != PageKind.LESSON
    claim_texts = {c.text.strip().lower() for c in op.claims}
    assert not claim_texts & {t.strip().lower() for t in lessons}


def test_lessons_merge_near_duplicates_and_cite_every_teacher() -> None:
    eps = [
        episode(1, lesson="Raise the rollout timeout to ten minutes for the api service."),
        episode(2, lesson="raise the rollout timeout to ten minutes for the API service"),
        episode(3, lesson="Raise the rollout timeout to ten minutes for the api services"),
        episode(4, lesson="Check the node pool has capacity before deploying."),
        episode(5, lesson="approach worked"),
    ]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    lessons = [c for c in op.claims if "rollout" in c.text or "node pool" in c.text]
    assert [c.text for c in lessons] == [
        "Raise the rollout timeout to ten minutes for the api service.",
        "Check the node pool has capacity before deploying.",
    ]
    assert lessons[0].episode_ids == ("ep-00001", "ep-00002", "ep-00003")
    assert op.kind == PageKind.LESSON


def test_lessons_are_capped_most_supported_first() -> None:
    eps = [episode(i, lesson=f"lesson number {i} about topic {i * 7}") for i in range(1, 12)]
    eps += [episode(20, lesson="lesson number 11 about topic 77")]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    lessons = [c for c in op.claims if c.text.startswith("lesson number")]
    assert len(lessons) == 8
    assert lessons[0].episode_ids == ("ep-00011", "ep-00020")


def test_relative_dates_are_resolved_against_each_episode() -> None:
    eps = [
        episode(
            1,
            created_at=datetime(2026, 11, 4, 10, tzinfo=UTC),
            lesson="The API changed yesterday; pin the client version.",
        ),
        episode(
            2,
            created_at=datetime(2026, 11, 20, 10, tzinfo=UTC),
            situation="deploying today after the outage",
            lesson=None,
        ),
    ]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    assert "The API changed yesterday (2026-11-03); pin the client version." in texts(op)


def test_common_errors_are_normalised_and_counted() -> None:
    eps = [
        episode(
            1, error="ReadTimeout: GET https://api.example.com/v1/items/17 timed out after 30s"
        ),
        episode(
            2, error="ReadTimeout: GET https://api.example.com/v1/items/99 timed out after 31s"
        ),
        episode(3, error="PermissionError: /var/lib/app/data.db is read-only (pid 4242)"),
    ]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    errors = [c for c in op.claims if c.text.startswith("Error seen")]
    assert [(c.text, c.episode_ids) for c in errors] == [
        (
            'Error seen twice: "ReadTimeout: GET <url> timed out after Ns".',
            ("ep-00001", "ep-00002"),
        ),
        ('Error seen once: "PermissionError: <path> is read-only (pid N)".', ("ep-00003",)),
    ]


def test_representative_and_worked_statements() -> None:
    eps = [
        episode(1, situation="deploying the api service to staging", action="kubectl apply"),
        episode(
            2,
            situation="deploying the api service to staging today",
            action="kubectl apply with a longer timeout",
            outcome="success",
            error=None,
            created_at=datetime(2026, 11, 5, 8, tzinfo=UTC),
        ),
        episode(3, situation="deploying the api service", action="kubectl apply"),
        episode(
            4,
            situation="rotating secrets",
            action="vault write",
            outcome="success",
            error=None,
            created_at=datetime(2026, 11, 1, tzinfo=UTC),
        ),
    ]
    claims = only_op(ExtractiveDistiller().distill(evidence(eps))).claims
    assert (
        Claim(
            text="When deploying the api service to staging: kubectl apply"
            " -> failed with TimeoutError (2026-11-02).",
            episode_ids=("ep-00001",),
        )
        in claims
    )
    assert claims[-1] == Claim(
        text="Worked: kubectl apply with a longer timeout (2026-11-05).", episode_ids=("ep-00002",)
    )


def test_claims_are_one_line_and_at_most_400_characters() -> None:
    eps = [episode(i, situation="very long " * 200, lesson="step\n" * 300) for i in range(1, 4)]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    assert all(len(c.text) <= 400 and "\n" not in c.text for c in op.claims)
    assert any(c.text.endswith("…") for c in op.claims)


def test_revising_a_known_topic_targets_the_page_as_read() -> None:
    first = four_of_six()
    page = page_from(created(ExtractiveDistiller().distill(evidence(first))))
    more = [*first, episode(7, created_at=T0 + timedelta(days=5))]
    ev = evidence(more, page=page)
    plan = ExtractiveDistiller().distill(ev)
    op = only_op(plan)
    assert isinstance(op, RevisePage)
    assert (op.page_id, op.expected_hash) == (page.id, page.revision.hash)
    assert op.claims[0].text == "Failed 5 of 7 times with TimeoutError (2026-11-02 to 2026-11-07)."
    assert validate_plan(plan, ev) == []


def test_nothing_new_gives_an_empty_plan() -> None:
    eps = four_of_six()
    page = page_from(created(ExtractiveDistiller().distill(evidence(eps))))
    again = Evidence(
        scope=SCOPE,
        topic_key=KEY,
        episodes=(eps[-1],),
        pages=(page,),
        history={page.id: tuple(eps)},
        now=NOW,
    )
    assert ExtractiveDistiller().distill(again) == Plan(distiller="extractive")


def test_no_episodes_gives_an_empty_plan() -> None:
    assert ExtractiveDistiller().distill(evidence([])).operations == ()


@st.composite
def groups(draw: st.DrawFn) -> list[Episode]:
    n = draw(st.integers(min_value=1, max_value=12))
    return [
        episode(
            i + 1,
            created_at=T0 + timedelta(hours=draw(st.integers(0, 400))),
            seq=draw(st.sampled_from([i + 1, None])),
            outcome=draw(st.sampled_from(list(Outcome))),
            error=draw(st.sampled_from([None, "HTTP Error 429", "KeyError: 'a' at 0xdeadbeef1"])),
            lesson=draw(st.sampled_from([None, "ok", "pin the version yesterday", "use a lock"])),
            situation=draw(st.text(min_size=1, max_size=40).filter(str.strip)),
            action=draw(st.text(max_size=30)),
            outcome_details=draw(st.sampled_from([None, "pods pending", "done last week"])),
        )
        for i in range(n)
    ]


@given(groups(), st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None)
def test_every_plan_is_valid_cited_and_order_independent(eps: list[Episode], rnd: Any) -> None:
    ev = evidence(eps)
    plan = ExtractiveDistiller().distill(ev)
    assert validate_plan(plan, ev) == []
    op = only_op(plan)
    ids = {e.id for e in eps}
    assert all(set(c.episode_ids) <= ids and c.episode_ids for c in op.claims)
    assert all(1 <= len(c.text) <= 400 for c in op.claims)
    shuffled = list(eps)
    rnd.shuffle(shuffled)
    assert ExtractiveDistiller().distill(evidence(shuffled)) == plan


def _load(n: int, topics: int) -> list[Episode]:
    rnd = random.Random(7)
    errors = [None, "ReadTimeout: read timed out after 30s", "HTTP Error 429", "KeyError: 'k'"]
    lessons = [None, "approach worked", "retry with backoff after a 429", "pin the chart version"]
    distinct = [
        episode(
            i,
            outcome=rnd.choice(list(Outcome)),
            error=rnd.choice(errors),
            lesson=rnd.choice(lessons),
            category=f"topic{i % topics}",
            situation=f"deploying service {i % 97} to the staging cluster",
            action=f"kubectl apply release {i}",
        )
        for i in range(1, 2001)
    ]
    return [e.model_copy(update={"id": f"{e.id}-{k}"}) for k in range(n // 2000) for e in distinct]


def test_twenty_thousand_episodes_in_fifty_groups_distil_quickly() -> None:
    eps = _load(20_000, 50)
    grouped = cluster(eps)
    distiller = ExtractiveDistiller()
    started = time.perf_counter()
    plans = [distiller.distill(evidence(list(g.episodes), g.topic_key)) for g in grouped]
    assert time.perf_counter() - started < 3.0
    assert all(len(p.operations) == 1 for p in plans)


@pytest.mark.bench
def test_hundred_thousand_episodes_in_two_hundred_groups() -> None:
    eps = _load(100_000, 200)
    grouped = cluster(eps)
    distiller = ExtractiveDistiller()
    started = time.perf_counter()
    for g in grouped:
        distiller.distill(evidence(list(g.episodes), g.topic_key))
    assert time.perf_counter() - started < 5.0
