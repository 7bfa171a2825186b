"""A generated corpus of invalid plans: every one is refused before anything could change.

Each example starts from a valid plan for a fixed evidence group (checked: it passes) and applies
one mutation from the issue's list; :func:`reverie.dream.llm_distill.plan_problems` (strict parse,
then :func:`reverie.models.plan.validate_plan`) must report at least one problem. Together the
parametrized runs generate well over 1,000 invalid plans.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reverie.dream.apply import WriteContext, revision_from
from reverie.dream.llm_distill import plan_problems
from reverie.models import Claim, Episode, Page, PageKind, Scope
from reverie.models.plan import Evidence, page_id_for

SCOPE = Scope.parse("acme/coder")
NOW = datetime(2026, 11, 10, tzinfo=UTC)
EPISODES = tuple(
    Episode.parse({"id": f"ep-{i}", "scope": "acme/coder", "situation": f"s{i}", "action": "a"})
    for i in range(4)
)


def _page(topic: str, cites: tuple[str, ...]) -> Page:
    page_id = page_id_for(SCOPE, topic)
    ctx = WriteContext(SCOPE, "cy_0", NOW, {})
    rev = revision_from(
        page_id,
        1,
        ctx,
        title=topic,
        kind=PageKind.FACT,
        claims=(Claim(text=f"about {topic}", episode_ids=cites),),
        confidence=0.7,
    )
    return Page(
        id=page_id, scope=SCOPE, topic_key=topic, revision=rev, created_at=NOW, updated_at=NOW
    )


PAGES = (_page("deploy", ("ep-0",)), _page("build", ("ep-1",)), _page("test", ("ep-2",)))
EVIDENCE = Evidence(scope=SCOPE, topic_key="new-topic", episodes=EPISODES, pages=PAGES, now=NOW)
IDS = [e.id for e in EPISODES]
OPS = ("create", "revise", "merge", "supersede", "retire")

texts = st.text(min_size=1, max_size=30).filter(lambda t: t.strip() != "")
claims = st.lists(
    st.fixed_dictionaries(
        {"text": texts, "episode_ids": st.lists(st.sampled_from(IDS), min_size=1, max_size=3)}
    ),
    min_size=1,
    max_size=3,
)


def _content(claim_list: list[dict[str, Any]], title: str) -> dict[str, Any]:
    return {"title": title, "kind": "lesson", "confidence": 0.6, "claims": claim_list}


@st.composite
def valid_plans(draw: st.DrawFn) -> dict[str, Any]:
    """1-3 operations on distinct shown pages (or a create of the new topic), all valid."""
    order = draw(st.permutations(list(range(len(PAGES)))))
    count = draw(st.integers(1, 3))
    operations: list[dict[str, Any]] = []
    free = list(order)
    for _ in range(count):
        kind = draw(st.sampled_from(OPS))
        if kind == "create":
            if any(o["op"] == "create" for o in operations):
                continue
            operations.append(
                {"op": "create", "topic_key": "new-topic", **_content(draw(claims), draw(texts))}
            )
            continue
        if not free or (kind == "merge" and len(free) < 2):
            continue
        page = PAGES[free.pop()]
        target = {"page_id": page.id, "expected_hash": page.revision.hash}
        if kind in ("revise", "merge"):
            operations.append({"op": kind, **target, **_content(draw(claims), draw(texts))})
            if kind == "merge":
                source = PAGES[free.pop()]
                operations[-1]["sources"] = {source.id: source.revision.hash}
        else:
            operations.append({"op": kind, **target, "reason": draw(texts)})
    return {"operations": operations}


def _targets(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [o for o in plan["operations"] if "page_id" in o]


def _with_content(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [o for o in plan["operations"] if "claims" in o]


Draw = st.DrawFn
Ops = list[dict[str, Any]]
ZERO_HASH = "sha256:" + "0" * 64


def _drop_page(ops: Ops, page: Page) -> None:
    """Remove operations touching ``page`` so the mutation is the only problem on it."""
    ops[:] = [o for o in ops if o.get("page_id") != page.id and page.id not in o.get("sources", {})]


def _unknown_op(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    op = draw(st.sampled_from(plan["operations"]))
    op["op"] = draw(st.sampled_from(["delete", "drop", "erase", "rewrite", junk]))


def _unknown_field_op(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    draw(st.sampled_from(plan["operations"]))[f"x_{junk}"] = draw(st.integers() | st.text())


def _unknown_field_plan(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    plan[f"x_{junk}"] = True


def _unknown_field_claim(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    _with_content(plan)[0]["claims"][0][f"x_{junk}"] = "y"


def _citation_not_in_input(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    _with_content(plan)[-1]["claims"][-1]["episode_ids"].append(f"ep-{junk}")


def _page_citation_not_shown(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    _with_content(plan)[0]["claims"][0]["page_ids"] = [f"pg_{junk}"]


def _page_not_supplied(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    op = draw(st.sampled_from(["retire", "supersede"]))
    plan["operations"].append(
        {"op": op, "page_id": f"pg_{junk}", "expected_hash": ZERO_HASH, "reason": "r"}
    )


def _stale_hash(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    page = draw(st.sampled_from(PAGES))
    _drop_page(plan["operations"], page)
    plan["operations"].append(
        {"op": "retire", "page_id": page.id, "expected_hash": f"sha256:{junk}", "reason": "r"}
    )


def _two_ops_one_target(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    plan["operations"].append(copy.deepcopy(draw(st.sampled_from(plan["operations"]))))


def _merge(draw: Draw, plan: dict[str, Any], sources: dict[str, str]) -> None:
    page = draw(st.sampled_from(PAGES))
    _drop_page(plan["operations"], page)
    target = {"page_id": page.id, "expected_hash": page.revision.hash, "sources": sources}
    plan["operations"].append({"op": "merge", **target, **_content(draw(claims), "m")})


def _merge_without_sources(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    _merge(draw, plan, {})


def _merge_source_not_supplied(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    _merge(draw, plan, {f"pg_{junk}": ZERO_HASH})


def _create_existing_topic(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    topic = draw(st.sampled_from([p.topic_key for p in PAGES]))
    plan["operations"].append({"op": "create", "topic_key": topic, **_content(draw(claims), "c")})


def _missing_op(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    draw(st.sampled_from(plan["operations"])).pop("op")


def _bad_kind(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    _with_content(plan)[0]["kind"] = draw(st.sampled_from(["rumour", "LESSON", "", junk]))


def _confidence_out_of_range(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    value = draw(st.floats(1.0001, 1e9) | st.floats(-1e9, -0.0001))
    _with_content(plan)[0]["confidence"] = value


def _no_citations(draw: Draw, plan: dict[str, Any], junk: str) -> None:
    _with_content(plan)[0]["claims"][0]["episode_ids"] = []


MUTATIONS = {
    "unknown-op": _unknown_op,
    "unknown-field-op": _unknown_field_op,
    "unknown-field-plan": _unknown_field_plan,
    "unknown-field-claim": _unknown_field_claim,
    "citation-not-in-input": _citation_not_in_input,
    "page-citation-not-shown": _page_citation_not_shown,
    "page-not-supplied": _page_not_supplied,
    "stale-hash": _stale_hash,
    "two-ops-one-target": _two_ops_one_target,
    "merge-without-sources": _merge_without_sources,
    "merge-source-not-supplied": _merge_source_not_supplied,
    "create-existing-topic": _create_existing_topic,
    "missing-op": _missing_op,
    "bad-kind": _bad_kind,
    "confidence-out-of-range": _confidence_out_of_range,
    "no-citations": _no_citations,
}


@st.composite
def invalid_plans(draw: st.DrawFn, mutation: str) -> dict[str, Any]:
    """A valid plan (with at least one content operation) broken by ``mutation``."""
    plan = copy.deepcopy(draw(valid_plans()))
    if not _with_content(plan):
        plan["operations"].append(
            {"op": "create", "topic_key": "new-topic", **_content(draw(claims), "t")}
        )
    junk = draw(
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=3, max_size=12).filter(
            lambda j: j not in OPS
        )
    )
    MUTATIONS[mutation](draw, plan, junk)
    return plan


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=valid_plans())
def test_generated_valid_plans_pass(plan: dict[str, Any]) -> None:
    assert plan_problems(plan, EVIDENCE) == []


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_generated_invalid_plans_are_rejected(mutation: str) -> None:
    """16 mutations x 80 examples = 1,280 invalid plans."""

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(plan=invalid_plans(mutation))
    def check(plan: dict[str, Any]) -> None:
        assert plan_problems(plan, EVIDENCE), plan

    check()
