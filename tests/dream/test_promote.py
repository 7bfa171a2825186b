"""Org promotion: a page reinforced in 3 distinct cycles is copied to the
tenant's org brain, in the cycle's transaction, with attribution; later revisions follow; recall
reads the org brain only when asked, labelled; nothing else ever crosses a scope."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie, Scope
from reverie.bench.synth import synthetic_queries
from reverie.config import Config, DreamConfig
from reverie.errors import InvalidInput, StoreError
from reverie.store.base import Changeset, PageWrite
from reverie.store.sqlite import SQLiteStore

CODER, RESEARCHER, ORG = "acme/coder", "acme/researcher", "acme/_org"
DAY0 = datetime(2026, 5, 1, 22, tzinfo=UTC)
QUERY = "rollout status timeout deploy"


def _day(n: int, day: int, scope: str = CODER) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{scope.replace('/', '-')}-{day}-{i}",
            "scope": scope,
            "created_at": (DAY0 + timedelta(days=day, hours=i - 9)).isoformat(),
            "situation": "deploying the api to staging",
            "action": "kubectl apply then rollout status",
            "outcome": "success" if i % 2 else "failure",
            "error": None if i % 2 else "timed out waiting for the condition",
            "lesson": "wait on kubectl rollout status with a 10m timeout after apply",
            "category": "deploy",
            "tools": ["kubectl"],
        }
        for i in range(n)
    ]


@pytest.fixture
def rv() -> Iterator[Reverie]:
    store = SQLiteStore(":memory:")
    store.migrate()
    with Reverie(store) as brain:
        yield brain


def _dream_days(rv: Reverie, days: range) -> None:
    for day in days:
        rv.ingest(_day(3, day))
        rv.dream(CODER, now=DAY0 + timedelta(days=day))


def test_a_page_reinforced_in_three_cycles_is_promoted_with_attribution(rv: Reverie) -> None:
    _dream_days(rv, range(2))
    assert rv.pages(ORG) == []  # two cycles: not yet
    _dream_days(rv, range(2, 3))
    [source] = rv.pages(CODER)
    [org] = rv.pages(ORG)
    assert org.scope == Scope.parse(CODER).org and org.scope.is_org
    assert org.title == source.title and org.revision.author == "promotion"
    assert "promoted from acme/coder (agent coder)" in (org.revision.reason or "")
    assert all(source.id in c.page_ids for c in org.revision.claims)  # cites the source page
    assert org.citations == source.citations  # and, through it, the raw episodes
    assert rv.why(org.id).cited_pages == [source.id]
    [record] = rv.store.promotions(Scope.parse(CODER))
    assert (record.org_page_id, record.source_page_id) == (org.id, source.id)
    assert rv.cycles(CODER, limit=1)[0].report.promoted == [org.id]


def test_later_revisions_of_the_source_update_the_org_copy(rv: Reverie) -> None:
    _dream_days(rv, range(3))
    [before] = rv.pages(ORG)
    _dream_days(rv, range(3, 4))
    [source] = rv.pages(CODER)
    [after] = rv.pages(ORG)
    assert after.id == before.id and after.revision.number == before.revision.number + 1
    assert [c.text for c in after.revision.claims] == [c.text for c in source.revision.claims]
    assert f"rev {source.revision.number}" in (after.revision.reason or "")
    assert len(rv.revisions(after.id)) == 2  # the first copy is kept


def test_recall_reads_the_org_brain_only_when_asked_and_labels_it(rv: Reverie) -> None:
    _dream_days(rv, range(3))
    rv.ingest(_day(1, 0, RESEARCHER))
    rv.dream(RESEARCHER, now=DAY0)
    org_ids = {p.id for p in rv.pages(ORG, None)}
    for query in [QUERY, *synthetic_queries(20, seed=3)]:
        for scope in (CODER, RESEARCHER):
            plain = rv.recall(query, scope, 2000, now=DAY0 + timedelta(days=3))
            assert not {i.id for i in plain.items} & org_ids
    shared = rv.recall(QUERY, RESEARCHER, 2000, now=DAY0 + timedelta(days=3), include_org=True)
    from_org = [i for i in shared.items if i.id in org_ids]
    assert from_org and all((i.page_kind or "").startswith("org ") for i in from_org)
    assert re.search(r"^\[\d+, org\b", shared.text, re.MULTILINE)  # labelled "[n, org]"
    own = rv.recall(QUERY, CODER, 2000, now=DAY0 + timedelta(days=3), include_org=True)
    assert not {i.id for i in own.items} & org_ids  # the coder already holds the source


def test_no_write_leaves_a_scope_except_a_promotion(rv: Reverie) -> None:
    _dream_days(rv, range(1))
    rv.ingest(_day(1, 0, RESEARCHER))
    [page] = rv.pages(CODER)
    rev = page.revision.model_copy(update={"page_id": "pg_stray", "number": 1})
    stray = PageWrite(Scope.parse(RESEARCHER), page.topic_key, rev, expected_revision=None)
    scope = Scope.parse(CODER)
    cp = rv.store.checkpoint(scope)
    with pytest.raises(StoreError, match="outside acme/coder"):
        rv.store.commit(Changeset(scope=scope, expected_checkpoint=cp, checkpoint=cp,
                                  page_writes=[stray], at=datetime.now(UTC)))  # fmt: skip
    assert rv.pages(RESEARCHER, None) == []


def test_the_org_brain_takes_no_episodes_and_is_not_dreamed(rv: Reverie) -> None:
    with pytest.raises(InvalidInput):
        rv.remember({**_day(1, 0)[0], "scope": ORG})
    _dream_days(rv, range(3))
    report = rv.dream(ORG, now=DAY0 + timedelta(days=400))  # no decay of org copies here
    assert report.status == "empty" and len(rv.pages(ORG)) == 1


def test_promotion_can_be_turned_off() -> None:
    store = SQLiteStore(":memory:")
    store.migrate()
    with Reverie(store, config=Config(dream=DreamConfig(promote_after_cycles=0))) as off:
        _dream_days(off, range(4))
        assert off.pages(ORG) == []


def test_a_line_added_to_an_org_page_in_the_mirror_is_refused_by_name(
    rv: Reverie, tmp_path: Path
) -> None:
    """Bad input gets a clear error: the org brain holds no episodes, so a person's new line
    there has no evidence to cite; the file is named, nothing is written, the rest imports."""
    _dream_days(rv, range(3))
    [org] = rv.pages(ORG)
    rv.export_markdown(ORG, tmp_path)
    [path] = [f for f in tmp_path.rglob("*.md") if f.name != "MEMORY.md"]
    before = path.read_text()
    path.write_text(before.rstrip("\n") + "\n- A brand new line a person typed.\n")
    report = rv.import_markdown(ORG, tmp_path, now=DAY0 + timedelta(days=5))
    assert report.revised == [] and report.cycle_id is None
    [problem] = report.problems
    assert path.name in problem and org.id in problem and "org brain takes none" in problem
    assert rv.page(org.id).revision.number == org.revision.number
