"""Split: a page that has grown to hold unrelated problems becomes one page per problem.

A page is one recurring problem, but it can come to hold several: a brain dreamed before
episodes were grouped by problem has one page per tool, and a problem's centre can drift until
its page gathers a neighbour's evidence. When a page's evidence has grown enough to tell,
:func:`find_split` groups the page's work set afresh — its cited episodes plus the new ones,
with :func:`~reverie.dream.problems.group_by_problem` and no page to lead — and looks for
**well-supported parts**: problems with at least ``DreamConfig.split_min_part`` episodes that
are knowledge (:func:`~reverie.dream.problems.is_knowledge`).

* The part that keeps the page is the one its actionable claims (lessons, warnings, fixes) cite
  most, then the largest: a page keeps its identity, and a person's pinned claims stay on it.
* A part *teaches* its stated lessons and the fix its history shows
  (:func:`~reverie.dream.lessons.current_fix`); parts that teach a same lesson
  (:func:`~reverie.dream.dedupe.same_lesson`) are one problem. Every problem other than the
  kept part's moves to a page of its own, whose topic is its largest part's problem key. Parts
  that teach nothing (a wording of the page's failures), weak parts and routine runs stay.
* Every citation is kept: a moved episode is cited by its new page, everything else (older
  evidence beyond the history shown among it) by the page. Revisions already written still
  cite what they cited.

When it is checked (:func:`split_due`): the first time the page's evidence reaches
``DreamConfig.split_min_episodes`` episodes, and again each time it doubles, so the regrouping
costs a bounded amount per episode. Deterministic: the same page and work set give the same
parts, whatever order the episodes come in.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING

from reverie.config import DreamConfig
from reverie.dream.boilerplate import is_template_lesson
from reverie.dream.cluster import error_class
from reverie.dream.dedupe import lesson_words, same_lesson
from reverie.dream.lessons import current_fix
from reverie.dream.problems import group_by_problem, is_knowledge
from reverie.models import TEACHING_ROLES, Episode, Page
from reverie.models.plan import SplitPart

if TYPE_CHECKING:
    from reverie.dream.cluster import Group
    from reverie.embed import Embedder

__all__ = ["find_split", "split_due"]


def split_due(page: Page, grown_to: int, config: DreamConfig) -> bool:
    """Whether a page whose evidence grows to ``grown_to`` episodes is checked for a split: at
    ``split_min_episodes``, then at each doubling; a page with no tallies yet, once it is big
    enough."""
    least = config.split_min_episodes
    if least <= 0 or grown_to < least:
        return False
    support = page.revision.support
    if support is None:
        return True
    return _level(grown_to, least) > _level(support.episodes, least)


def _level(episodes: int, least: int) -> int:
    return -1 if episodes < least else int(math.log2(episodes / least))


def find_split(
    page: Page,
    work: Sequence[Episode],
    *,
    embedder: Embedder | None,
    config: DreamConfig,
) -> tuple[SplitPart, ...]:
    """The parts ``page`` gives up to pages of their own (module docstring); empty when it
    holds one problem."""
    groups = group_by_problem(
        work,
        [],
        embedder=embedder,
        threshold=config.problem_similarity,
        lexical_threshold=config.problem_similarity_lexical,
    )
    parts = [g for g in groups if _well_supported(g, config)]
    if len(parts) < 2:
        return ()
    kept = parts.index(_kept_part(page, parts))
    taught = [_teachings(g.episodes) for g in parts]
    roots = _problems(taught, config)
    leaving: dict[int, list[Group]] = defaultdict(list)
    for i, root in enumerate(roots):
        if taught[i] and root != roots[kept]:
            leaving[root].append(parts[i])
    return tuple(_part(members) for _root, members in sorted(leaving.items()))


def _well_supported(group: Group, config: DreamConfig) -> bool:
    return len(group.episodes) >= config.split_min_part and is_knowledge(
        group, False, config.importance_threshold, config.min_pattern
    )


def _kept_part(page: Page, parts: Sequence[Group]) -> Group:
    """The part cited most by what the page teaches or a person pinned; ties: the largest, then
    the key."""
    identity = {
        e
        for c in page.revision.claims
        if c.role in TEACHING_ROLES or c.pinned
        for e in c.episode_ids
    }

    def rank(g: Group) -> tuple[int, int, str]:
        cited = sum(ep.id in identity for ep in g.episodes)
        return (-cited, -len(g.episodes), g.topic_key)

    return min(parts, key=rank)


def _teachings(episodes: Sequence[Episode]) -> list[frozenset[str]]:
    """What a part teaches: its stated lessons and the fix its history shows, as words."""
    stated = {ep.lesson for ep in episodes if ep.lesson and not is_template_lesson(ep.lesson)}
    fix = current_fix(episodes, lambda ep: error_class(ep.error))
    if fix is not None:
        stated.add(fix.action)
    return [words for text in sorted(stated) if (words := lesson_words(text))]


def _problems(taught: Sequence[Sequence[frozenset[str]]], config: DreamConfig) -> list[int]:
    """Parts that teach a same lesson are one problem: the smallest index of each part's."""
    roots = list(range(len(taught)))
    for i, j in combinations(range(len(taught)), 2):
        if any(same_lesson(a, b, True, config) for a in taught[i] for b in taught[j]):
            low, high = sorted((roots[i], roots[j]))
            roots = [low if r == high else r for r in roots]
    return roots


def _part(members: Sequence[Group]) -> SplitPart:
    """One problem's parts as one: the topic of its largest, every episode."""
    largest = min(members, key=lambda g: (-len(g.episodes), g.topic_key))
    ids = sorted({ep.id for g in members for ep in g.episodes})
    return SplitPart(topic_key=largest.topic_key, episode_ids=tuple(ids))
