"""Duplicate pressure: one lesson, one page.

A problem's page is found by what its episodes are about, so the same lesson learnt in another
situation, category or tool could still land on a second page. Before the cycle scores and
distils its groups, :func:`route` moves every episode whose lesson is one the brain already
holds — or one that other episodes of this cycle teach under another topic — to that lesson's
**home**:

* **Lesson identity** (:func:`same_lesson`): the normalised words (lowercased, stop words out,
  light stemming) of two lessons; they are one lesson when they share at least
  :data:`MIN_SHARED` words and ``DreamConfig.duplicate_overlap`` of the shorter one's words, or
  ``duplicate_overlap_related`` when they were learnt in the same category or with a shared tool
  (the page side: its topic key); each naming a number the other lacks keeps them apart. With an
  embedder, a cosine of ``duplicate_cosine`` or more also makes them one.
* **Anchors** are the lesson-like claims of the scope's active problem pages (not tallies,
  errors, examples or "Worked:" lines; not fact pages, which their slot's run keeps). Lessons
  and anchors linked by identity form components; a component's home is its page holding the
  most evidence (ties: oldest, then id), else the topic where most of its episodes already
  are (ties: smallest key).
* When one component reaches several active pages, they already hold the same lesson twice: the
  home group is told to **merge** the others into its page (``Routing.merges``; a merge
  supersedes its sources, it never deletes), and every group of a merged page's topic goes
  home too, so no plan revises a page another plan supersedes.
* A group whose topic's page was merged away earlier follows it (``superseded_by``).
* Pages whose problems converged (:mod:`reverie.dream.problems`) join these merges
  (:func:`fold_converged`): the components are taken over both kinds of link, with the same
  home rule.

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
from reverie.dream.boilerplate import is_template_lesson
from reverie.dream.cluster import STOP_WORDS, Group, order_key
from reverie.models import TEACHING_ROLES, Claim, ClaimRole, Episode, Page, PageStatus, Scope
from reverie.recall.query import stem
from reverie.text.assertions import PREFIX as FACT_PREFIX

if TYPE_CHECKING:
    from reverie.embed import Embedder
    from reverie.store.base import BrainStore

__all__ = [
    "MIN_SHARED",
    "Routing",
    "fold_converged",
    "lesson_words",
    "route",
    "same_lesson",
    "teach_apart",
]

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
    homes: dict[str, Page] = field(default_factory=dict)
    """The page each key of ``merges`` names: the one that absorbs the others."""


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
    """The lesson-like claims of the problem pages. A fact page quotes the lessons of the
    episodes that stated its value, yet it belongs to its slot's run (:mod:`reverie.dream.facts`),
    which alone revises or supersedes it: it is never a home, nor merged into one."""
    nodes = []
    for page in pages:
        if page.topic_key.startswith(FACT_PREFIX + "|"):
            continue
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
    teaching = (e for g in groups for e in g.episodes if e.lesson)
    for ep in sorted(teaching, key=order_key):
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
    import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

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
) -> tuple[dict[int, str], dict[str, tuple[Page, ...]], dict[str, Page]]:
    """The home topic of every lesson node, the pages each home merges, and each home's page."""
    homes: dict[str, Page] = {}
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
                homes[target.topic_key] = target
        else:
            home[root] = min(seen, key=lambda t: (-seen[t], t))
    return {i: home[forest.find(i)] for i in range(lessons)}, merges, homes


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
    home, merges, homes = _homes(nodes, lessons, forest, topic_of)
    for target, sources in merges.items():
        redirect.update({p.topic_key: target for p in sources})
    routing = _regroup(groups, redirect, {e: home[n] for e, n in of_episode.items()}, merges)
    routing.homes = {t: p for t, p in homes.items() if t in routing.merges}
    return routing


def _teachings(page: Page) -> list[tuple[str, frozenset[str]]]:
    """What a page teaches: its lessons, warnings and fix, with their words."""
    out = []
    for claim in page.revision.claims:
        teaches = claim.role in TEACHING_ROLES if claim.role is not None else _is_lesson(claim)
        if teaches and (words := lesson_words(claim.text)):
            out.append((claim.text, words))
    return out


def teach_apart(a: Page, b: Page, config: DreamConfig, embedder: Embedder | None = None) -> bool:
    """Whether two pages each teach something and share no lesson: two problems, however alike
    their wording (a page that teaches nothing yet can join one that does)."""
    ta, tb = _teachings(a), _teachings(b)
    if not ta or not tb:
        return False
    if any(same_lesson(x, y, True, config) for _tx, x in ta for _ty, y in tb):
        return False
    if embedder is None:
        return True
    vectors = embedder.embed([t for t, _w in ta] + [t for t, _w in tb])
    sims = vectors[: len(ta)] @ vectors[len(ta) :].T
    return bool(sims.max() < config.duplicate_cosine)


def fold_converged(routing: Routing, pairs: Sequence[tuple[Page, Page]]) -> Routing:
    """Add the merges of pages whose problems converged (``pairs``) to ``routing``'s.

    Pages linked by either kind of merge form one component; its home is its page holding the
    most evidence (:func:`_home_page`), which absorbs every other page of the component, and
    the groups of their topics go home, as for a shared lesson."""
    if not pairs:
        return routing
    linked = [(routing.homes[t], s) for t, sources in routing.merges.items() for s in sources]
    linked += list(pairs)
    pages = {p.id: p for pair in linked for p in pair}
    ids = sorted(pages)
    forest = _Forest(len(ids))
    position = {pid: i for i, pid in enumerate(ids)}
    for a, b in linked:
        forest.union(position[a.id], position[b.id])
    components: dict[int, list[Page]] = defaultdict(list)
    for pid in ids:
        components[forest.find(position[pid])].append(pages[pid])
    merges: dict[str, tuple[Page, ...]] = {}
    homes: dict[str, Page] = {}
    redirect: dict[str, str] = {}
    for members in components.values():
        target = _home_page(members)
        merges[target.topic_key] = tuple(p for p in members if p.id != target.id)
        homes[target.topic_key] = target
        redirect.update({p.topic_key: target.topic_key for p in merges[target.topic_key]})
    folded = _regroup(routing.groups, redirect, {}, merges)
    folded.moved += routing.moved
    folded.homes = {t: p for t, p in homes.items() if t in folded.merges}
    return folded


def _regroup(
    groups: Sequence[Group],
    redirect: Mapping[str, str],
    home_of: Mapping[str, str],
    merges: dict[str, tuple[Page, ...]],
) -> Routing:
    members: dict[str, list[Episode]] = defaultdict(list)
    sources: dict[str, set[int]] = defaultdict(set)
    moved = 0
    for n, g in enumerate(groups):
        topic = redirect.get(g.topic_key, g.topic_key)
        for ep in g.episodes:
            home = home_of.get(ep.id, topic)
            target = redirect.get(home, home)
            moved += target != g.topic_key
            members[target].append(ep)
            sources[target].add(n)
    # A target fed by one group holds part of it, so in its store order already.
    out = [
        Group(topic_key=t, episodes=tuple(_store_order(members[t], len(sources[t]) > 1)))
        for t in sorted(members)
    ]
    live = {g.topic_key for g in out}
    return Routing(out, {t: m for t, m in merges.items() if t in live}, moved)


def _store_order(episodes: list[Episode], mixed: bool) -> list[Episode]:
    return sorted(episodes, key=order_key) if mixed else episodes
