"""Time decides "current" — newer evidence wins by created_at, in code."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from reverie import Reverie
from reverie.dream.facts import assertions, runs
from reverie.models import ClaimRole, Episode, Page, PageStatus
from reverie.models.plan import Evidence, Plan, SupersedePage, validate_plan

SCOPE = "acme/coder"
JAN, APR, AUG = (datetime(2026, m, 5, 9, tzinfo=UTC) for m in (1, 4, 8))
QUERY = "which editor does the user use"


def said(n: int, value: str, when: datetime, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"pref-{n}",
        "scope": SCOPE,
        "created_at": when,
        "situation": "the user asked to open a file",
        "action": f"opened it in {value}",
        "category": "preference",
        "metadata": {"fact": {"subject": "user", "attribute": "editor", "value": value}},
        **extra,
    }


def recalled(
    rv: Reverie, *, now: datetime | None = None, as_of: datetime | None = None
) -> list[str]:
    result = rv.recall(QUERY, SCOPE, 400, now=now, as_of=as_of)
    return sorted({i.title for i in result.items if i.kind == "page"})


def test_a_preference_that_changes_three_times(rv: Reverie) -> None:
    # each change arrives in its own cycle, as it would in a running agent
    for n, (value, when) in enumerate((("vim", JAN), ("emacs", APR), ("helix", AUG)), 1):
        rv.remember(said(n, value, when))
        rv.dream(SCOPE, now=when + timedelta(days=1))
    pages = {p.title: p for p in rv.pages(SCOPE, None)}
    assert set(pages) == {"user editor: vim", "user editor: emacs", "user editor: helix"}
    vim, emacs, helix = (pages[f"user editor: {v}"] for v in ("vim", "emacs", "helix"))
    assert vim.status is emacs.status is PageStatus.SUPERSEDED
    assert helix.status is PageStatus.ACTIVE and helix.revision.valid_until is None
    assert (vim.revision.valid_from, vim.revision.valid_until) == (JAN, APR)
    assert (emacs.revision.valid_from, emacs.revision.valid_until) == (APR, AUG)
    assert vim.revision.superseded_by == emacs.id and emacs.revision.superseded_by == helix.id
    assert "newer evidence pref-2" in (vim.revision.reason or "")
    # now, and as of each period
    assert recalled(rv, now=AUG + timedelta(days=30)) == ["user editor: helix"]
    assert recalled(rv, as_of=JAN + timedelta(days=10)) == ["user editor: vim"]
    assert recalled(rv, as_of=APR + timedelta(days=10)) == ["user editor: emacs"]
    assert recalled(rv, as_of=AUG + timedelta(days=10)) == ["user editor: helix"]
    assert recalled(rv, as_of=JAN - timedelta(days=10)) == []  # before anything was said
    # superseded pages stay readable, with every revision
    assert rv.page(vim.id).revision.claims[0].episode_ids == ("pref-1",)
    assert [r.status for r in rv.revisions(vim.id)] == [PageStatus.ACTIVE, PageStatus.SUPERSEDED]


def test_raw_episodes_of_old_values_do_not_leak_into_recall_now(rv: Reverie) -> None:
    rv.ingest([said(1, "vim", JAN), said(2, "emacs", APR), said(3, "helix", AUG)])
    rv.dream(SCOPE, now=AUG + timedelta(days=1))
    result = rv.recall(QUERY, SCOPE, 400, now=AUG + timedelta(days=2))
    assert "vim" not in result.text and "emacs" not in result.text
    assert "helix" in result.text


def test_late_old_evidence_never_wins(rv: Reverie) -> None:
    rv.remember(said(1, "helix", AUG))
    rv.dream(SCOPE, now=AUG + timedelta(days=1))
    rv.remember(said(2, "vim", JAN))  # arrives later, but happened earlier
    rv.dream(SCOPE, now=AUG + timedelta(days=2))
    active = rv.pages(SCOPE)
    assert [p.title for p in active] == ["user editor: helix"]
    assert recalled(rv, as_of=APR) == ["user editor: vim"]


def test_restating_the_current_value_reinforces_one_page(rv: Reverie) -> None:
    rv.remember(said(1, "vim", JAN))
    rv.dream(SCOPE, now=JAN + timedelta(days=1))
    rv.remember(said(2, "VIM ", APR))  # same value, other spelling
    report = rv.dream(SCOPE, now=APR + timedelta(days=1))
    assert report.created == 0 and report.revised == 1
    (page,) = rv.pages(SCOPE, None)
    assert page.citations == ["pref-1", "pref-2"] and page.revision.valid_from == JAN
    strength = rv.store.strengths([page.id])[page.id]
    assert (strength.episodes, strength.cycles, strength.last_seen) == (2, 2, APR)


def test_a_value_that_comes_back_is_a_new_run(rv: Reverie) -> None:
    rv.ingest([said(1, "vim", JAN), said(2, "emacs", APR), said(3, "vim", AUG)])
    rv.dream(SCOPE, now=AUG + timedelta(days=1))
    assert recalled(rv, as_of=JAN + timedelta(days=1)) == ["user editor: vim"]
    assert recalled(rv, as_of=APR + timedelta(days=1)) == ["user editor: emacs"]
    assert recalled(rv, now=AUG + timedelta(days=1)) == ["user editor: vim"]
    assert len(rv.pages(SCOPE, None)) == 3 and len(rv.pages(SCOPE)) == 1


def test_entities_assert_facts_too() -> None:
    ep = Episode.parse(
        {
            "scope": SCOPE,
            "situation": "deploy",
            "entities": ["service.version=1.4", "kubectl", "region = eu"],
        }
    )
    found = {(a.subject, a.attribute, a.value) for a in assertions(ep)}
    assert found == {("service", "version", "1.4"), ("", "region", "eu")}


def test_undo_of_a_superseding_cycle_makes_the_old_value_current_again(rv: Reverie) -> None:
    rv.remember(said(1, "vim", JAN))
    rv.dream(SCOPE, now=JAN + timedelta(days=1))
    rv.remember(said(2, "emacs", APR))
    second = rv.dream(SCOPE, now=APR + timedelta(days=1))
    rv.undo(second.cycle_id, now=APR + timedelta(days=2))
    assert [p.title for p in rv.pages(SCOPE)] == ["user editor: vim"]
    rv.dream(SCOPE, now=APR + timedelta(days=3))  # the released episode is consolidated again
    assert [p.title for p in rv.pages(SCOPE)] == ["user editor: emacs"]


VALUES = st.sampled_from(["vim", "emacs", "helix"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    stated=st.lists(st.tuples(VALUES, st.integers(0, 300)), min_size=1, max_size=8),
    order=st.randoms(use_true_random=False),
    cuts=st.integers(1, 4),
)
def test_arrival_order_and_cycle_split_do_not_change_the_answer(
    tmp_path_factory: Any, stated: list[tuple[str, int]], order: Any, cuts: int
) -> None:
    items = [said(n, v, JAN + timedelta(days=d, minutes=n)) for n, (v, d) in enumerate(stated)]
    expected = runs(a for item in items for a in assertions(Episode.parse(item)))
    shuffled = list(items)
    order.shuffle(shuffled)
    with Reverie.open(tmp_path_factory.mktemp("facts") / "b.db") as rv:
        step = max(1, len(shuffled) // cuts)
        for i in range(0, len(shuffled), step):
            rv.ingest(shuffled[i : i + step])
            rv.dream(SCOPE, now=JAN + timedelta(days=301 + i))
        live = [p for p in rv.pages(SCOPE, None) if p.revision.valid_until != p.revision.valid_from]
        got = sorted((p.revision.valid_from, p.revision.valid_until, p.title) for p in live)
    want = sorted((r.start, r.end, f"user editor: {r.assertions[-1].value}") for r in expected)
    assert got == want
    assert sum(1 for g in got if g[1] is None) == 1


def test_a_model_may_supersede_only_with_newer_evidence(rv: Reverie) -> None:
    rv.remember(said(1, "helix", AUG))
    rv.dream(SCOPE, now=AUG + timedelta(days=1))
    (page,) = rv.pages(SCOPE)
    old = Episode.parse(said(2, "vim", JAN))
    new = Episode.parse(said(3, "kakoune", AUG + timedelta(days=3)))
    op = SupersedePage(page_id=page.id, expected_hash=page.revision.hash, reason="model says so")
    plan = Plan(operations=(op,))

    def evidence(ep: Episode) -> Evidence:
        return Evidence(scope=page.scope, topic_key="t", episodes=(ep,), pages=(page,), now=AUG)

    assert "newer evidence wins" in validate_plan(plan, evidence(old))[0]
    assert validate_plan(plan, evidence(new)) == []


def test_a_subject_naming_the_brains_own_scope_is_no_subject(rv: Reverie) -> None:
    """``acme.editor=vim`` in the brain ``acme/coder`` and a later ``editor=helix`` are one slot:
    a brain's facts are about itself unless they name something else."""
    first = said(1, "vim", JAN)
    first["metadata"] = {"fact": {"subject": "acme", "attribute": "editor", "value": "vim"}}
    later = {**said(2, "helix", APR), "metadata": {}, "entities": ["editor=helix"]}
    other = {**said(3, "nano", APR), "metadata": {}, "entities": ["intern.editor=nano"]}
    rv.ingest([first, later, other])
    rv.dream(SCOPE, now=APR + timedelta(days=1))
    slots = {a.slot for ep in (first, later) for a in assertions(Episode.model_validate(ep))}
    assert slots == {"fact||editor"}
    pages = {p.title: p.status for p in rv.pages(SCOPE, None)}
    assert pages["acme editor: vim"] is PageStatus.SUPERSEDED
    assert pages["editor: helix"] is PageStatus.ACTIVE
    assert pages["intern editor: nano"] is PageStatus.ACTIVE  # another subject, its own slot


def test_a_setting_assigned_in_text_is_a_fact_and_its_episode_still_teaches(tmp_path: Any) -> None:
    """``config.set elig.clearinghouse=Optibridge``: a namespaced key, ``=``, a value. A later
    assignment supersedes it; a bare ``rc=0`` or a flag ``--timeout=10m`` is no fact."""
    t0 = datetime(2026, 9, 1, 9, tzinfo=UTC)
    rows = [
        {"id": "a1", "situation": "Ops lead asked for a config change", "outcome": "success",
         "action": "config.set elig.clearinghouse=Optibridge --timeout=10m",
         "outcome_details": "saved rc=0", "created_at": t0},
        {"id": "a2", "situation": "Connector check", "outcome": "success",
         "action": 'config.get {"key": "elig.clearinghouse"}',
         "outcome_details": "elig.clearinghouse=Payverra", "created_at": t0 + timedelta(days=3)},
    ]  # fmt: skip
    facts = _fact_pages(tmp_path, rows, t0 + timedelta(days=4))
    current = [p.title for p in facts if p.status is PageStatus.ACTIVE]
    assert current == ["elig clearinghouse: Payverra"]
    assert {p.status for p in facts} == {PageStatus.ACTIVE, PageStatus.SUPERSEDED}
    assert not [p for p in facts if "rc" in p.title or "timeout" in p.title]


def _fact_pages(tmp_path: Any, rows: list[dict[str, Any]], now: datetime) -> list[Page]:
    """The fact pages, of every status, of a brain that stored ``rows`` and dreamt at ``now``."""
    with Reverie.open(tmp_path / "brain.db") as rv:
        rv.ingest(rows, scope=SCOPE)
        rv.dream(SCOPE, now=now)
        return [p for p in rv.pages(SCOPE, "all") if p.kind == "fact"]


@pytest.mark.parametrize(
    ("printed", "value"),
    [
        ("✅ wire.approval_limit <- 'USD 175000' (rev 52)", "USD 175000"),
        ('SUCCESS: {"wire.approval_limit": "USD 175000", "rev": 40}', "USD 175000"),
        ("✔ wire.approval_limit = USD 175000\nTool run closed cleanly.", "USD 175000"),
        ("approval_limit := 'USD 175000'", "USD 175000"),
        ('{"key": "wire.approval_limit", "value": "USD 175000", "by": "ops"}', "USD 175000"),
        ('[{"Value": "USD 175000", "Name": "wire.approval_limit"}]', "USD 175000"),
    ],
)
def test_a_setting_printed_by_a_config_tool_is_a_fact(
    tmp_path: Any, printed: str, value: str
) -> None:
    """What a config tool prints after a write or a read states the setting's value as well as
    ``key=value`` does: a spaced ``=`` (the value runs to the end of its clause), an assignment
    arrow, a dotted key of a JSON object, a key-value store's entry. The older value is
    superseded."""
    t0 = datetime(2026, 9, 1, 9, tzinfo=UTC)
    rows = [
        {"id": "b1", "situation": "Raising the limit", "outcome": "success",
         "action": "cfg write", "outcome_details": printed.replace("175000", "90000"),
         "created_at": t0},
        {"id": "b2", "situation": "Checking the limit", "outcome": "success",
         "action": "cfg read", "outcome_details": printed, "created_at": t0 + timedelta(days=3)},
        {"id": "b3", "situation": "Comparing", "outcome": "success", "action": "cfg diff",
         "outcome_details": "if a == b.c then stop; a.b <= 3; my_df <- read.csv(path)",
         "created_at": t0},
    ]  # fmt: skip
    facts = _fact_pages(tmp_path, rows, t0 + timedelta(days=4))
    current = [p.title for p in facts if p.status is PageStatus.ACTIVE]
    assert len(current) == 1 and current[0].endswith(f"approval_limit: {value}")
    assert {p.status for p in facts} == {PageStatus.ACTIVE, PageStatus.SUPERSEDED}


def test_a_fact_page_quoting_a_problems_lesson_is_never_merged_into_that_problem(
    tmp_path: Any,
) -> None:
    """The episodes that set a value can teach the lesson a problem page holds; the fact page
    quotes it, and stays its slot's (two writes of one page in a cycle were a conflict)."""
    lesson = "A new consumer group starts at the end; set auto.offset.reset=earliest for history."
    t0 = datetime(2026, 5, 1, 9, tzinfo=UTC)
    rows = []
    for day in range(6):
        at = t0 + timedelta(days=day)
        rows += [
            {"id": f"f{day}", "situation": f"Fresh consumer group g{day} reads nothing",
             "action": f"kcat -G g{day} events", "outcome": "failure",
             "error": "no records returned", "lesson": lesson, "created_at": at},
            {"id": f"s{day}", "situation": f"Fresh consumer group g{day} reads nothing",
             "action": "set auto.offset.reset=earliest in the consumer config",
             "outcome": "success", "lesson": lesson, "created_at": at + timedelta(hours=1)},
        ]  # fmt: skip
    with Reverie.open(tmp_path / "brain.db") as rv:
        for day in range(6):
            rv.ingest([r for r in rows if r["id"][1:] == str(day)], scope=SCOPE)
            rv.dream(SCOPE, now=t0 + timedelta(days=day, hours=23))
        pages = rv.pages(SCOPE)
        assert [p.title for p in pages if p.kind == "fact"] == ["auto.offset reset: earliest"]
        assert any(p.kind != "fact" and "earliest" in p.revision.claims[0].text for p in pages)


def test_a_fact_page_keeps_only_the_lessons_that_speak_of_its_fact(tmp_path: Any) -> None:
    """A lesson its asserting episode happened to carry is no claim of the fact unless it
    shares a word with the fact's subject, attribute or value."""
    t0 = datetime(2026, 9, 1, 9, tzinfo=UTC)
    rows = [
        {"id": "c1", "situation": "Checking the limit", "outcome": "success", "action": "cfg read",
         "outcome_details": "wire.approval_limit=USD-90000",
         "lesson": "Qorvex wibble plinth dorrance.", "created_at": t0},
        {"id": "c2", "situation": "Checking the limit", "outcome": "success", "action": "cfg read",
         "outcome_details": "wire.approval_limit=USD-90000",
         "lesson": "Above the approval limit, ask treasury first.",
         "created_at": t0 + timedelta(days=1)},
    ]  # fmt: skip
    facts = _fact_pages(tmp_path, rows, t0 + timedelta(days=2))
    [page] = [p for p in facts if p.status is PageStatus.ACTIVE]
    lessons = [c.text for c in page.revision.claims if c.role is ClaimRole.LESSON]
    assert lessons == ["Above the approval limit, ask treasury first."]
