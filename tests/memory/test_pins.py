"""A person's corrections stick — pinned claims, titles and kinds survive every
later cycle (reverie.dream.pins, the Markdown import, the console's edit, restore)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from reverie import Reverie
from reverie.dream.apply import WriteContext, revision_from
from reverie.dream.pins import is_human_edit, keep_pins
from reverie.errors import Conflict, InvalidInput
from reverie.models import Claim, ClaimRole, Episode, Page, PageKind, Scope
from reverie.models.plan import CreatePage, MergePages, Plan, RetirePage, RevisePage

SCOPE = "acme/coder"
DAY = datetime(2026, 11, 10, tzinfo=UTC)
TITLE = "Deploys to staging need a long rollout timeout"
MINE = "Always raise the rollout timeout to 10m before the first retry."
LESSONS = (  # what the agent learns about the page's problem, in its own words
    "Raise the rollout timeout before retrying a deploy.",
    "Raise the rollout timeout to 10m before retrying the staging deploy.",
    "Wait for the rollout to finish before retrying the deploy.",
)


# -- keep_pins, pure -----------------------------------------------------------------------------


def page(page_id: str, claims: tuple[Claim, ...], pins: tuple[str, ...] = ()) -> Page:
    ctx = WriteContext(Scope.parse(SCOPE), "cy_1", DAY, {})
    rev = revision_from(
        page_id, 1, ctx, title="deploy · kubectl", kind=PageKind.WARNING, claims=claims,
        confidence=0.8, pins=pins,
    )  # fmt: skip
    return Page(
        id=page_id, scope=ctx.scope, topic_key=f"t|{page_id}", revision=rev,
        created_at=DAY, updated_at=DAY,
    )  # fmt: skip


def claim(text: str, *ids: str, pinned: bool = False) -> Claim:
    return Claim(text=text, episode_ids=ids or ("ep-1",), pinned=pinned)


def revise(target: Page, *claims: Claim, **fields: Any) -> RevisePage:
    return RevisePage(
        page_id=target.id,
        expected_hash=target.revision.hash,
        title=fields.get("title", "machine title"),
        kind=fields.get("kind", PageKind.LESSON),
        confidence=0.9,
        claims=claims,
        pins=fields.get("pins", ()),
    )


def test_pinned_claims_come_first_verbatim_and_duplicates_go() -> None:
    pinned = claim("  Keep   the timeout at 10m ", "hu_1", pinned=True)
    target = page("pg_a", (claim("Failed 3 of 3 times."), pinned), pins=("kind", "title"))
    plan = Plan(
        operations=(
            revise(target, claim("Failed 4 of 4 times."), claim("keep the timeout at 10m")),
        )
    )
    (op,) = keep_pins(plan, {target.id: target}).operations
    assert isinstance(op, RevisePage)
    assert op.claims == (pinned, claim("Failed 4 of 4 times."))
    assert (op.title, op.kind, op.pins) == ("deploy · kubectl", PageKind.WARNING, ("kind", "title"))


def test_a_merge_keeps_the_pinned_claims_of_its_sources() -> None:
    target = page("pg_a", (claim("a"),), pins=("title",))
    source = page("pg_b", (claim("mine", "hu_2", pinned=True),))
    merge = MergePages(
        page_id=target.id, expected_hash=target.revision.hash,
        sources={source.id: source.revision.hash}, title="merged", kind=PageKind.LESSON,
        confidence=0.5, claims=(claim("b"),),
    )  # fmt: skip
    (op,) = keep_pins(Plan(operations=(merge,)), {p.id: p for p in (target, source)}).operations
    assert isinstance(op, MergePages)
    assert [c.text for c in op.claims] == ["mine", "b"] and op.title == "deploy · kubectl"
    assert op.kind is PageKind.LESSON  # kind was not pinned


def test_a_machine_cannot_pin_and_an_unpinned_page_is_left_alone() -> None:
    target = page("pg_a", (claim("a"),))
    create = CreatePage(
        topic_key="x", title="t", kind=PageKind.NOTE, confidence=0.3,
        claims=(claim("forever", pinned=True),), pins=("title",),
    )  # fmt: skip
    plan = Plan(operations=(revise(target, claim("b", pinned=True), pins=("kind",)), create))
    revised, created = keep_pins(plan, {target.id: target}).operations
    assert isinstance(revised, RevisePage) and isinstance(created, CreatePage)
    assert not any(c.pinned for c in (*revised.claims, *created.claims))
    assert revised.pins == () == created.pins and revised.title == "machine title"
    plain = Plan(operations=(revise(target, claim("b")),))
    assert keep_pins(plain, {target.id: target}) is plain


def test_retiring_a_pinned_page_is_a_decision_left_to_the_plan() -> None:
    target = page("pg_a", (claim("mine", pinned=True),), pins=("title",))
    retire = RetirePage(page_id=target.id, expected_hash=target.revision.hash, reason="wrong")
    assert keep_pins(Plan(operations=(retire,)), {target.id: target}).operations == (retire,)


def test_is_human_edit() -> None:
    ep = Episode.parse({"scope": SCOPE, "situation": "s", "metadata": {"reverie": "human-edit"}})
    assert is_human_edit(ep) and not is_human_edit(ep.model_copy(update={"metadata": {}}))


# -- a person's edit, then cycles ----------------------------------------------------------------


def deploy(n: int, when: datetime, **fields: Any) -> dict[str, Any]:
    return {
        "id": f"dep-{n:04d}",
        "scope": SCOPE,
        "created_at": when,
        "situation": "deploying the api to staging",
        "action": "kubectl apply -f k8s/",
        "outcome": "failure",
        "error": "TimeoutError: timed out waiting for the condition",
        "category": "deploy",
        "tools": ["kubectl"],
        **fields,
    }


def edited_brain(rv: Reverie, folder: Path, lesson: str | None = None) -> Page:
    """A deploy page (its anecdote; first its ``lesson``, if given) a person retitled,
    re-kinded (unquoted YAML), changed the first line of and added a line to."""
    said = {"lesson": lesson}
    result = rv.ingest([deploy(n, DAY + timedelta(hours=n), **said) for n in range(3)], now=DAY)
    assert result.stored == 1  # the two later ones are in the future of the ingest clock
    later = [deploy(n, DAY + timedelta(hours=n), **said) for n in (1, 2)]
    rv.ingest(later, now=DAY + timedelta(hours=4))
    rv.dream(SCOPE, now=DAY + timedelta(hours=4))
    (before,) = rv.pages(SCOPE)
    rv.export_markdown(SCOPE, folder)
    (path,) = (folder / "memories").glob("*.md")
    text = path.read_text(encoding="utf-8")
    text = re.sub(r'^kind: "[a-z]+"$', "kind: procedure  # a person's call", text, flags=re.M)
    text = text.replace(f"# {before.title}\n", f"# {TITLE}\n")
    first = before.revision.claims[0]
    changed = f"{first.text} Mostly on Mondays."
    text = text.replace(f"- {first.text} [", f"- {changed} [") + f"- {MINE}\n"
    path.write_text(text, encoding="utf-8")
    report = rv.import_markdown(SCOPE, folder, now=DAY + timedelta(hours=5))
    assert report.revised == [before.id], report.problems
    return rv.page(before.id)


def test_an_import_pins_what_the_person_wrote(rv: Reverie, tmp_path: Path) -> None:
    edited = edited_brain(rv, tmp_path, lesson=LESSONS[0])  # a line to change, one to leave
    rev = edited.revision
    assert (rev.title, rev.kind, rev.pins) == (TITLE, PageKind.PROCEDURE, ("kind", "title"))
    pinned = [c.text for c in rev.claims if c.pinned]
    assert pinned[-1] == MINE and pinned[0].endswith("Mostly on Mondays.") and len(pinned) == 2
    untouched = [c for c in rev.claims if not c.pinned]
    assert untouched and all(c in rv.revisions(edited.id)[0].claims for c in untouched)
    assert rv.verify(SCOPE).ok


def test_the_evidence_line_never_counts_a_persons_edit(rv: Reverie, tmp_path: Path) -> None:
    edited = edited_brain(rv, tmp_path)
    (human,) = next(c for c in edited.revision.claims if c.text == MINE).episode_ids
    when = DAY + timedelta(days=1)
    rv.ingest([deploy(100, when, outcome="success")], now=when)  # a routine run of the problem
    rv.dream(SCOPE, now=when + timedelta(hours=1))
    rev = rv.page(edited.id).revision
    (evidence,) = [c for c in rev.claims if c.role is ClaimRole.EVIDENCE]
    assert evidence.episode_ids == ("dep-0100",) and "1 other episode" in evidence.text
    assert [c.text for c in rev.claims if human in c.episode_ids] == [MINE]


def test_a_restored_revision_sticks_through_the_next_cycle(rv: Reverie) -> None:
    result = rv.ingest([deploy(n, DAY + timedelta(hours=n)) for n in range(3)], now=DAY)
    assert result.stored == 1  # the two later ones are in the future of the ingest clock
    rv.ingest([deploy(n, DAY + timedelta(hours=n)) for n in (1, 2)], now=DAY + timedelta(hours=4))
    rv.dream(SCOPE, now=DAY + timedelta(hours=4))
    (first,) = rv.pages(SCOPE)
    rv.ingest([deploy(n, DAY + timedelta(hours=n), outcome="success") for n in range(3, 6)])
    rv.dream(SCOPE, now=DAY + timedelta(hours=8))
    rv.restore(first.id, 1, now=DAY + timedelta(hours=9))
    rv.ingest([deploy(n, DAY + timedelta(hours=n)) for n in range(6, 9)], now=DAY + timedelta(1))
    rv.dream(SCOPE, now=DAY + timedelta(hours=12))
    now = rv.page(first.id).revision
    kept = [(c.text, c.episode_ids) for c in first.revision.claims]
    assert [(c.text, c.episode_ids) for c in now.claims[: len(kept)]] == kept
    assert now.title == first.title and now.pins == ("kind", "title")


EPISODE = st.fixed_dictionaries(
    {
        "outcome": st.sampled_from(["success", "failure", "timeout", "partial", "unknown"]),
        "lesson": st.sampled_from([None, *LESSONS]),
        "importance": st.integers(1, 10),
    }
)
CYCLES = st.lists(st.lists(EPISODE, min_size=1, max_size=3), min_size=20, max_size=20)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cycles=CYCLES)
def test_a_persons_claim_title_and_kind_survive_twenty_random_cycles(
    tmp_path_factory: Any, cycles: list[list[dict[str, Any]]]
) -> None:
    folder = tmp_path_factory.mktemp("pins")
    with Reverie.open(folder / "b.db") as rv:
        edited = edited_brain(rv, folder / "mirror")
        mine = next(c for c in edited.revision.claims if c.text == MINE)
        (human,) = mine.episode_ids
        n = 100
        for i, batch in enumerate(cycles):
            when = DAY + timedelta(days=i + 1)
            items = [deploy(n + j, when, **fields) for j, fields in enumerate(batch)]
            n += len(batch)
            rv.ingest(items, now=when)
            rv.dream(SCOPE, now=when + timedelta(hours=1))
            rev = rv.page(edited.id).revision
            assert {e["id"] for e in items} <= set(rev.citations)  # the cycle did revise it
            assert mine in rev.claims  # verbatim, still pinned, still citing the person
            assert (rev.title, rev.kind, rev.pins) == (TITLE, PageKind.PROCEDURE, ("kind", "title"))
            others = [c for c in rev.claims if not c.pinned]
            assert not any(human in c.episode_ids for c in others)  # never an outcome
            assert not any(MINE in c.text for c in others)


def test_a_console_edit_is_pinned_like_an_import_and_sticks(rv: Reverie) -> None:
    result = rv.ingest([deploy(n, DAY + timedelta(hours=n)) for n in range(3)], now=DAY)
    rv.ingest([deploy(n, DAY + timedelta(hours=n)) for n in (1, 2)], now=DAY + timedelta(hours=4))
    assert result.stored == 1
    rv.dream(SCOPE, now=DAY + timedelta(hours=4))
    (before,) = rv.pages(SCOPE)
    lines = [(c.text, c.episode_ids) for c in before.revision.claims]
    report = rv.edit_page(
        before.id,
        revision=before.revision.number,
        title=TITLE,
        kind="procedure",
        claims=[*lines, (MINE, ())],
        now=DAY + timedelta(hours=5),
    )
    rev = rv.page(before.id).revision
    assert (rev.title, rev.kind, rev.pins, rev.author) == (
        TITLE,
        PageKind.PROCEDURE,
        ("kind", "title"),
        "human",
    )
    mine = rev.claims[-1]
    assert mine.pinned and mine.episode_ids == (report.episode_id,)
    assert [c for c in rev.claims if not c.pinned] == list(before.revision.claims)
    assert is_human_edit(rv.episode(report.episode_id, tenant="acme"))
    when = DAY + timedelta(days=1)
    rv.ingest([deploy(n, when, outcome="success") for n in range(10, 13)], now=when)
    rv.dream(SCOPE, now=when + timedelta(hours=1))
    later = rv.page(before.id).revision
    assert mine in later.claims and (later.title, later.kind) == (TITLE, PageKind.PROCEDURE)


def test_a_console_edit_refuses_a_moved_page_and_foreign_citations(rv: Reverie) -> None:
    rv.ingest([deploy(n, DAY + timedelta(hours=n)) for n in range(3)], now=DAY + timedelta(1))
    rv.ingest([deploy(0, DAY, scope="acme/other", id="other-1")], now=DAY + timedelta(1))
    rv.dream(SCOPE, now=DAY + timedelta(days=1))
    (target,) = rv.pages(SCOPE)
    with pytest.raises(Conflict, match="changed since revision 0"):
        rv.edit_page(target.id, revision=0, title="stale")
    with pytest.raises(InvalidInput, match="not in this brain"):
        rv.edit_page(target.id, revision=target.revision.number, claims=[("x", ["other-1"])])
    assert rv.page(target.id).revision == target.revision  # nothing written
