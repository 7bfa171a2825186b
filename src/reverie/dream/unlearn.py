"""Unlearning boilerplate: pages written before a text was known to be a stop phrase.

A brain learns its stop phrases from its own episodes (:mod:`reverie.dream.boilerplate`), so a
young brain can write a page whose title or lesson is a filler it has not yet seen everywhere.
Once the filler is known, such a page (:func:`holds_boilerplate`) no longer makes the routine
episodes that join it knowledge (:func:`~reverie.dream.problems.problem_groups`: they pass, as
routine work with no page does), and, in a cycle where no knowledge joins it, it is distilled
again from its own history, seen without the stop phrases, with no model:

* what remains teaches something (:func:`~reverie.dream.problems.is_knowledge`): the page is
  revised, the filler gone from its title and claims, every citation kept;
* nothing remains but routine evidence, and no person edited the page: it is **retired** (kept,
  readable, still citing its episodes, out of recall): routine successes are a tally, not a page.

A page a person edited is only ever revised. At most :data:`MAX_PAGES` pages per cycle.
"""

from __future__ import annotations

from collections.abc import Sequence

from reverie.config import DreamConfig
from reverie.dream.boilerplate import Boilerplate
from reverie.dream.cluster import Group
from reverie.dream.distill import ExtractiveDistiller
from reverie.dream.pins import has_pins
from reverie.dream.problems import is_knowledge, is_problem_page
from reverie.models import Page, PageStatus
from reverie.models.plan import Evidence, Plan, RetirePage

__all__ = ["MAX_PAGES", "holds_boilerplate", "unlearn", "unlearning_groups"]

MAX_PAGES = 50
RETIRED = "its lessons are boilerplate of this brain; what is left is routine evidence"


def holds_boilerplate(page: Page, boilerplate: Boilerplate) -> bool:
    """Whether an active problem page is titled by, or teaches, a stop phrase."""
    active = page.status is PageStatus.ACTIVE and is_problem_page(page)
    return active and boilerplate.holds(page)


def unlearning_groups(
    pages: Sequence[Page], groups: Sequence[Group], boilerplate: Boilerplate
) -> list[Group]:
    """An empty group for each page holding boilerplate that no group of the cycle feeds
    (those are rewritten from their stripped history anyway)."""
    fed = {g.topic_key for g in groups}
    stale = [p for p in pages if p.topic_key not in fed and holds_boilerplate(p, boilerplate)]
    return [Group(topic_key=p.topic_key, episodes=()) for p in stale[:MAX_PAGES]]


def unlearn(evidence: Evidence, extractive: ExtractiveDistiller, config: DreamConfig) -> Plan:
    """The plan for one page holding boilerplate (module docstring)."""
    page = next((p for p in evidence.pages if p.topic_key == evidence.topic_key), None)
    if page is None:
        return Plan(distiller=extractive.name)
    work = Group(topic_key=page.topic_key, episodes=evidence.history.get(page.id, ()))
    teaches = is_knowledge(work, False, config.importance_threshold, config.min_pattern)
    if teaches or has_pins(page):
        return extractive.distill(evidence)
    retire = RetirePage(page_id=page.id, expected_hash=page.revision.hash, reason=RETIRED)
    return Plan(operations=(retire,), distiller=extractive.name)
