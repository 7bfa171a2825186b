"""One slot, one current value across pages: a page about an older value is superseded by the
statements' own time, and recall leaves out what a change of value replaced even when the
question never reaches the page that replaced it; ``as_of`` still answers the past."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reverie import Reverie
from reverie.dream.apply import WriteContext
from reverie.dream.values import value_writes
from reverie.models import Claim, ClaimRole, PageStatus, PageSupport, Scope
from reverie.store.base import PageWrite
from tests.dream.pages import page, revision, store_page

SCOPE = Scope.parse("acme/deployer")
JAN, APR, AUG = (datetime(2026, 3, d, 9, tzinfo=UTC) for d in (2, 12, 22))


def _lesson(text: str, ids: tuple[str, ...], first: datetime, last: datetime) -> Claim:
    return Claim(text=text, episode_ids=ids, role=ClaimRole.LESSON, first_seen=first,
                 last_seen=last)  # fmt: skip


def _support(first: datetime, last: datetime, n: int = 2) -> PageSupport:
    return PageSupport(episodes=n, successes=n, first_seen=first, last_seen=last)


def _episode(n: str, when: datetime, channel: str, situation: str) -> dict[str, object]:
    return {
        "id": f"oc-{n}",
        "scope": SCOPE.key,
        "created_at": when,
        "situation": situation,
        "action": f"posted the summary in {channel}",
        "outcome": "success",
        "lesson": f"Page the on-call in {channel}.",
        "tools": ["slack"],
        "category": "incident",
    }


def _two_pages(rv: Reverie) -> tuple[str, str]:
    """Two pages of one context, each about one value of "page the on-call in <v>"."""
    first = _episode("1", JAN, "#ops-oncall", "Runbook update after the review")
    rv.ingest([first, _episode("2", APR, "#sre-pager", "Handing over a rollout")], now=APR)
    old = store_page(rv, SCOPE, "incident|slack|runbook~1", "Page the on-call in #ops-oncall",
                     [_lesson("Page the on-call in #ops-oncall.", ("oc-1",), JAN, JAN)], JAN,
                     _support(JAN, JAN, 1))  # fmt: skip
    new = store_page(rv, SCOPE, "incident|slack|handover~2", "Page the on-call in #sre-pager",
                     [_lesson("Page the on-call in #sre-pager.", ("oc-2",), APR, APR)], APR,
                     _support(APR, APR, 1))  # fmt: skip
    return old.id, new.id


def test_a_page_about_an_older_value_is_superseded_by_the_page_stating_the_newer(
    rv: Reverie,
) -> None:
    old, new = _two_pages(rv)
    rv.ingest([_episode("3", AUG, "#sre-pager", "Production alert during a deploy")], now=AUG)
    rv.dream(SCOPE, now=AUG)
    stale = rv.page(old)
    assert stale.status is PageStatus.SUPERSEDED
    assert stale.revision.superseded_by == new and stale.revision.valid_until == APR
    assert rv.page(new).status is PageStatus.ACTIVE
    now = rv.recall("which channel do I page the on-call in", SCOPE, 400, now=AUG)
    assert "#sre-pager" in now.text and "#ops-oncall" not in now.text
    then = rv.recall(
        "which channel do I page the on-call in", SCOPE, 400, as_of=JAN + timedelta(days=2)
    )
    assert "#ops-oncall" in then.text and "#sre-pager" not in then.text


def test_a_late_arrival_of_the_old_value_does_not_make_it_current(rv: Reverie) -> None:
    """The cycle revises the old value's page with an episode that arrives late but carries
    its own older time: the page is still superseded, in that same write."""
    ctx = WriteContext(SCOPE, "cy_1", AUG, {})
    old_rev = revision("pg_old", "Page the on-call in #ops-oncall",
                       [_lesson("Page the on-call in #ops-oncall.", ("a",), JAN, JAN)], JAN,
                       _support(JAN, JAN))  # fmt: skip
    new_rev = revision("pg_new", "Page the on-call in #sre-pager",
                       [_lesson("Page the on-call in #sre-pager.", ("b",), APR, APR)], APR,
                       _support(APR, APR))  # fmt: skip
    stored = [page(SCOPE, "incident|slack|a", old_rev), page(SCOPE, "incident|slack|b", new_rev)]
    late = JAN + timedelta(days=3)  # arrives in August, dated January
    claims = (_lesson("Page the on-call in #ops-oncall.", ("a", "c"), JAN, late),)
    grown = old_rev.model_copy(update={"number": 2, "claims": claims})
    writes = [("revised", PageWrite(SCOPE, "incident|slack|a", grown, 1), 1)]
    out = value_writes(ctx, stored, writes)
    assert len(out) == 1
    action, write, _n = out[0]
    assert action == "revised" and write.revision.number == 2
    assert write.revision.status is PageStatus.SUPERSEDED
    assert write.revision.superseded_by == "pg_new"
    assert write.revision.claims == claims


def test_pages_of_other_contexts_or_sentences_are_left_alone() -> None:
    ctx = WriteContext(SCOPE, "cy_1", AUG, {})
    one = revision("pg_1", "Set replicas to 3",
                   [_lesson("Set replicas to 3.", ("a",), JAN, JAN)], JAN)  # fmt: skip
    two = revision("pg_2", "Set replicas to 5",
                   [_lesson("Set replicas to 5.", ("b",), APR, APR)], APR)  # fmt: skip
    three = revision("pg_3", "The cache listens on 6379",
                     [_lesson("The cache listens on 6380.", ("c",), AUG, AUG)], AUG)  # fmt: skip
    stored = [page(SCOPE, "deploy|kubectl|a", one), page(SCOPE, "batch|spark|b", two),
              page(SCOPE, "deploy|kubectl|c", three)]  # fmt: skip
    assert value_writes(ctx, stored, []) == []


def _fact(n: str, when: datetime, base: str) -> dict[str, object]:
    return {
        "id": f"mb-{n}",
        "scope": SCOPE.key,
        "created_at": when,
        "situation": "Metrics API health check",
        "action": f"curl {base}/health",
        "outcome": "success",
        "metadata": {"fact": {"subject": "metrics-api", "attribute": "base", "value": base}},
    }


def test_a_stray_failure_naming_a_replaced_value_is_left_out_when_the_fact_is_not_asked(
    rv: Reverie,
) -> None:
    """The question finds only the stray (a later failure still using the old address); the
    fact page that replaced the address shares no word with it, yet the old value stays out."""
    rv.ingest([_fact("1", JAN, "https://telemetry.example.io/api"),
               _fact("2", APR, "https://insights.example.io")], now=APR)  # fmt: skip
    rv.dream(SCOPE, now=APR)
    stray = {
        "id": "stray-1",
        "scope": SCOPE.key,
        "created_at": AUG,
        "situation": "Old dashboard query for refunds usage",
        "action": "GET https://telemetry.example.io/api/usage",
        "outcome": "failure",
        "error": "404 from telemetry.example.io/api: endpoint moved",
    }
    rv.ingest([stray], now=AUG)
    rv.dream(SCOPE, now=AUG)
    asked = rv.recall("old dashboard query for refunds usage", SCOPE, 400, now=AUG)
    assert "telemetry.example.io" not in asked.text
    assert "insights.example.io" in asked.text  # the current value of what the question found
    past = rv.recall("metrics-api base", SCOPE, 400, as_of=APR - timedelta(days=1))
    assert "telemetry.example.io" in past.text and "insights" not in past.text
