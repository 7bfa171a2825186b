"""Pages that hold several problems split, pages of one problem merge, and no citation is lost.

A brain dreamed before episodes were grouped by problem has one page per tool: the tests build
such a page in a real SQLite store (one page citing three problems' episodes, as the old
distiller wrote it), dream new episodes into it, and check that each problem ends on a page of
its own. Two pages of one problem (written apart, in two wordings) merge once new evidence
joins them. Either way every episode cited before is cited by an active page after.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reverie import Reverie
from reverie.config import DreamConfig
from reverie.dream.dedupe import teach_apart
from reverie.dream.split import find_split, split_due
from reverie.models import (
    Claim,
    ClaimRole,
    Episode,
    Page,
    PageKind,
    PageStatus,
    PageSupport,
    Scope,
)
from tests.dream.pages import page, revision
from tests.dream.pages import store_page as stored

SCOPE = Scope(tenant="acme", agent="deployer")
T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
DIARY = "deploy|kubectl"  # a topic key of the old kind: category and tools

# Three unrelated problems met through one tool, each with its own lesson in two wordings.
PROBLEMS: dict[str, dict[str, Any]] = {
    "rollout": {
        "situations": (
            "Rolling out the api to staging",
            "Rolling out the ledger to staging",
        ),
        "action": "kubectl apply -f k8s/ && ./smoke.sh",
        "error": "smoke check failed: connection refused on :8080 while pods restart",
        "lessons": (
            "Wait for kubectl rollout status --timeout=10m before smoke checks.",
            "Smoke checks straight after apply fail: wait on rollout status first.",
        ),
    },
    "context": {
        "situations": (
            "Applying a config change meant for the eu cluster",
            "Applying a secret change meant for the eu cluster",
        ),
        "action": "kubectl apply -f config.yaml",
        "error": "error: the server doesn't have a resource type configmaps in namespace prod",
        "lessons": (
            "Check kubectl config current-context before any apply.",
            "Always confirm the current context with kubectl config current-context first.",
        ),
    },
    "pullsecret": {
        "situations": (
            "Pods of the worker stuck pulling from the private registry",
            "Pods of the mailer stuck pulling from the private registry",
        ),
        "action": "kubectl describe pod && kubectl get events",
        "error": "ErrImagePull: pull access denied for registry.acme.io, authorization failed",
        "lessons": (
            "ImagePullBackOff from the private registry means imagePullSecrets is missing.",
            "Add imagePullSecrets to the deployment when pulls from registry.acme.io are denied.",
        ),
    },
}


def episode(n: int, problem: str, variant: int, *, hours: int | None = None) -> dict[str, Any]:
    spec = PROBLEMS[problem]
    return {
        "id": f"{problem}-{n:04d}",
        "scope": SCOPE.key,
        "created_at": (T0 + timedelta(hours=n if hours is None else hours)).isoformat(),
        "situation": spec["situations"][variant % 2],
        "action": spec["action"],
        "outcome": "failure",
        "error": spec["error"],
        "lesson": spec["lessons"][variant % 2],
        "category": "deploy",
        "tools": ["kubectl"],
        "session_id": f"s-{problem}-{n}",
    }


def store_page(rv: Reverie, topic_key: str, title: str, claims: Sequence[Claim]) -> Page:
    """A page as an earlier version of the cycle wrote it, its episodes consolidated."""
    return stored(rv, SCOPE, topic_key, title, claims, T0 + timedelta(days=20))


def bare_page(topic_key: str, claims: Sequence[Claim]) -> Page:
    """A page in memory only, for the split and merge rules themselves."""
    return page(SCOPE, topic_key, revision(f"pg_{topic_key}", claims[0].text, claims, T0))


def diary_page(rv: Reverie, counts: dict[str, int]) -> Page:
    """One tool-diary page citing every episode of ``counts`` problems: a claim per lesson
    wording (as the old distiller wrote them) and the tallies as claims."""
    eps = [episode(i, p, i) for p, n in counts.items() for i in range(1, n + 1)]
    rv.ingest(eps)
    claims = [
        Claim(text=text, episode_ids=tuple(e["id"] for e in eps if e["lesson"] == text))
        for text in sorted({e["lesson"] for e in eps})
    ]
    ids = tuple(e["id"] for e in eps)
    claims.append(Claim(text=f"Failed {len(eps)} of {len(eps)} times.", episode_ids=ids))
    return store_page(rv, DIARY, "deploy · kubectl", claims)


def active(rv: Reverie) -> list[Page]:
    return [p for p in rv.pages(SCOPE) if p.kind != PageKind.FACT]


def cited_by_active(rv: Reverie) -> set[str]:
    return {e for p in rv.pages(SCOPE) for e in p.citations}


def problems_of(page: Page) -> set[str]:
    return {e.split("-")[0] for e in page.citations}


def dream(rv: Reverie, new: Iterable[dict[str, Any]], day: int) -> None:
    rv.ingest(list(new))
    rv.dream(SCOPE, now=T0 + timedelta(days=day))


# --- split -----------------------------------------------------------------------------------


def test_a_tool_diary_splits_into_one_page_per_problem_and_keeps_every_citation(
    tmp_path: Path,
) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        diary = diary_page(rv, {"rollout": 10, "context": 6, "pullsecret": 5})
        before = set(diary.citations)
        dream(rv, [episode(100, "rollout", 0, hours=24 * 25)], day=26)
        pages = active(rv)
        assert sorted(len(problems_of(p)) for p in pages) == [1, 1, 1]
        assert {frozenset(problems_of(p)) for p in pages} == {
            frozenset({"rollout"}),
            frozenset({"context"}),
            frozenset({"pullsecret"}),
        }
        assert before | {"rollout-0100"} <= cited_by_active(rv)
        kept = rv.store.page(diary.id)
        assert kept.status is PageStatus.ACTIVE and problems_of(kept) == {"rollout"}
        assert kept.revision.support is not None and kept.revision.support.episodes == 11
        assert all("kubectl" not in p.title.lower() or "·" not in p.title for p in pages)
        # nothing new: nothing changes; a moved problem's next episode goes to its own page
        revisions = {p.id: p.revision.number for p in rv.pages(SCOPE)}
        rv.dream(SCOPE, now=T0 + timedelta(days=27))
        assert {p.id: p.revision.number for p in rv.pages(SCOPE)} == revisions
        dream(rv, [episode(101, "context", 1, hours=24 * 27)], day=28)
        home = next(p for p in active(rv) if "context-0101" in p.citations)
        assert home.id != diary.id and problems_of(home) == {"context"}


def test_a_page_of_one_problem_in_two_wordings_does_not_split(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        diary = diary_page(rv, {"rollout": 14})
        dream(rv, [episode(100, "rollout", 1, hours=24 * 25)], day=26)
        assert [p.id for p in active(rv)] == [diary.id]
        assert set(diary.citations) | {"rollout-0100"} <= set(rv.store.page(diary.id).citations)


@given(
    st.dictionaries(
        st.sampled_from(sorted(PROBLEMS)), st.integers(min_value=1, max_value=9), min_size=1
    ),
    st.randoms(use_true_random=False),
)
@settings(max_examples=12, deadline=None)
def test_split_keeps_every_citation_and_gives_each_problem_one_page(
    counts: dict[str, int], rnd: random.Random
) -> None:
    with tempfile.TemporaryDirectory() as tmp, Reverie.open(Path(tmp) / "b.db") as rv:
        diary = diary_page(rv, counts)
        cited = set(diary.citations)
        for day in range(3):  # three cycles, each with a few new episodes
            new = [
                episode(200 + 10 * day + i, rnd.choice(sorted(counts)), i, hours=600 + 30 * day)
                for i in range(rnd.randint(1, 3))
            ]
            dream(rv, new, day=30 + day)
            cited |= {e["id"] for e in new}
            assert cited <= cited_by_active(rv)  # nothing consolidated is ever lost
        if sum(counts.values()) >= 12 and min(counts.values()) >= 4:
            assert sorted(len(problems_of(p)) for p in active(rv)) == [1] * len(counts)


def test_split_is_checked_at_its_threshold_then_at_each_doubling() -> None:
    config = DreamConfig(split_min_episodes=12)
    diary = bare_page(DIARY, [Claim(text="c", episode_ids=("e",))])
    assert not split_due(diary, 11, config)
    assert split_due(diary, 12, config)  # no tallies yet: big enough is enough

    def with_support(episodes: int) -> Page:
        support = PageSupport(episodes=episodes)
        return diary.model_copy(
            update={"revision": diary.revision.model_copy(update={"support": support})}
        )

    assert split_due(with_support(11), 12, config)
    assert not split_due(with_support(12), 23, config)
    assert split_due(with_support(23), 24, config)
    assert not split_due(with_support(30), 47, config)
    assert split_due(with_support(47), 60, config)
    assert not split_due(with_support(47), 60, DreamConfig(split_min_episodes=0))


@given(st.randoms(use_true_random=False))
@settings(max_examples=25, deadline=None)
def test_the_parts_of_a_page_do_not_depend_on_episode_order(rnd: random.Random) -> None:
    counts = {"rollout": 8, "context": 5, "pullsecret": 4}
    eps = [
        Episode.parse({**episode(i, p, i), "seq": k})
        for k, (p, i) in enumerate(
            ((p, i) for p, n in counts.items() for i in range(1, n + 1)), start=1
        )
    ]
    diary = bare_page(DIARY, [Claim(text="c", episode_ids=("rollout-0001",))])
    config = DreamConfig()
    parts = find_split(diary, eps, embedder=None, config=config)
    shuffled = list(eps)
    rnd.shuffle(shuffled)
    assert find_split(diary, shuffled, embedder=None, config=config) == parts
    assert sorted({e.split("-")[0] for p in parts for e in p.episode_ids}) == [
        "context",
        "pullsecret",
    ]


# --- merge -----------------------------------------------------------------------------------


def two_pages_of_one_problem(rv: Reverie, *, pin_second: bool = False) -> tuple[Page, Page]:
    """The rollout problem written on two pages, each from one situation's failures and no
    stated lesson (as two cycles with little evidence may have left it): no lesson they share
    ties them, only what they are about."""
    eps = [{**episode(i, "rollout", i), "lesson": None} for i in range(1, 9)]
    rv.ingest(eps)
    pages = []
    for variant in (0, 1):
        own = [e for i, e in enumerate(eps) if i % 2 == variant]
        spec = PROBLEMS["rollout"]
        text = f"{spec['situations'][variant]}: {spec['action']} failed with {spec['error']}"
        pinned = pin_second and variant == 1  # as a person's Markdown edit leaves it
        claims = [Claim(text=text, episode_ids=tuple(e["id"] for e in own), pinned=pinned)]
        key = f"deploy|kubectl|rollout+smoke~{variant:08d}"
        pages.append(store_page(rv, key, spec["situations"][variant], claims))
    return pages[0], pages[1]


def test_two_pages_of_one_problem_merge_when_new_evidence_joins_them(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        a, b = two_pages_of_one_problem(rv)
        before = set(a.citations) | set(b.citations)
        dream(rv, [{**episode(50, "rollout", 0, hours=24 * 25), "lesson": None}], day=26)
        pages = active(rv)
        assert len(pages) == 1
        home = pages[0]
        assert home.id in (a.id, b.id)
        gone = rv.store.page(b.id if home.id == a.id else a.id)
        assert gone.status is PageStatus.SUPERSEDED and gone.revision.superseded_by == home.id
        assert before | {"rollout-0050"} <= set(home.citations)


def test_a_page_a_person_edited_is_not_merged_away_for_looking_alike(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        a, b = two_pages_of_one_problem(rv, pin_second=True)
        dream(rv, [{**episode(50, "rollout", 0, hours=24 * 25), "lesson": None}], day=26)
        assert {p.id for p in active(rv)} == {a.id, b.id}
        assert rv.store.page(b.id).revision.claims[0].pinned


def test_pages_of_different_problems_do_not_merge(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "brain.db") as rv:
        diary_page(rv, {"rollout": 10, "context": 6, "pullsecret": 5})
        dream(rv, [episode(100, "rollout", 0, hours=24 * 25)], day=26)
        ids = {p.id for p in active(rv)}
        new = [episode(300 + i, p, i, hours=24 * 27 + i) for i, p in enumerate(PROBLEMS)]
        dream(rv, new, day=28)
        assert {p.id for p in active(rv)} == ids
        assert all(len(problems_of(p)) == 1 for p in active(rv))


def test_pages_that_each_teach_their_own_lesson_are_two_problems_however_alike() -> None:
    def lesson_page(key: str, *texts: str, role: ClaimRole | None = ClaimRole.LESSON) -> Page:
        return bare_page(key, [Claim(text=t, episode_ids=("e",), role=role) for t in texts])

    config = DreamConfig()
    context = lesson_page("a", "The staging cluster's kubectl context is now staging-eu.")
    configmap = lesson_page("b", "The api bundle carries a 2.1 MB ConfigMap: apply it on its own.")
    reworded = lesson_page("c", "Use the staging-eu kubectl context: the staging one is gone.")
    failures = lesson_page("d", "Deploying api to staging failed.", role=ClaimRole.ANECDOTE)
    assert teach_apart(context, configmap, config)
    assert not teach_apart(context, reworded, config)
    assert not teach_apart(context, failures, config)
