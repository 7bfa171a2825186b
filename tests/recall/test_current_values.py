"""Only current values reach a section: which unit is the newer side of a change of value."""

from __future__ import annotations

from datetime import UTC, datetime

from reverie.models import RecallItem
from reverie.recall.answers import Replaced, newest_values
from reverie.text.slots import slot_of

MAY, JUN, JUL = (datetime(2026, m, 3, 9, tzinfo=UTC) for m in (5, 6, 7))


def _unit(text: str, when: datetime, kind: str = "episode", status: str = "success") -> RecallItem:
    role = "lesson" if kind == "page" else None
    return RecallItem(kind=kind, id=f"{kind}-{text}", title="t", text=text, score=1.0, tokens=0,
                      citations=[], created_at=when, status=status, role=role)  # fmt: skip


def _texts(units: list[RecallItem]) -> list[str]:
    return [u.text for u in units]


def test_a_later_failure_with_the_old_value_does_not_make_the_current_one_stale() -> None:
    old = _unit("USE WAREHOUSE TRANSFORM_WH", MAY)
    new = _unit("USE WAREHOUSE PIPE_L_WH", JUN)
    lesson = _unit("Run transformations on PIPE_L_WH.", JUN, kind="page")
    stray = _unit("USE WAREHOUSE TRANSFORM_WH", JUL, status="failure")
    kept = _texts(newest_values([old, new, lesson, stray]))
    assert kept == ["USE WAREHOUSE PIPE_L_WH", "Run transformations on PIPE_L_WH."]


def test_a_later_success_with_another_value_still_replaces_it() -> None:
    units = [_unit("USE WAREHOUSE A_WH", MAY), _unit("USE WAREHOUSE B_WH", JUN)]
    kept = _texts(newest_values(units))
    assert kept == ["USE WAREHOUSE B_WH"]


def test_a_claim_dated_by_an_episode_stating_another_value_is_stale() -> None:
    """A claim is never newer than its newest evidence: worded with the old value, dated by the
    episode that states the new one, the episode wins."""
    claim = _unit("Heavy build jobs run on ubuntu-22.04-8core.", JUL, kind="page")
    episode = _unit("Heavy build jobs run on buildjet-16vcpu.", JUL)
    assert _texts(newest_values([claim, episode])) == [episode.text]
    # two claims of one time hold each other: neither is newer
    other = _unit("Heavy build jobs run on buildjet-16vcpu.", JUL, kind="page")
    assert len(newest_values([claim, other])) == 2


def test_a_replaced_count_names_nothing() -> None:
    """One or two digits that a change replaced (a part of ``05:30 UTC``) are in every line."""
    replaced = Replaced(since={"30": JUL, "05:30 utc": JUL})
    tally = _unit("Also observed in 30 other episodes.", JUN, kind="page")
    old = _unit("the daily load must finish by 05:30 UTC", JUN)
    assert _texts(newest_values([tally, old], replaced=replaced)) == [tally.text]


def test_a_label_with_dots_and_hyphens_is_one_value() -> None:
    old = slot_of("Heavy build jobs run on ubuntu-22.04-8core.")
    new = slot_of("Heavy build jobs run on buildjet-16vcpu.")
    assert old is not None and new is not None
    assert old.key == new.key == "heavy build jobs run on <v>"
    assert old.value == "ubuntu-22.04-8core"


def test_the_arguments_of_one_call_are_replaced_by_no_later_call() -> None:
    """A tool call's JSON arguments are that call's own: a later refund of another order
    replaces neither the first order's id nor its amount, so both refunds stay evidence."""
    first = _unit('Refund for a kettle — refund_order {"order_id": "W2041887", "amount": 24}'
                  " — refunded", MAY)  # fmt: skip
    later = _unit('Refund for a late parcel — refund_order {"order_id": "W7730012", "amount": 9}'
                  " — refunded", JUN)  # fmt: skip
    assert _texts(newest_values([first, later])) == [first.text, later.text]
    assert slot_of('deploy {"service": "api", "version": "1.0"} finished') is None
