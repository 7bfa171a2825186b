"""Duplicate pressure: one lesson, one page (issue 5).

A topic key is ``category|tools``, so the same lesson learnt under another category or with other
tools would land on a second page. Before the cycle scores and distils its groups, :func:`route`
moves every episode whose lesson is one the brain already holds — or one that other episodes of
this cycle teach under another topic — to that lesson's **home**:

* **Lesson identity** (:func:`same_lesson`): the normalised words (lowercased, stop words out,
  light stemming) of two lessons; they are one lesson when they share at least
  :data:`MIN_SHARED` words and ``DreamConfig.duplicate_overlap`` of the shorter one's words, or
  ``duplicate_overlap_related`` when they were learnt in the same category or with a shared tool
  (the page side: its topic key); each naming a number the other lacks keeps them apart. With an
  embedder, a cosine of ``duplicate_cosine`` or more also makes them one.
* **Anchors** are the lesson-like claims of the scope's active pages (not tallies, errors,
  examples or "Worked:" lines). Lessons and anchors linked by identity form components; a
  component's home is its page holding the most evidence (ties: oldest, then id), else the
  topic where most of its episodes already are (ties: smallest key).
* When one component reaches several active pages, they already hold the same lesson twice: the
  home group is told to **merge** the others into its page (``Routing.merges``; a merge
  supersedes its sources, it never deletes), and every group of a merged page's topic goes
  home too, so no plan revises a page another plan supersedes.
* A group whose topic's page was merged away earlier follows it (``superseded_by``).

Only whole episodes move, between groups of one cycle: nothing is dropped or taken twice, so
exactly-once holds. Pure apart from the page reads; deterministic for the same groups and pages.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from reverie.config import DreamConfig
from reverie.dream.cluster import STOP_WORDS, Group, order_key
from reverie.dream.templates import is_template_lesson
from reverie.models import Claim, ClaimRole, Episode, Page, PageStatus, Scope
from reverie.recall.query import stem

if TYPE_CHECKING:
    from reverie.embed import Embedder
    from reverie.store.base import BrainStore

__all__ = ["MIN_SHARED", "Routing", "lesson_words", "route", "same_lesson"]

MIN_SHARED = 3
"""Two lessons must share at least this many words (or all of the shorter one's, if fewer)."""
MIN_SHARE_OF_LONGER = 0.34
"""...and this share of the longer one's: a short lesson is not "contained" in a long example."""
COMMON_TOKEN = 256
"""Candidates are found through words rarer than this; verification still counts every word."""
EMBED_LIMIT = 4000
_WORD = re.compile(r"[^\W_]+")
_NOT_LESSONS = re.compile(
    r"^(Failed|Succeeded|Timed out|Partially succeeded|Ended with|Error seen|When |Worked: )"
)


@lru_cache(maxsize=1 << 14)
def lesson_words(text: str) -> frozenset[str]:
    """The normalised words of a lesson: lowercased, stop words out, stemmed."""
    words = (w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS)
    return frozenset(stem(w) for w in words if len(w) > 1 or w.isdigit())


def same_lesson(a: frozenset[str], b: frozenset[str], related: bool, config: DreamConfig) -> bool:
    """Whether two lessons' words (:func:`lesson_words`) say the same thing (module docstring)."""
    if not a or not b:
        return False
    if _numbers(a - b) and _numbers(b - a):
        return False  # "retry 3 times" and "retry 5 times" are two lessons
    shared = len(a & b)
    short, long = sorted((len(a), len(b)))
    if shared < min(MIN_SHARED, short) or shared < MIN_SHARE_OF_LONGER * long:
        return False
    need = config.duplicate_overlap_related if related else config.duplicate_overlap
    return shared >= need * short


def _numbers(words: frozenset[str]) -> bool:
    return any(w.isdigit() for w in words)


@dataclass(frozen=True)
class _Node:
    """A distinct lesson of this cycle's episodes, or a lesson claim of an active page."""

    words: frozenset[str]
    context: frozenset[str]  # "c:<category>" and "t:<tool>": what makes two lessons related
    text: str
    page: Page | None = None


@dataclass
class Routing:
    """Groups after routing, and per home topic the pages its plan should merge."""

    groups: list[Group]
    merges: dict[str, tuple[Page, ...]] = field(default_factory=dict)
    moved: int = 0


def _context(category: str | None, tools: Iterable[str]) -> frozenset[str]:
    out = {f"t:{t.strip().lower()}" for t in tools if t.strip()}
    if category and category.strip() and category.strip().lower() != "general":
        out.add(f"c:{category.strip().lower()}")
    return frozenset(out)


def _page_context(page: Page) -> frozenset[str]:
    parts = page.topic_key.split("|")
    tools = parts[1].split("+") if len(parts) > 1 and parts[1] != "-" else []
    return _context(parts[0], tools)


def _is_lesson(claim: Claim) -> bool:
    """A stated lesson: by its role, or, for a claim written before roles, by its wording."""
    if claim.role is not None:
        return claim.role in (ClaimRole.LESSON, ClaimRole.WARNING)
    return not _NOT_LESSONS.match(claim.text)


def _anchors(pages: Sequence[Page]) -> list[_Node]:
    nodes = []
    for page in pages:
        context = _page_context(page)
        for claim in page.revision.claims:
            if _is_lesson(claim) and (words := lesson_words(claim.text)):
                nodes.append(_Node(words, context, claim.text, page))
    return nodes


def _lessons(groups: Sequence[Group]) -> tuple[list[_Node], dict[str, int]]:
    """Distinct episode lessons (by words and context) and the node of each teaching episode."""
    index: dict[tuple[frozenset[str], frozenset[str]], int] = {}
    nodes: list[_Node] = []
    of_episode: dict[str, int] = {}
    for ep in sorted((e for g in groups for e in g.episodes), key=order_key):
        if not ep.lesson or is_template_lesson(ep.lesson):
            continue
        words = lesson_words(ep.lesson)
        if not words:
            continue
        key = (words, _context(ep.category, ep.tools))
        if key not in index:
            index[key] = len(nodes)
            nodes.append(_Node(words, key[1], ep.lesson))
        of_episode[ep.id] = index[key]
    return nodes, of_episode


class _Forest:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _link(nodes: Sequence[_Node], lessons: int, forest: _Forest, config: DreamConfig) -> None:
    """Union every episode lesson with the lessons and anchors it is the same lesson as."""
    df = Counter(w for n in nodes for w in n.words)
    postings: dict[str, list[int]] = defaultdict(list)
    for i, node in enumerate(nodes):
        for w in node.words:
            if df[w] <= COMMON_TOKEN:
                postings[w].append(i)
    for i in range(lessons):
        node = nodes[i]
        candidates = {j for w in node.words for j in postings.get(w, ()) if j != i}
        for j in sorted(candidates):
            if j < lessons and j < i:
                continue  # each lesson pair once
            other = nodes[j]
            related = bool(node.context & other.context)
            if same_lesson(node.words, other.words, related, config):
                forest.union(i, j)


def _link_vectors(
    nodes: Sequence[_Node], lessons: int, forest: _Forest, embedder: Embedder, cosine: float
) -> None:
    if not lessons or len(nodes) > EMBED_LIMIT:
        return
    import numpy as np

    vectors = embedder.embed([n.text for n in nodes])
    sims = vectors[:lessons] @ vectors.T
    rows, cols = np.nonzero(sims >= cosine)
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        if i != j:
            forest.union(i, j)


def _home_page(pages: Iterable[Page]) -> Page:
    return min(pages, key=lambda p: (-len(p.citations), p.created_at, p.id))


def _homes(
    nodes: Sequence[_Node], lessons: int, forest: _Forest, topic_of: Mapping[int, Counter[str]]
) -> tuple[dict[int, str], dict[str, tuple[Page, ...]]]:
    """The home topic of every lesson node, and the pages each home merges."""
    pages: dict[int, dict[str, Page]] = defaultdict(dict)
    for j in range(lessons, len(nodes)):
        page = nodes[j].page
        if page is not None:
            pages[forest.find(j)][page.id] = page
    counts: dict[int, Counter[str]] = defaultdict(Counter)
    for i in range(lessons):
        counts[forest.find(i)].update(topic_of.get(i, Counter()))
    home: dict[int, str] = {}
    merges: dict[str, tuple[Page, ...]] = {}
    for root, seen in counts.items():
        if root in pages:
            target = _home_page(pages[root].values())
            home[root] = target.topic_key
            others = tuple(p for p in pages[root].values() if p.id != target.id)
            if others:
                merges[target.topic_key] = tuple(
                    sorted({*merges.get(target.topic_key, ()), *others}, key=lambda p: p.id)
                )
        else:
            home[root] = min(seen, key=lambda t: (-seen[t], t))
    return {i: home[forest.find(i)] for i in range(lessons)}, merges


def _redirects(store: BrainStore, scope: Scope, groups: Sequence[Group]) -> dict[str, str]:
    """Topics whose page was merged into another active page follow it."""
    own = store.pages_by_topic(scope, [g.topic_key for g in groups])
    out: dict[str, str] = {}
    for topic, page in own.items():
        target = page.revision.superseded_by
        if page.status is PageStatus.SUPERSEDED and target and target.startswith("pg_"):
            try:
                home = store.page(target)
            except Exception:  # a superseded_by that names no page: leave the topic alone
                continue
            if home.scope == scope and home.status is PageStatus.ACTIVE:
                out[topic] = home.topic_key
    return out


def route(
    store: BrainStore,
    scope: Scope,
    groups: Sequence[Group],
    config: DreamConfig,
    embedder: Embedder | None = None,
) -> Routing:
    """Move each lesson's episodes to the lesson's home page (see the module docstring)."""
    redirect = _redirects(store, scope, groups)
    nodes, of_episode = _lessons(groups)
    if not nodes and not redirect:
        return Routing(list(groups))
    lessons = len(nodes)
    nodes += _anchors(store.pages(scope, [str(PageStatus.ACTIVE)])) if nodes else []
    forest = _Forest(len(nodes))
    _link(nodes, lessons, forest, config)
    if embedder is not None:
        _link_vectors(nodes, lessons, forest, embedder, config.duplicate_cosine)
    topic_of: dict[int, Counter[str]] = defaultdict(Counter)
    for g in groups:
        for ep in g.episodes:
            if ep.id in of_episode:
                topic_of[of_episode[ep.id]][redirect.get(g.topic_key, g.topic_key)] += 1
    home, merges = _homes(nodes, lessons, forest, topic_of)
    for target, sources in merges.items():
        redirect.update({p.topic_key: target for p in sources})
    return _regroup(groups, redirect, {e: home[n] for e, n in of_episode.items()}, merges)


def _regroup(
    groups: Sequence[Group],
    redirect: Mapping[str, str],
    home_of: Mapping[str, str],
    merges: dict[str, tuple[Page, ...]],
) -> Routing:
    members: dict[str, list[Episode]] = defaultdict(list)
    moved = 0
    for g in groups:
        topic = redirect.get(g.topic_key, g.topic_key)
        for ep in g.episodes:
            target = redirect.get(home_of.get(ep.id, topic), home_of.get(ep.id, topic))
            moved += target != g.topic_key
            members[target].append(ep)
    out = [
        Group(topic_key=t, episodes=tuple(sorted(members[t], key=order_key)))
        for t in sorted(members)
    ]
    live = {g.topic_key for g in out}
    return Routing(out, {t: m for t, m in merges.items() if t in live}, moved)
