"""Clustering: stable error classes and pattern keys, and the same groups for any input order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.dream.cluster import (
    Group,
    cluster,
    content_words,
    error_class,
    pattern_key,
    salient_terms,
)
from reverie.embed import HashingEmbedder
from reverie.models import Episode, Outcome, Scope

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
SCOPE = Scope(tenant="acme", agent="coder")


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


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (None, None),
        ("   ", None),
        (
            "requests.exceptions.ReadTimeout: HTTPSConnectionPool(port=443): Read timed out.",
            "TimeoutError",
        ),
        ("asyncio.TimeoutError", "TimeoutError"),
        ("subprocess.TimeoutExpired: Command 'x' timed out after 30 seconds", "TimeoutError"),
        ("deadline exceeded while waiting", "TimeoutError"),
        ("ConnectionRefusedError: [Errno 111] Connection refused", "ConnectionRefusedError"),
        ("[Errno 111] connection refused", "ConnectionRefusedError"),
        ("KeyError: 'user_id'", "KeyError"),
        ("HTTP Error 429: Too Many Requests", "HTTP 429"),
        ("urllib.error.HTTPError: HTTP Error 404: Not Found", "HTTP 404"),
        ("requests.exceptions.HTTPError: 503 Server Error: Service Unavailable", "HTTP 503"),
        ("got status_code=500 from upstream", "HTTP 500"),
        ("exit code 137", "exit 137"),
        ("Command 'make' returned non-zero exit status 2.", "exit 2"),
        ("bash: foo: command not found", "exit 127"),
        ("container OOMKilled", "MemoryError"),
        ("Traceback (most recent call last):\n  File 'a.py'\nValueError: bad value", "ValueError"),
        ("something went sideways", "error"),
    ],
)
def test_error_class(error: str | None, expected: str | None) -> None:
    assert error_class(error) == expected


def test_salient_terms_rank_by_frequency_then_alphabet() -> None:
    text = "The cache was cold; the cache warmed. Database 2026 was slow, database index!"
    assert salient_terms(text) == ["cache", "database"]
    assert salient_terms(text, k=4) == ["cache", "database", "cold", "index"]
    assert salient_terms("the of and 123 4567 ab", k=3) == []
    assert content_words("It's the Zebra's zone 42") == ["zebra's", "zone"]


def test_pattern_key_parts() -> None:
    ep = episode(1, tools=["Kubectl", "helm", "kubectl"], category=" Deploy ")
    assert pattern_key(ep) == "deploy|helm+kubectl"
    # The outcome is not part of the key: failures and the fix that worked share a page.
    assert pattern_key(episode(2, error=None, outcome="success")) == "deploy|kubectl"
    assert pattern_key(episode(3, error=None, outcome="partial")) == "deploy|kubectl"
    assert pattern_key(episode(4, error=None, outcome="unknown", tools=[])) == "deploy|-"


def test_pattern_key_uses_the_situation_only_without_category_and_tools() -> None:
    bare = episode(
        1,
        category=None,
        tools=[],
        error=None,
        outcome="failure",
        situation="migrating the orders database; the migration locked orders",
    )
    assert pattern_key(bare) == "general|-|database+orders"
    assert pattern_key(episode(2, category=None)) == "general|kubectl"


def test_separators_inside_names_cannot_forge_a_key() -> None:
    assert pattern_key(episode(1, category="a|b", tools=["x+y"])) == "a/b|x/y"


def test_lexical_groups_are_sorted_by_key_and_in_seq_order() -> None:
    eps = [
        episode(3),
        episode(1, error=None, outcome="success"),
        episode(2),
        episode(4, category="search", tools=["web_search"], error=None, outcome="success"),
    ]
    groups = cluster(eps)
    assert [g.topic_key for g in groups] == ["deploy|kubectl", "search|web_search"]
    assert [e.id for e in groups[0].episodes] == ["ep-00001", "ep-00002", "ep-00003"]


def test_without_seq_episodes_are_ordered_by_time_then_id() -> None:
    late = episode(1, seq=None, created_at=T0 + timedelta(days=2))
    early_b = episode(2, seq=None, id="b", created_at=T0)
    early_a = episode(3, seq=None, id="a", created_at=T0)
    (group,) = cluster([late, early_b, early_a])
    assert [e.id for e in group.episodes] == ["a", "b", "ep-00001"]


def test_cluster_of_nothing_is_empty() -> None:
    assert cluster([]) == []
    assert cluster([], HashingEmbedder()) == []


_SITUATIONS = [
    "deploying the api service to staging",
    "deploying the api service to production",
    "searching the web for the release notes of numpy",
    "searching the web for release notes",
    "rotating the database credentials",
    "",
]


@st.composite
def episode_lists(draw: st.DrawFn) -> list[Episode]:
    n = draw(st.integers(min_value=0, max_value=25))
    eps = []
    for i in range(n):
        eps.append(
            episode(
                i + 1,
                situation=draw(st.sampled_from(_SITUATIONS)) or "x",
                action=draw(st.sampled_from(["kubectl apply", "web_search query", "vault write"])),
                outcome=draw(st.sampled_from(list(Outcome))),
                error=draw(st.sampled_from([None, "HTTP Error 429", "KeyError: 'a'"])),
                category=draw(st.sampled_from([None, "deploy", "search"])),
                tools=draw(st.lists(st.sampled_from(["kubectl", "web_search"]), max_size=2)),
                seq=draw(st.sampled_from([i + 1, None])),
            )
        )
    return eps


def _shape(groups: list[Group]) -> list[tuple[str, list[str]]]:
    return [(g.topic_key, [e.id for e in g.episodes]) for g in groups]


@given(episode_lists(), st.randoms(use_true_random=False))
@settings(max_examples=60, deadline=None)
def test_lexical_clusters_ignore_input_order(eps: list[Episode], rnd: Any) -> None:
    shuffled = list(eps)
    rnd.shuffle(shuffled)
    groups = cluster(eps)
    assert _shape(cluster(shuffled)) == _shape(groups)
    assert sorted(e.id for g in groups for e in g.episodes) == sorted(e.id for e in eps)


@given(episode_lists(), st.randoms(use_true_random=False), st.sampled_from([0.3, 0.6, 0.72, 0.9]))
@settings(max_examples=60, deadline=None)
def test_embedding_clusters_ignore_input_order(
    eps: list[Episode], rnd: Any, threshold: float
) -> None:
    embedder = HashingEmbedder(64)
    shuffled = list(eps)
    rnd.shuffle(shuffled)
    groups = cluster(eps, embedder, threshold)
    assert _shape(cluster(shuffled, embedder, threshold)) == _shape(groups)
    keys = [g.topic_key for g in groups]
    assert keys == sorted(set(keys))
    assert sorted(e.id for g in groups for e in g.episodes) == sorted(e.id for e in eps)


def test_similar_texts_join_across_keys_under_the_most_common_key() -> None:
    eps = [
        episode(1),
        episode(2),
        episode(3, tools=["kubectl", "helm"]),
        episode(4, category="search", situation="finding numpy release notes", action="web search"),
    ]
    groups = cluster(eps, HashingEmbedder(), threshold=0.6)
    assert _shape(groups) == [
        ("deploy|kubectl", ["ep-00001", "ep-00002", "ep-00003"]),
        ("search|kubectl", ["ep-00004"]),
    ]


def test_a_strict_threshold_keeps_distinct_texts_apart() -> None:
    eps = [episode(1, situation="alpha beta gamma"), episode(2, situation="delta epsilon zeta")]
    groups = cluster(eps, HashingEmbedder(), threshold=0.99)
    # Different texts, one pattern key: two components, merged again under the shared key.
    assert _shape(groups) == [("deploy|kubectl", ["ep-00001", "ep-00002"])]


def test_above_max_pairwise_similarity_stays_within_a_category() -> None:
    eps = [
        episode(1, category="deploy"),
        episode(2, category="ops"),
        episode(3, category="ops", tools=["helm"]),
    ]
    whole = cluster(eps, HashingEmbedder(), threshold=0.5)
    split = cluster(eps, HashingEmbedder(), threshold=0.5, max_pairwise=1)
    assert [g.topic_key for g in whole] == ["deploy|kubectl"]
    assert _shape(split) == [
        ("deploy|kubectl", ["ep-00001"]),
        ("ops|helm", ["ep-00003"]),
        ("ops|kubectl", ["ep-00002"]),
    ]


def test_dense_similarity_graph_is_one_component() -> None:
    eps = [episode(i, situation=f"deploying service {i}") for i in range(1, 1500)]
    (group,) = cluster(eps, HashingEmbedder(), threshold=0.3)
    assert len(group.episodes) == 1499


def test_lexical_clustering_of_100k_episodes() -> None:
    categories = [f"cat{i}" for i in range(37)]
    errors = [
        None,
        "HTTP Error 429: Too Many Requests",
        "ReadTimeout: read timed out",
        "KeyError: 'k'",
    ]
    distinct = [
        episode(
            i,
            error=errors[i % 4],
            category=categories[i % 37],
            tools=["kubectl"] if i % 3 else [],
        )
        for i in range(1, 2001)
    ]
    eps = distinct * 50  # 100,000 items; building fewer models keeps the test itself fast
    groups = cluster(eps)
    assert len(groups) == 37 * 2
    assert sum(len(g.episodes) for g in groups) == 100_000
