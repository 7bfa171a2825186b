"""What a page's successor replaced: values its own sentences changed, never its bookkeeping.

A page superseded by another names the values that changed where the successor says the same
sentence with another value ("Exports go to ledger-a." then "Exports go to ledger-c."). A
fix or an anecdote quotes the calls of its newest case and a tally counts its cases: a new
revision changes those with every case, so their words are not values a question about them
should be answered with the successor for, nor values to drop as stale."""

from __future__ import annotations

from datetime import UTC, datetime

from reverie.models import Claim, ClaimRole, Page, PageKind, PageStatus, Revision, Scope
from reverie.recall.answers import changed_values

NOW = datetime(2026, 10, 1, tzinfo=UTC)
SCOPE = Scope(tenant="acme", agent="ops")


def _page(page_id: str, *claims: Claim) -> Page:
    revision = Revision(
        page_id=page_id, number=1, hash="sha256:" + "0" * 64, title="Replies",
        kind=PageKind.PROCEDURE, claims=claims, confidence=0.8, status=PageStatus.ACTIVE,
        created_at=NOW,
    )  # fmt: skip
    return Page(
        id=page_id, scope=SCOPE, topic_key="t", revision=revision, created_at=NOW, updated_at=NOW
    )


def _fix(template: str, to: str, done: int) -> Claim:
    call = f'send_reply {{"template":"{template}","to":"{to}"}}'
    change = f'template: "{template}" added; to: "{to}" added'
    text = f"When Reply about a charge fails: {call} worked ({change}; {done} of {done} times)."
    return Claim(text=text, episode_ids=("a",), role=ClaimRole.FIX)


def test_a_lesson_that_states_another_value_replaces_it() -> None:
    old = _page("p1", Claim(text="Exports go to ledger-a.", episode_ids=("a",), role="lesson"))
    new = _page("p2", Claim(text="Exports go to ledger-c.", episode_ids=("b",), role="lesson"))
    assert changed_values(old, new) == {"ledger-a"}


def test_a_fix_quoting_another_case_or_a_grown_tally_replaces_nothing() -> None:
    old = _page("p1", _fix("refund_digest", "finance", 2))
    for new in (_fix("status_update", "team", 55), _fix("refund_digest", "finance", 3)):
        assert changed_values(old, _page("p2", new)) == set()


def test_a_lessons_tally_is_no_value() -> None:
    def lesson(n: int) -> Claim:
        text = f"Exports go to ledger-a ({n} times, last 2026-09-0{n})."
        return Claim(text=text, episode_ids=("a",), role=ClaimRole.LESSON)

    assert changed_values(_page("p1", lesson(2)), _page("p2", lesson(5))) == set()
