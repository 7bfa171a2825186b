"""query_terms keeps content words only; stem lets inflections meet."""

from __future__ import annotations

import pytest

from reverie.recall.query import MAX_TERMS, query_terms, stem, stems


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What is the weather in the city?", ["weather", "city"]),
        ("How do I deploy with kubectl?", ["deploy", "kubectl"]),
        ("Who, when, where, which, why?", []),
        ("", []),
        ("Deploy deploy DEPLOY", ["deploy"]),
        ("a b c x 5 ok", ["ok"]),
        ("error 404 after 2026 upgrade", ["error", "404", "2026", "upgrade"]),
        ("don't retry_timeout kubectl-apply", ["retry", "timeout", "kubectl", "apply"]),
        ("Zürich café", ["zürich", "café"]),
    ],
)
def test_query_terms(text: str, expected: list[str]) -> None:
    assert query_terms(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("How do password resets work here?", ["password", "resets"]),
        ("How are refunds handled?", ["refunds"]),
        ("How did the migration go?", ["migration"]),
        ("What is the process for password resets?", ["password", "resets"]),
        ("What are the steps to rotate keys?", ["rotate", "keys"]),
        # outside the frame the same words are content
        ("Where does Ana work?", ["ana", "work"]),
        ("How do I get to work?", ["work"]),
        ("Kill the process that holds the lock", ["kill", "process", "holds", "lock"]),
        ("Does the work laptop need a VPN?", ["work", "laptop", "vpn"]),
        ("How does the pipeline work in staging?", ["pipeline", "work", "staging"]),
        # a frame ends its sentence: the next one keeps its words
        ("How do I deploy? It does not work.", ["deploy", "work"]),
        ("How does it work? And refunds?", ["refunds"]),
    ],
)
def test_query_terms_leave_out_the_frame_of_a_question(text: str, expected: list[str]) -> None:
    assert query_terms(text) == expected


def test_query_terms_are_capped_in_first_occurrence_order() -> None:
    words = [f"term{i:02d}" for i in range(40)]
    assert query_terms(" ".join(words)) == words[:MAX_TERMS]


@pytest.mark.parametrize(
    "group",
    [
        ("deploy", "deploys", "deploying", "deployed"),
        ("file", "files"),
        ("cache", "caches", "caching", "cached"),
        ("run", "running"),
        ("retry", "retries"),
        ("process", "processes", "processing"),
        ("timeout", "timeouts"),
    ],
)
def test_stem_joins_inflections(group: tuple[str, ...]) -> None:
    assert len({stem(w) for w in group}) == 1


def test_stem_leaves_short_words_alone() -> None:
    assert stem("is") == "is"
    assert stem("gas") == "gas"


def test_stems_of_text() -> None:
    assert stem("deploys") in stems("Deploying the API: it works.")
