"""The extractive distiller: cited, deterministic claims and an honest confidence."""

from __future__ import annotations

import random
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.config import DreamConfig
from reverie.dream.cluster import cluster
from reverie.dream.distill import ExtractiveDistiller, is_template_lesson
from reverie.models import (
    Claim,
    ClaimRole,
    Episode,
    Outcome,
    Page,
    PageKind,
    PageStatus,
    PageSupport,
    Revision,
    Scope,
    revision_hash,
)
from reverie.models.plan import CreatePage, Evidence, Plan, RevisePage, page_id_for, validate_plan

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
        support=op.support,
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
        support=op.support,
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


def roles(op: CreatePage | RevisePage) -> list[ClaimRole | None]:
    return [c.role for c in op.claims]


def test_tallies_are_page_support_never_claims() -> None:
    eps = four_of_six()
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    assert op.support == PageSupport(
        episodes=6,
        successes=2,
        failures=4,
        error_classes={"TimeoutError": 4},  # ReadTimeout normalised to its class
        first_seen=eps[0].created_at,
        last_seen=eps[-1].created_at,
    )
    assert op.support.success_rate == round(2 / 6, 3)
    assert not any(re.search(r"\d+ of \d+ times|Error seen|^Worked:", t) for t in texts(op))
    # the same action failed and succeeded: a retry, not a fix; the failure is the anecdote
    anecdote, rest = op.claims
    assert roles(op) == [ClaimRole.ANECDOTE, ClaimRole.EVIDENCE]
    assert anecdote.episode_ids == ("ep-00001", "ep-00003", "ep-00004", "ep-00006")
    assert (anecdote.support, anecdote.first_seen, anecdote.last_seen) == (
        4,
        eps[0].created_at,
        eps[-1].created_at,
    )
    assert anecdote.text == (
        "deploying the api service to staging: kubectl apply -f manifests/ -> failed with"
        ' "requests.exceptions.ReadTimeout: read timed out" (4 times, last 2026-11-05).'
    )  # the newest failure of the commonest class, its error verbatim
    assert rest.episode_ids == ("ep-00002", "ep-00005") and rest.support == 2
    assert rest.text == "Also observed in 2 other episodes (2 succeeded)."


def test_other_outcomes_are_counted_by_what_they_are() -> None:
    eps = [
        episode(1, outcome="timeout"),
        episode(2, outcome="partial", error=None),
        episode(3, outcome="unknown", error=None),
    ]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    assert op.support is not None
    assert (op.support.episodes, op.support.successes, op.support.failures) == (3, 0, 2)
    assert op.support.error_classes == {"TimeoutError": 1}
    anecdote, rest = op.claims
    assert anecdote.role is ClaimRole.ANECDOTE and anecdote.episode_ids == ("ep-00001",)
    assert '"TimeoutError: timed out waiting for the condition" (2026-11-02)' in anecdote.text
    assert rest.role is ClaimRole.EVIDENCE and rest.episode_ids == ("ep-00002", "ep-00003")
    assert rest.text == "Also observed in 2 other episodes (0 succeeded)."


def test_a_new_topic_is_created_with_the_evidence_topic_key() -> None:
    eps = four_of_six()
    plan = ExtractiveDistiller().distill(evidence(eps))
    op = only_op(plan)
    assert isinstance(op, CreatePage)
    assert op.topic_key == KEY
    assert op.title == "deploying the api service to staging: fails with TimeoutError"
    assert op.kind == PageKind.WARNING  # no lesson, no fix, failing more often than not
    assert op.valid_from == eps[0].created_at
    assert plan.distiller == "extractive"
    assert validate_plan(plan, evidence(eps)) == []


def _fix_history() -> list[Episode]:
    """Failed twice with one action, then a different action worked."""
    return [
        episode(1, action="kubectl apply"),
        episode(2, action="kubectl apply"),
        episode(3, action="helm upgrade --wait --atomic", outcome="success", error=None),
    ]


@pytest.mark.parametrize(
    ("eps", "title"),
    [
        (  # a lesson: its first sentence
            [episode(i, lesson="Raise the rollout timeout to ten minutes; the api is slow to"
                     " start.") for i in (1, 2, 3)],
            "Raise the rollout timeout to ten minutes",
        ),
        (_fix_history(), "deploying the api service to staging: helm upgrade --wait --atomic"),
        (  # failures only: the problem and its error class
            [episode(i, error="HTTP Error 429") for i in (1, 2)],
            "deploying the api service to staging: fails with HTTP 429",
        ),
        (  # important routine work: what it was about
            [episode(i, outcome="success", error=None, importance=9) for i in (1, 2)],
            "deploying the api service to staging",
        ),
    ],
)  # fmt: skip
def test_titles_are_the_lesson_or_problem_never_the_topic_key(
    eps: list[Episode], title: str
) -> None:
    for key in (KEY, "search|web_search", "general|-|database+orders", "my own topic"):
        op = only_op(ExtractiveDistiller().distill(evidence(eps, key)))
        assert op.title == title  # whatever the key
        assert key not in op.title and "|" not in op.title and "·" not in op.title


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
        (["failure"] * 3, "Don't deploy while the node pool is scaling.", PageKind.WARNING),
        (["failure"] * 3, None, PageKind.WARNING),
        (["failure", "failure", "success"], None, PageKind.PROCEDURE),  # a fix leads
        (["success"] * 3, None, PageKind.NOTE),
        (["unknown"] * 3, None, PageKind.NOTE),
    ],
)
def test_kind_follows_the_lead_claim(
    outcomes: list[str], lesson: str | None, kind: PageKind
) -> None:
    eps = [
        episode(
            i + 1,
            outcome=o,
            lesson=lesson,
            error=None if o != "failure" else "boom",
            action="helm rollback --wait" if o == "success" else "kubectl apply",
            importance=8,
        )
        for i, o in enumerate(outcomes)
    ]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    assert op.confidence >= DreamConfig().lesson_min_confidence
    assert op.kind == kind
    lead = {PageKind.LESSON: ClaimRole.LESSON, PageKind.WARNING: ClaimRole.WARNING}
    lead |= {PageKind.PROCEDURE: ClaimRole.FIX}
    if lesson or kind is PageKind.PROCEDURE:
        assert op.claims[0].role is lead[kind]


def test_a_preference_page_says_so() -> None:
    eps = [
        episode(i, category="user-preference", outcome="success", error=None, importance=8,
                lesson="The user prefers British English spelling.") for i in (1, 2, 3)
    ]  # fmt: skip
    assert only_op(ExtractiveDistiller().distill(evidence(eps))).kind == PageKind.PREFERENCE


@pytest.mark.parametrize("text", ["N/A", "n/a.", "None", "ok", "OK!", "", "  ...  ", "it is"])
def test_template_lessons_are_recognised(text: str) -> None:
    assert is_template_lesson(text)


@pytest.mark.parametrize(
    "text", ["Pin the chart version", "approach worked after pinning v2", "approach worked"]
)  # "approach worked" is filler only where a brain's statistics show it (dream.boilerplate)
def test_real_lessons_are_not_templates(text: str) -> None:
    assert not is_template_lesson(text)


_TEMPLATES = st.sampled_from(["n/a", "none", "ok", "null", "todo", "tbd"])  # the prior


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
    assert not {ClaimRole.LESSON, ClaimRole.WARNING, ClaimRole.ALSO} & set(roles(op))
    claim_texts = {c.text.strip().lower() for c in op.claims}
    assert not claim_texts & {t.strip().lower() for t in lessons}
    assert {e for c in op.claims for e in c.episode_ids} == {e.id for e in eps}  # still cited


def test_lessons_merge_near_duplicates_and_cite_every_teacher() -> None:
    eps = [
        episode(1, lesson="Raise the rollout timeout to ten minutes for the api service."),
        episode(2, lesson="raise the rollout timeout to ten minutes for the API service"),
        episode(3, lesson="Raise the rollout timeout to ten minutes for the api services"),
        episode(4, lesson="Check the node pool has capacity before deploying."),
        episode(5, lesson="N/A"),
    ]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    lessons = [c for c in op.claims if "rollout" in c.text or "node pool" in c.text]
    assert [c.text for c in lessons] == [
        "Raise the rollout timeout to ten minutes for the api service.",
        "Check the node pool has capacity before deploying.",
    ]
    assert lessons[0].episode_ids == ("ep-00001", "ep-00002", "ep-00003")
    assert [c.role for c in lessons] == [ClaimRole.LESSON, ClaimRole.LESSON]
    assert [c.support for c in lessons] == [3, 1]
    assert (lessons[0].first_seen, lessons[0].last_seen) == (eps[0].created_at, eps[2].created_at)
    assert op.kind == PageKind.LESSON
    assert op.title == "Raise the rollout timeout to ten minutes for the api service"
    assert not any(c.text.lower().startswith("n/a") for c in op.claims)
    assert "ep-00005" in op.claims[-1].episode_ids  # the template's episode: evidence only


FIFTEEN_LESSONS = (
    "Pin the helm chart version on every upgrade.",
    "Run database migrations before restarting pods.",
    "Keep secrets out of environment variables in manifests.",
    "Use a readiness probe on the payments container.",
    "Scale the worker pool down during nightly backups.",
    "Label nodes by zone before scheduling stateful sets.",
    "Rotate registry credentials every ninety days.",
    "Compress log archives older than one week.",
    "Cap memory limits for the search indexer at four gigabytes.",
    "Disable swap on kubernetes hosts.",
    "Send alerts for certificate expiry thirty days ahead.",
    "Prefer rolling updates over recreate for the frontend.",
    "Tag container images with the git commit hash.",
    "Drain traffic from a region before patching its gateway.",
    "Back up etcd snapshots to a second bucket.",
)


def test_claims_are_capped_and_the_also_seen_fold_keeps_every_citation() -> None:
    eps = [episode(i + 1, lesson=text) for i, text in enumerate(FIFTEEN_LESSONS)]
    eps += [episode(30, lesson=FIFTEEN_LESSONS[4]), episode(31, lesson=FIFTEEN_LESSONS[4].lower())]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    assert len([c for c in op.claims if c.role is not ClaimRole.EVIDENCE]) <= 12
    lead = op.claims[0]  # most supported first
    assert lead.text == FIFTEEN_LESSONS[4] and lead.episode_ids == ("ep-00005", "ep-00030",
                                                                    "ep-00031")  # fmt: skip
    (also,) = [c for c in op.claims if c.role is ClaimRole.ALSO]
    assert op.claims.index(also) == 10 and op.claims[11].role is ClaimRole.ANECDOTE
    folded = FIFTEEN_LESSONS[10:]  # the five weakest, in the order they were first taught
    assert also.text.startswith("Also seen: " + folded[0].rstrip("."))
    assert also.text.endswith("(+1 more).") and folded[-1].rstrip(".") not in also.text
    assert also.episode_ids == tuple(f"ep-{i:05d}" for i in range(11, 16)) and also.support == 5
    lessons = [c for c in op.claims if c.role is ClaimRole.LESSON]
    assert [c.text for c in lessons[1:]] == [t for t in FIFTEEN_LESSONS[:10] if t != lead.text]
    assert {e for c in op.claims for e in c.episode_ids} == {e.id for e in eps}


def test_the_evidence_line_cites_what_no_other_claim_does() -> None:
    eps = [episode(1, lesson="Pin the chart version.", outcome="success", error=None)]
    eps += [episode(i, outcome="success", error=None) for i in range(2, 6)]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    lesson, rest = op.claims
    assert lesson.role is ClaimRole.LESSON and lesson.episode_ids == ("ep-00001",)
    assert rest.role is ClaimRole.EVIDENCE and rest.role.recall_weight == 0  # never recalled
    assert rest.episode_ids == ("ep-00002", "ep-00003", "ep-00004", "ep-00005")
    assert rest.text == "Also observed in 4 other episodes (4 succeeded)." and rest.support == 4


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


def test_error_classes_are_counted_and_the_anecdote_keeps_the_error_verbatim() -> None:
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
    assert op.support is not None
    assert op.support.error_classes == {"TimeoutError": 2, "PermissionError": 1}
    anecdote = op.claims[0]  # the newest failure of the commonest class
    assert anecdote.role is ClaimRole.ANECDOTE and anecdote.episode_ids == ("ep-00001", "ep-00002")
    assert (
        'failed with "ReadTimeout: GET https://api.example.com/v1/items/99 timed out after 31s"'
        " (2 times, last 2026-11-02)." in anecdote.text
    )  # numbers that matter are kept
    assert op.claims[-1].role is ClaimRole.EVIDENCE and op.claims[-1].episode_ids == ("ep-00003",)


def test_a_fix_is_what_worked_after_the_problem_failed() -> None:
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
        episode(  # a success before any failure: routine, not a fix
            4,
            situation="rotating secrets",
            action="vault write",
            outcome="success",
            error=None,
            created_at=datetime(2026, 11, 1, tzinfo=UTC),
        ),
    ]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    fix = op.claims[0]
    assert fix == Claim(
        text="When deploying the api service fails with TimeoutError: kubectl apply with a longer"
        " timeout worked (1 of 1 times since 2026-11-05).",
        episode_ids=("ep-00002",),
        role=ClaimRole.FIX,
        support=1,
        first_seen=eps[1].created_at,
        last_seen=eps[1].created_at,
    )
    assert op.title == "deploying the api service: kubectl apply with a longer timeout"
    assert op.kind == PageKind.PROCEDURE
    assert op.claims[1].role is ClaimRole.ANECDOTE
    assert op.claims[1].episode_ids == ("ep-00001", "ep-00003")
    assert op.claims[-1].role is ClaimRole.EVIDENCE and op.claims[-1].episode_ids == ("ep-00004",)


def _attempt(n: int, action: str, outcome: str, day: int) -> Episode:
    failed = outcome != "success"
    return episode(
        n,
        action=action,
        outcome=outcome,
        error="TimeoutError: timed out waiting for the condition" if failed else None,
        created_at=T0 + timedelta(days=day),
    )


def test_a_fix_that_stopped_working_is_superseded() -> None:
    eps = [
        _attempt(1, "kubectl apply", "failure", 0),
        _attempt(2, "kubectl apply --timeout=10m", "success", 1),
        _attempt(3, "kubectl apply --timeout=10m", "success", 2),
        _attempt(4, "kubectl apply --timeout=10m", "failure", 3),  # the old fix stops working
        _attempt(5, "helm upgrade --wait --atomic", "success", 4),
    ]
    working = only_op(ExtractiveDistiller().distill(evidence(eps[:3])))
    assert working.claims[0].role is ClaimRole.FIX  # a flag added is another action: the fix
    assert working.claims[0].episode_ids == ("ep-00002", "ep-00003")
    assert "kubectl apply --timeout=10m worked (2 of 2 times since 2026-11-03)" in texts(working)[0]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    (fix,) = [c for c in op.claims if c.role is ClaimRole.FIX]
    assert fix.episode_ids == ("ep-00005",) and "helm upgrade --wait --atomic worked" in fix.text
    assert not any("--timeout=10m worked" in t for t in texts(op))
    assert op.title == "deploying the api service to staging: helm upgrade --wait --atomic"
    # without a newer one, a fix whose last attempt failed is no fix at all
    stopped = only_op(ExtractiveDistiller().distill(evidence(eps[:4])))
    assert ClaimRole.FIX not in roles(stopped)


def test_a_retry_of_the_failed_action_is_not_a_fix() -> None:
    eps = [_attempt(1, "kubectl apply", "failure", 0), _attempt(2, "kubectl apply", "success", 1)]
    op = only_op(ExtractiveDistiller().distill(evidence(eps)))
    assert ClaimRole.FIX not in roles(op)
    assert roles(op) == [ClaimRole.ANECDOTE, ClaimRole.EVIDENCE]


def test_claims_are_one_line_and_at_most_400_characters() -> None:
    lesson = "drain the node\n" * 100  # words about the work: not a template lesson
    eps = [episode(i, situation="very long " * 200, lesson=lesson) for i in range(1, 4)]
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
    assert op.support == PageSupport(  # the page's tallies plus the new episode
        episodes=7,
        successes=2,
        failures=5,
        error_classes={"TimeoutError": 5},
        first_seen=first[0].created_at,
        last_seen=more[-1].created_at,
    )
    assert op.claims[0].role is ClaimRole.ANECDOTE and op.claims[0].support == 5
    assert op.claims[0].text.endswith("(5 times, last 2026-11-07).")
    assert {e for c in op.claims for e in c.episode_ids} == {e.id for e in more}
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


WORDS = st.text(min_size=1, max_size=40).map(lambda s: s.replace("|", "/").replace("\x00", " "))
"""Any text but "|", so a "|" in a title can only come from a topic key (and no NUL, which every
store refuses)."""


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
            situation=draw(WORDS.filter(str.strip)),
            action=draw(
                st.text(max_size=30).map(lambda s: s.replace("|", "/").replace("\x00", " "))
            ),
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
    assert {e for c in op.claims for e in c.episode_ids} == ids  # no citation is ever lost
    assert all(1 <= len(c.text) <= 400 for c in op.claims)
    assert all(c.role is not None and c.support for c in op.claims)
    assert len([c for c in op.claims if c.role is not ClaimRole.EVIDENCE]) <= 12
    assert ClaimRole.EVIDENCE not in roles(op)[:-1]  # the evidence line, if any, comes last
    assert "|" not in op.title and op.support is not None and op.support.episodes == len(eps)
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
