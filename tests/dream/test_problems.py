"""Grouping by problem: order-independent, stable keys, known pages lead, routine work passed."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.bench.synth import synthetic_episodes
from reverie.config import DreamConfig
from reverie.dream.cluster import Group, pattern_key
from reverie.dream.problems import group_by_problem, is_knowledge, problem_groups
from reverie.embed import HashingEmbedder
from reverie.models import Claim, Episode, Outcome, Page, PageKind, PageStatus, Revision, Scope
from reverie.models.plan import page_id_for

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
SCOPE = Scope(tenant="acme", agent="coder")
KEY = re.compile(r"^[^|]+\|[^|]+\|[^|~]*~[0-9a-f]{8}$")  # category|tools|terms~hash

DEPLOY = {
    "situation": "deploying the api service to the staging cluster",
    "action": "kubectl apply -f manifests/",
    "error": "TimeoutError: timed out waiting for the rollout",
    "category": "deploy",
    "tools": ["kubectl"],
}
CONTEXT = {  # another problem met through the same tool
    "situation": "switching kubectl to the eu cluster context",
    "action": "kubectl config use-context staging",
    "error": "error: no context exists with the name: staging",
    "category": "deploy",
    "tools": ["kubectl"],
}
SEARCH = {
    "situation": "searching the web for the numpy release notes",
    "action": "web_search 'numpy release notes'",
    "error": "HTTP Error 429: Too Many Requests",
    "category": "search",
    "tools": ["web_search"],
}


def episode(n: int, **fields: Any) -> Episode:
    data: dict[str, Any] = {
        "id": f"ep-{n:05d}",
        "seq": n,
        "scope": SCOPE,
        "created_at": T0 + timedelta(hours=n),
        "outcome": "failure",
        **DEPLOY,
    }
    data.update(fields)
    return Episode.parse(data)


def page(topic_key: str, title: str, *claims: str, status: PageStatus = PageStatus.ACTIVE) -> Page:
    revision = Revision(
        page_id=page_id_for(SCOPE, topic_key),
        number=1,
        hash="sha256:" + "0" * 64,
        title=title,
        kind=PageKind.WARNING,
        claims=tuple(Claim(text=c, episode_ids=("ep-old",)) for c in claims),
        confidence=0.8,
        status=status,
        created_at=T0,
    )
    return Page(
        id=revision.page_id,
        scope=SCOPE,
        topic_key=topic_key,
        revision=revision,
        created_at=T0,
        updated_at=T0,
    )


def shape(groups: list[Group]) -> list[tuple[str, list[str]]]:
    return [(g.topic_key, [e.id for e in g.episodes]) for g in groups]


def members(groups: list[Group]) -> list[set[str]]:
    return sorted(({e.id for e in g.episodes} for g in groups), key=sorted)


DEPLOY_PAGE = page(
    "deploy|kubectl",
    "deploying the api service to the staging cluster: fails with TimeoutError",
    "deploying the api service to the staging cluster: kubectl apply -f manifests/ -> failed"
    ' with "TimeoutError: timed out waiting for the rollout" (3 times, last 2026-11-01).',
)


# --- order independence ------------------------------------------------------------------------

_PROBLEMS = [DEPLOY, CONTEXT, SEARCH]


@st.composite
def episode_lists(draw: st.DrawFn) -> list[Episode]:
    n = draw(st.integers(min_value=0, max_value=20))
    eps = []
    for i in range(n):
        problem = dict(draw(st.sampled_from(_PROBLEMS)))
        if draw(st.booleans()):
            problem["tools"] = draw(st.sampled_from([["kubectl"], ["helm"], ["curl", "jq"], []]))
        eps.append(
            episode(
                i + 1,
                **problem,
                outcome=draw(st.sampled_from(list(Outcome))),
                lesson=draw(st.sampled_from([None, "approach worked", "wait for the rollout"])),
                seq=draw(st.sampled_from([i + 1, None])),
                created_at=T0 + timedelta(hours=draw(st.integers(0, 300))),
            )
        )
    return eps


@given(episode_lists(), st.randoms(use_true_random=False), st.booleans())
@settings(max_examples=60, deadline=None)
def test_groups_ignore_input_order(eps: list[Episode], rnd: Any, with_page: bool) -> None:
    pages = [DEPLOY_PAGE, page("search|web_search", "web search notes", "Search the web.")]
    pages = pages if with_page else []
    groups = group_by_problem(eps, pages)
    shuffled, shuffled_pages = list(eps), list(pages)
    rnd.shuffle(shuffled)
    rnd.shuffle(shuffled_pages)
    assert shape(group_by_problem(shuffled, shuffled_pages)) == shape(groups)
    assert sorted(e.id for g in groups for e in g.episodes) == sorted(e.id for e in eps)
    assert [g.topic_key for g in groups] == sorted({g.topic_key for g in groups})


@given(episode_lists(), st.randoms(use_true_random=False))
@settings(max_examples=30, deadline=None)
def test_groups_by_meaning_ignore_input_order(eps: list[Episode], rnd: Any) -> None:
    embedder = HashingEmbedder()
    groups = group_by_problem(eps, [DEPLOY_PAGE], embedder=embedder, threshold=0.6)
    shuffled = list(eps)
    rnd.shuffle(shuffled)
    again = group_by_problem(shuffled, [DEPLOY_PAGE], embedder=embedder, threshold=0.6)
    assert shape(again) == shape(groups)
    assert sorted(e.id for g in groups for e in g.episodes) == sorted(e.id for e in eps)


# --- keys --------------------------------------------------------------------------------------


def test_topic_keys_are_stable_and_say_what_the_problem_is() -> None:
    eps = [episode(i) for i in range(1, 4)] + [episode(i, **SEARCH) for i in range(4, 6)]
    first = group_by_problem(eps, [])
    assert shape(group_by_problem(list(eps), [])) == shape(first)  # same input, same keys
    keys = [g.topic_key for g in first]
    assert len(keys) == 2 and all(KEY.match(k) for k in keys), keys
    deploy, search = sorted(keys)
    assert deploy.startswith("deploy|kubectl|") and search.startswith("search|web_search|")
    # a new problem's key depends on its founding signature only, not on what else was seen
    (alone,) = group_by_problem(eps[:3], [])
    assert alone.topic_key == deploy


def test_separators_in_category_or_tools_cannot_forge_a_key() -> None:
    (group,) = group_by_problem([episode(1, category="a|b", tools=["x+y", "z|w"])], [])
    category, tools, rest = group.topic_key.split("|")
    assert (category, tools) == ("a/b", "x/y+z/w") and KEY.match(group.topic_key)
    assert "~" in rest


# --- pages lead --------------------------------------------------------------------------------


def test_an_episode_like_a_known_page_joins_its_topic() -> None:
    eps = [episode(1), episode(2, tools=["helm"]), episode(3, **SEARCH)]
    groups = group_by_problem(eps, [DEPLOY_PAGE])
    by_key = {g.topic_key: [e.id for e in g.episodes] for g in groups}
    assert by_key.pop("deploy|kubectl") == ["ep-00001", "ep-00002"]  # the page's key, kept
    ((key, ids),) = by_key.items()
    assert ids == ["ep-00003"] and key.startswith("search|web_search|")


def test_pages_that_are_not_problems_do_not_lead() -> None:
    retired = page(DEPLOY_PAGE.topic_key, DEPLOY_PAGE.title, DEPLOY_PAGE.revision.claims[0].text,
                   status=PageStatus.RETIRED)  # fmt: skip
    fact = page("fact|deploy api service staging", "Staging", "deploying the api service")
    eps = [episode(1), episode(2)]
    grouping = problem_groups(eps, [retired, fact], embedder=None, config=DreamConfig())
    (group,) = grouping.groups
    assert group.topic_key not in {retired.topic_key, fact.topic_key} and KEY.match(group.topic_key)


# --- what a problem is -------------------------------------------------------------------------


def test_different_problems_sharing_a_tool_land_in_different_groups() -> None:
    eps = [episode(i) for i in range(1, 4)] + [episode(i, **CONTEXT) for i in range(4, 7)]
    groups = group_by_problem(eps, [])
    assert members(groups) == [
        {"ep-00001", "ep-00002", "ep-00003"},
        {"ep-00004", "ep-00005", "ep-00006"},
    ]
    assert all(g.topic_key.startswith("deploy|kubectl|") for g in groups)
    meaning = group_by_problem(eps, [], embedder=HashingEmbedder(), threshold=0.6)
    assert members(meaning) == members(groups)


def test_one_problem_met_through_two_tools_lands_in_one_group() -> None:
    eps = [episode(1), episode(2), episode(3, tools=["helm"], category="release")]
    eps += [episode(4, tools=["kubectl", "jq"], action="kubectl apply -f manifests/ --wait")]
    (group,) = group_by_problem(eps, [])
    assert [e.id for e in group.episodes] == ["ep-00001", "ep-00002", "ep-00003", "ep-00004"]
    assert len({pattern_key(e) for e in eps}) == 3  # the old category|tools key would split it
    (meaning,) = group_by_problem(eps, [], embedder=HashingEmbedder(), threshold=0.6)
    assert meaning.episodes == group.episodes


def test_the_group_keeps_store_order() -> None:
    eps = [episode(3), episode(1), episode(2, seq=None), episode(4)]
    (group,) = group_by_problem(eps, [])
    assert [e.id for e in group.episodes] == ["ep-00001", "ep-00003", "ep-00004", "ep-00002"]


def test_input_in_store_order_groups_as_shuffled_input_does() -> None:
    rows = synthetic_episodes(600, seed=3)
    eps = [Episode.parse({**row, "seq": n}) for n, row in enumerate(rows, 1)]
    shuffled = list(eps)
    random.Random(5).shuffle(shuffled)
    groups = group_by_problem(eps, [DEPLOY_PAGE])
    assert shape(group_by_problem(shuffled, [DEPLOY_PAGE])) == shape(groups)
    assert len(groups) > 10
    for group in groups:
        assert [e.seq for e in group.episodes] == sorted(e.seq or 0 for e in group.episodes)


def test_nothing_in_nothing_out() -> None:
    assert group_by_problem([], [DEPLOY_PAGE]) == []
    assert problem_groups([], [DEPLOY_PAGE], embedder=None, config=DreamConfig()).groups == []


# --- knowledge or not --------------------------------------------------------------------------


def _ok(n: int, **fields: Any) -> Episode:
    return episode(n, **{"outcome": "success", "error": None, "importance": 2, **fields})


@pytest.mark.parametrize(
    ("eps", "has_page", "knowledge"),
    [
        ([_ok(1), _ok(2), _ok(3)], False, False),  # routine successes
        ([_ok(1, lesson="none"), _ok(2, lesson="N/A")], False, False),  # the prior
        ([_ok(1), _ok(2)], True, True),  # they revise a known problem's page
        ([_ok(1, lesson="Pin the chart version.")], False, True),  # a stated lesson
        ([_ok(1, importance=8)], False, True),  # marked important
        ([episode(1, importance=2), episode(2, importance=2)], False, True),  # failed twice
        ([episode(1, importance=2), _ok(2)], False, True),  # failed, then was fixed
        ([_ok(1), episode(2, importance=2)], False, False),  # one failure after a success
        ([_ok(1), episode(2, importance=2), _ok(3)], False, True),  # ... then a success
        ([_ok(1), _ok(2), episode(3, importance=2)], False, True),  # a failure in a pattern
        ([_ok(1, error="DeprecationWarning"), _ok(2)], False, True),  # an error is failing
    ],
)
def test_is_knowledge(eps: list[Episode], has_page: bool, knowledge: bool) -> None:
    assert is_knowledge(Group("k", tuple(eps)), has_page, 6, 3) is knowledge


def test_routine_successes_are_passed_and_known_problems_kept() -> None:
    routine = [_ok(i, **{**SEARCH, "error": None}) for i in range(1, 4)]
    known = [_ok(i) for i in range(4, 6)]  # routine too, but about the deploy page's problem
    failing = [episode(i, **CONTEXT) for i in range(6, 8)]
    grouping = problem_groups(
        routine + known + failing, [DEPLOY_PAGE], embedder=None, config=DreamConfig()
    )
    assert [e.id for e in grouping.passed] == ["ep-00001", "ep-00002", "ep-00003"]
    assert members(grouping.groups) == [{"ep-00004", "ep-00005"}, {"ep-00006", "ep-00007"}]
    assert "deploy|kubectl" in {g.topic_key for g in grouping.groups}


def test_conversation_turns_are_grouped_by_who_speaks() -> None:
    turns = [
        episode(i, category="chat", tools=[], situation=f"turn {i}", error=None,
                outcome="success", action="said hello", importance=2,
                metadata={"role": "user", "speaker": "alice"}) for i in (1, 2)
    ]  # fmt: skip
    grouping = problem_groups([*turns, episode(3)], [], embedder=None, config=DreamConfig())
    keys = {g.topic_key: [e.id for e in g.episodes] for g in grouping.groups}
    assert keys.pop(f"conversation|{pattern_key(turns[0])}") == ["ep-00001", "ep-00002"]
    ((key, ids),) = keys.items()
    assert ids == ["ep-00003"] and KEY.match(key) and grouping.passed == []
