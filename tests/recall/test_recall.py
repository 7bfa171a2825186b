"""recall against a real SQLite brain: relevant claims with citations, a relevance floor,
scopes kept apart, and a broken store that never breaks the agent."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.config import RecallConfig
from reverie.models import (
    Claim,
    Episode,
    Page,
    PageKind,
    PageStatus,
    Revision,
    Scope,
    revision_hash,
)
from reverie.recall import count_tokens, recall
from reverie.recall.search import question_names
from reverie.store.base import Changeset, PageWrite
from reverie.store.sqlite import SQLiteStore

CODER = Scope(tenant="acme", agent="coder")
WRITER = Scope(tenant="acme", agent="writer")
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
CONFIG = RecallConfig()
NOW = datetime.now(UTC)
"""When these tests read the brain: as it stands (recall is handed its ``now``)."""


def episode(ident: str, scope: Scope, situation: str, action: str, **extra: object) -> Episode:
    data: dict[str, object] = {"id": ident, "scope": scope, "created_at": T0, "outcome": "failure"}
    data.update(situation=situation, action=action, **extra)
    return Episode.model_validate(data)


def write(
    scope: Scope, page_id: str, title: str, claims: Sequence[Claim], **rev: object
) -> PageWrite:
    fields: dict[str, object] = {
        "title": title,
        "kind": PageKind.LESSON,
        "claims": tuple(claims),
        "confidence": 0.8,
        "status": PageStatus.ACTIVE,
        "valid_from": None,
        "valid_until": None,
        "superseded_by": None,
    }
    fields.update(rev)
    revision = Revision.model_validate(
        {
            **fields,
            "page_id": page_id,
            "number": 1,
            "hash": revision_hash(**fields),  # type: ignore[arg-type]
            "created_at": T0 + timedelta(days=1),
        }
    )
    return PageWrite(scope=scope, topic_key=page_id, revision=revision, expected_revision=None)


def commit(store: SQLiteStore, scope: Scope, writes: Iterable[PageWrite]) -> None:
    at = store.checkpoint(scope)
    store.commit(
        Changeset(
            scope=scope,
            expected_checkpoint=at,
            checkpoint=at,
            page_writes=list(writes),
            at=datetime.now(UTC),
        )
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "r.db")
    s.migrate()
    yield s
    s.close()


@pytest.fixture
def brain(store: SQLiteStore) -> SQLiteStore:
    """A coder brain about deployment tooling, and a writer brain using the same words."""
    store.append(
        [
            episode("ep-1", CODER, "kubectl apply timed out on a large manifest", "kubectl apply"),
            episode("ep-2", CODER, "drift between cluster and git", "ran kubectl diff"),
            episode("ep-3", CODER, "legacy build broke", "pinned setuptools below 70"),
            episode("ep-4", CODER, "deploy of 300 manifests", "kubectl apply --timeout 10m"),
            episode(
                "ep-5",
                CODER,
                "Helm upgrade hung. The release was stuck in pending-upgrade state.",
                "Ran helm rollback to unstick the release. Then the upgrade worked.",
                outcome="success",
            ),
            episode("ep-w1", WRITER, "kubectl deploy timeout essay", "wrote about manifests"),
        ]
    )
    commit(
        store,
        CODER,
        [
            write(
                CODER,
                "pg-kubectl",
                "kubectl deploys",
                [
                    Claim(
                        text="Increase --timeout to 10m for large manifests.",
                        episode_ids=("ep-1", "ep-4"),
                    ),
                    Claim(
                        text="Run kubectl diff before apply to catch drift.", episode_ids=("ep-2",)
                    ),
                ],
            ),
            write(
                CODER,
                "pg-python",
                "Python packaging",
                [Claim(text="Pin setuptools below 70 for legacy builds.", episode_ids=("ep-3",))],
            ),
        ],
    )
    commit(
        store,
        WRITER,
        [
            write(
                WRITER,
                "pg-writer",
                "kubectl deploys (essay notes)",
                [
                    Claim(
                        text="Timeouts for large manifests make a good story.",
                        episode_ids=("ep-w1",),
                    )
                ],
            )
        ],
    )
    return store


def test_relevant_claim_is_recalled_with_its_citations(brain: SQLiteStore) -> None:
    r = recall(
        brain,
        "How do I fix kubectl deploy timeouts for large manifests?",
        CODER,
        200,
        config=CONFIG,
        now=NOW,
    )
    top = r.items[0]
    assert (top.kind, top.id, top.title) == ("page", "pg-kubectl", "kubectl deploys")
    assert top.text == "Increase --timeout to 10m for large manifests."
    assert top.citations == ["ep-1", "ep-4"]
    assert "pg-python" not in {i.id for i in r.items}
    assert r.text.startswith("<reverie-memory>\n") and top.ref == 1
    line = "[1, 3 November 2026] kubectl deploys: Increase --timeout to 10m for large manifests."
    assert line in r.text.split("\n")  # the ids are on the item; the line is cited by [1]
    assert r.used_tokens == count_tokens(r.text) <= 200
    assert r.warning is None


def test_cited_episodes_are_demoted_below_the_claim_that_covers_them(brain: SQLiteStore) -> None:
    r = recall(brain, "kubectl timeout large manifests", CODER, 400, config=CONFIG, now=NOW)
    scores = {i.id: i.score for i in r.items if i.kind == "episode"}
    claim = next(i for i in r.items if i.kind == "page")
    assert scores and all(score < claim.score for score in scores.values())


def test_episode_unit_is_its_best_sentence_with_a_date(brain: SQLiteStore) -> None:
    r = recall(brain, "helm rollback", CODER, 200, config=CONFIG, now=NOW)
    assert [(i.kind, i.id) for i in r.items] == [("episode", "ep-5")]
    assert r.items[0].text == "Ran helm rollback to unstick the release."
    assert "[1, 2026-11-02, success] Ran helm rollback" in r.text and r.items[0].ref == 1


def test_question_about_something_never_stored_recalls_nothing(brain: SQLiteStore) -> None:
    r = recall(brain, "What is the weather in the city?", CODER, 400, config=CONFIG, now=NOW)
    assert (r.items, r.text, r.used_tokens, r.warning) == ([], "", 0, None)
    assert not r


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("How do I connect Tableau to the Snowflake warehouse?", ["Snowflake", "Tableau"]),
        ("I rebased my branch. What is the right way to push?", []),  # sentence starts, "I"
        ("Is node.js v18 fine on the Mac?", ["node.js", "Mac", "v18"]),
        (
            "Which JDK do the Gradle builds use, and where do C++ builds run?",
            ["Gradle", "C++", "JDK"],
        ),
    ],
)
def test_the_names_a_question_uses(query: str, names: list[str]) -> None:
    assert question_names(query) == names


def test_a_question_naming_something_never_stored_must_share_more(brain: SQLiteStore) -> None:
    # two words in common with the helm episode, but Terraform is nowhere in the brain: the
    # question must share one word more
    stranger = "Which Terraform release got stuck?"
    assert recall(brain, stranger, CODER, 400, config=CONFIG, now=NOW).items == []
    lenient = replace(CONFIG, unknown_names=False)
    assert recall(brain, stranger, CODER, 400, config=lenient, now=NOW).items
    # a name the brain knows asks for nothing more
    known = "Which Helm release got stuck?"
    assert recall(brain, known, CODER, 400, config=CONFIG, now=NOW).items


def test_one_matching_term_in_three_is_below_the_floor(brain: SQLiteStore) -> None:
    r = recall(brain, "kubectl weather forecast", CODER, 400, config=CONFIG, now=NOW)
    assert r.items == []


@pytest.mark.parametrize("query", ["", "what is it?", "the"])
def test_query_without_content_terms_recalls_nothing(brain: SQLiteStore, query: str) -> None:
    assert recall(brain, query, CODER, 400, config=CONFIG, now=NOW).text == ""


def test_recall_never_crosses_scopes(brain: SQLiteStore) -> None:
    query = "kubectl deploy timeout large manifests essay"
    coder = recall(brain, query, CODER, 1000, config=CONFIG, now=NOW)
    writer = recall(brain, query, WRITER, 1000, config=CONFIG, now=NOW)
    assert coder.items and writer.items
    assert {i.id for i in coder.items}.isdisjoint({"pg-writer", "ep-w1"})
    assert {i.id for i in writer.items} <= {"pg-writer", "ep-w1"}
    assert writer.scope == WRITER and "Increase --timeout" not in writer.text


def test_pages_not_valid_now_are_not_recalled(store: SQLiteStore) -> None:
    store.append([episode("ep-1", CODER, "an unrelated situation", "something else")])
    ended = write(
        CODER,
        "pg-old",
        "kubectl deploys",
        [Claim(text="Timeout 5m is enough.", episode_ids=("ep-1",))],
        valid_until=T0,
    )
    commit(store, CODER, [ended])
    before = recall(store, "kubectl timeout", CODER, 400, config=CONFIG, now=T0 - timedelta(1))
    after = recall(store, "kubectl timeout", CODER, 400, config=CONFIG, now=T0)
    assert [i.id for i in before.items] == ["pg-old"]
    assert after.items == []


@pytest.mark.parametrize("budget", [0, 5, 25, 40, 80])
def test_tight_budgets_are_respected(brain: SQLiteStore, budget: int) -> None:
    r = recall(
        brain, "kubectl deploy timeout manifests drift", CODER, budget, config=CONFIG, now=NOW
    )
    assert r.used_tokens <= budget
    assert (r.text == "") == (not r.items)


def test_episodes_can_be_left_out(brain: SQLiteStore) -> None:
    config = RecallConfig(include_episodes=False)
    r = recall(brain, "kubectl timeout large manifests", CODER, 400, config=config, now=NOW)
    assert r.items and {i.kind for i in r.items} == {"page"}


class BrokenStore:
    """The real store, except that searching fails as a locked or corrupt database would."""

    def __init__(self, inner: SQLiteStore) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def search_pages(
        self, scope: Scope, terms: Sequence[str], limit: int, statuses: Iterable[str] = ("active",)
    ) -> list[tuple[Page, float]]:
        raise sqlite3.OperationalError("database is locked")

    def search_episodes(
        self, scope: Scope, terms: Sequence[str], limit: int
    ) -> list[tuple[Episode, float]]:
        raise sqlite3.OperationalError("database is locked")


def test_store_failure_gives_empty_recall_and_a_warning(
    brain: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    broken = BrokenStore(brain)
    with caplog.at_level(logging.WARNING, logger="reverie.recall"):
        r = recall(broken, "kubectl timeout", CODER, 400, config=CONFIG, now=NOW)  # type: ignore[arg-type]
    assert (r.items, r.text, r.used_tokens) == ([], "", 0)
    assert r.warning is not None and "database is locked" in r.warning
    assert any(
        rec.name == "reverie.recall" and rec.levelno == logging.WARNING for rec in caplog.records
    )


def test_a_focused_page_is_recalled_though_its_own_episodes_share_its_words(
    tmp_path: Path,
) -> None:
    """A page whose every claim names the problem, and the episodes it cites: those episodes are
    its evidence, not other candidates, so they do not make the problem's words "common" and let
    a query's stray words ("next morning") sink the page below the floor."""
    lesson = "To deploy api to staging with kubectl: pass --timeout=10m to kubectl apply --wait."
    with Reverie.open(tmp_path / "b.db") as rv:
        rv.ingest(
            [
                {"scope": CODER.key, "situation": f"deploy api to staging with kubectl (try {i})",
                 "action": "kubectl apply -f k8s/ --wait", "outcome": "failure",
                 "error": "timed out waiting for the condition", "lesson": lesson,
                 "category": "deploy", "tools": ["kubectl"], "created_at": T0 + timedelta(hours=i)}
                for i in range(3)
            ]
        )  # fmt: skip
        rv.dream(CODER, now=T0 + timedelta(days=1))
        (page,) = rv.pages(CODER)
        assert all(c.episode_ids for c in page.revision.claims)
        found = rv.recall("deploy api to staging with kubectl, next morning", CODER)
        assert lesson in [i.text for i in found.items if i.kind == "page"]
