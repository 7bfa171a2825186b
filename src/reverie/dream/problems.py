"""Group episodes by the problem they are about, and send each to that problem's page.

A page is one recurring problem or piece of knowledge, never "everything about a tool". So an
episode is represented by what it is *about*: its situation, its error (the telling line and
its short class, :func:`~reverie.dream.cluster.error_class`), its lesson, and, weighted less,
its action, tools and category. Two paths share one algorithm:

* **Lexical** (no embedder): a tf-idf vector of stemmed content words per field, weighted by
  field (:data:`FIELD_WEIGHTS`), cosine similarity.
* **Meaning** (an embedder): the embedding of :func:`problem_text`, cosine similarity.

The algorithm is *nearest leader*: the scope's active pages come first, each a leader whose
vector is its own text (title and claims); then the distinct problem signatures of the episodes,
most frequent first (ties: the signature text). Each joins the most similar leader at or above
the threshold (``DreamConfig.problem_similarity`` or ``problem_similarity_lexical``), or else
becomes a leader itself. A leader's vector is the running sum of its members, so a problem's
centre moves with its evidence. Episodes that join a page's leader form that page's group (its
``topic_key``); every other leader is a new problem, whose topic key is
``category|tools|terms~hash``: the category and tools of its founding signature, its three
strongest terms (a kind of request: the first :data:`TASK_KEY_TERMS` words of its request, by
which runs of that kind find its page), and a hash of that signature.

Invariants:

* **Order-independent.** Input is reduced to distinct signatures and processed in a canonical
  order, pages in id order: the same episodes and pages give the same groups, whatever order
  they come in.
* **Stable ids.** A page's topic key (so its id) never changes; a new problem's key depends only
  on its founding signature.
* **Bounded cost.** Lexical candidates come from an inverted index over each leader's strongest
  terms, so the work grows with episodes × candidates, not episodes × leaders. Identical
  signatures are grouped before anything is compared.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import chain, pairwise, repeat
from operator import add, mul, truediv
from typing import TYPE_CHECKING

from reverie.config import DreamConfig
from reverie.dream.boilerplate import Boilerplate, is_template_lesson
from reverie.dream.cluster import (
    STOP_WORDS,
    Group,
    cluster,
    error_class,
    order_key,
    telling_line,
)
from reverie.dream.facts import PREFIX as FACT_PREFIX
from reverie.dream.lessons import FAILING as _FAILING
from reverie.dream.tasks import TASK_CATEGORY, is_task
from reverie.hashing import content_hash
from reverie.models import Episode, Outcome, Page, PageStatus
from reverie.recall.query import stem
from reverie.text.calls import calls_of
from reverie.text.turns import CONVERSATION, is_turn

if TYPE_CHECKING:
    import numpy as np

    from reverie.embed import Embedder

__all__ = [
    "FIELD_WEIGHTS",
    "Grouping",
    "group_by_problem",
    "is_knowledge",
    "is_problem_page",
    "page_text",
    "problem_features",
    "problem_groups",
    "problem_text",
]

FIELD_WEIGHTS = {"situation": 1.0, "error": 1.0, "lesson": 1.0, "action": 0.5, "context": 0.4}
"""How much each part of an episode says about its problem (lexical path)."""
INDEX_TERMS = 8
"""A leader is found through this many of its strongest terms, a signature through as many."""
QUERY_TERMS = 5
"""A signature looks for leaders through this many of its strongest terms..."""
CANDIDATES = 8
"""...and is compared with at most this many of them, those sharing most of those terms."""
TASK_KEY_TERMS = 12
"""A kind of request keeps this many of its founding request's words in its key, to be found
by (:func:`_task_page_features`)."""
KEY_TERM_CHARS = 24
"""...each cut to this many characters, so the key stays short."""
EMBED_TEXT = 600
_WORD = re.compile(r"[^\W_]+")
_MASKS = (
    re.compile(r"\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b", re.I),
    re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{10,}\b", re.I),
)

Features = dict[str, float]


@lru_cache(maxsize=1 << 14)
def _error_line(error: str | None) -> str:
    """The telling line of an error, with ids and hashes masked (they tell nothing about the
    problem)."""
    line = telling_line(error)
    for mask in _MASKS:
        line = mask.sub(" ", line)
    return line[:300]


def problem_text(ep: Episode) -> str:
    """What an episode is about, as one text (the embedding path embeds this). A whole run
    (:func:`~reverie.dream.tasks.is_task`) is about its request alone: runs of one kind of
    request are one problem whatever each did, so successes and failures meet on one page."""
    if is_task(ep):
        return ep.situation.strip()[:EMBED_TEXT]
    parts = [ep.situation.strip()]
    if ep.error:
        parts.append(f"Error: {_error_line(ep.error)}")
    if ep.lesson and not is_template_lesson(ep.lesson):
        parts.append(f"Lesson: {ep.lesson.strip()}")
    if ep.action.strip():
        parts.append(f"Action: {ep.action.strip()}")
    return "\n".join(p for p in parts if p)[:EMBED_TEXT]


@lru_cache(maxsize=1 << 15)
def _stems(text: str) -> tuple[str, ...]:
    words = _WORD.findall(text.lower())
    return tuple(stem(w) for w in words if w not in STOP_WORDS and len(w) > 1 and not w.isdigit())


def _context_terms(ep: Episode) -> list[str]:
    terms = [f"tool:{t.strip().lower()}" for t in ep.tools if t.strip()]
    if ep.category and ep.category.strip():
        terms.append(f"cat:{ep.category.strip().lower()}")
    return terms


def problem_features(ep: Episode) -> Features:
    """Term weights of an episode's problem (before idf): field weight × occurrences."""
    out: defaultdict[str, float] = defaultdict(float)
    if is_task(ep):
        for term in _stems(ep.situation):
            out[term] += FIELD_WEIGHTS["situation"]
        return dict(out)
    fields = (
        ("situation", ep.situation),
        ("error", _error_line(ep.error)),
        ("lesson", ep.lesson if ep.lesson and not is_template_lesson(ep.lesson) else ""),
        ("action", ep.action),
    )
    for name, text in fields:
        for term in _stems(text or ""):
            out[term] += FIELD_WEIGHTS[name]
    if klass := error_class(ep.error):
        out[f"err:{klass.lower()}"] += FIELD_WEIGHTS["error"] * 2
    for term in _context_terms(ep):
        out[term] += FIELD_WEIGHTS["context"]
    return dict(out)


def page_text(page: Page) -> str:
    """What a page is about: its title and claim texts (the leader of its problem)."""
    return "\n".join([page.title, *(c.text for c in page.revision.claims)])[: EMBED_TEXT * 4]


def _page_features(page: Page) -> Features:
    if is_task_page(page):
        return _task_page_features(page)
    out: defaultdict[str, float] = defaultdict(float)
    for term in _stems(page_text(page)):
        out[term] += 1.0
    for claim in page.revision.claims:
        for klass in re.findall(r"fails with ([^:(]+?)[:(]", claim.text):
            out[f"err:{klass.strip().lower()}"] += 1.0
    parts = page.topic_key.split("|")
    if len(parts) >= 2:
        for tool in parts[1].split("+"):
            if tool != "-":
                out[f"tool:{tool}"] += FIELD_WEIGHTS["context"]
        if parts[0] != "general":
            out[f"cat:{parts[0]}"] += FIELD_WEIGHTS["context"]
    return dict(out)


def _task_page_features(page: Page) -> Features:
    """A kind of request's terms, as its runs' requests are compared: its title's words and
    the words of the request that founded it (its topic key's terms). Its claims name tools
    and tallies, which no request says, so they would only dilute it."""
    out: defaultdict[str, float] = defaultdict(float)
    parts = page.topic_key.split("|")
    terms = parts[2].split("~", 1)[0].split("+") if len(parts) >= 3 else []
    for term in [*_stems(page.title), *(t for t in terms if t)]:
        out[term] += 1.0
    return dict(out)


@dataclass
class _Leader:
    """A problem being gathered: its page (if known), or the signature that founded it, and
    the signatures that joined it. Its vector is kept by the path that gathers it."""

    page: Page | None = None
    founder: str = ""
    members: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Gathered:
    """The leaders of one grouping pass, and the pairs of page leaders whose centres met."""

    leaders: list[_Leader]
    converged: list[tuple[int, int]]


@dataclass(frozen=True)
class _Signatures:
    """The distinct problem signatures of the input, in canonical order, and their episodes;
    ``ordered`` is every episode in store order and ``ordered_keys`` the signature of each."""

    keys: list[str]
    episodes: dict[str, list[Episode]]
    sample: dict[str, Episode]
    ordered: list[Episode]
    ordered_keys: list[str]


def _signatures(episodes: Sequence[Episode]) -> _Signatures:
    """Episodes with the same problem fields share one signature; its text is made once. Each
    signature's episodes are gathered from the input in store order, so they need no sort."""
    ordered = list(episodes) if _in_store_order(episodes) else sorted(episodes, key=order_key)
    sig_of: dict[tuple[object, ...], str] = {}
    by_sig: defaultdict[str, list[Episode]] = defaultdict(list)
    ordered_keys: list[str] = []
    for ep in ordered:
        # The five fixed fields first, then the tools: one flat tuple names the field set.
        fields = (ep.situation, ep.error, ep.lesson, ep.action, ep.category, *ep.tools)
        sig = sig_of.get(fields)
        if sig is None:
            sig = sig_of[fields] = _signature(ep)
        by_sig[sig].append(ep)
        ordered_keys.append(sig)
    keys = sorted(by_sig, key=lambda k: (-len(by_sig[k]), k))
    return _Signatures(keys, dict(by_sig), {k: by_sig[k][0] for k in keys}, ordered, ordered_keys)


def _in_store_order(episodes: Sequence[Episode]) -> bool:
    """Whether ``episodes`` come in strictly increasing ``seq`` (as a store scans them): then
    they are already sorted by :func:`~reverie.dream.cluster.order_key`."""
    seqs = [ep.seq for ep in episodes]
    return all(a is not None and b is not None and a < b for a, b in pairwise(seqs))


def _signature(ep: Episode) -> str:
    return problem_text(ep) + "\x1f" + " ".join(sorted(_context_terms(ep)))


def group_by_problem(
    episodes: Sequence[Episode],
    pages: Sequence[Page],
    *,
    embedder: Embedder | None = None,
    threshold: float = 0.6,
    lexical_threshold: float = 0.3,
) -> list[Group]:
    """Episodes grouped by problem (module docstring); groups sorted by topic key. A run's turns
    go where its task episode goes, when it is among them (:func:`_run_parts`)."""
    rest, parts = _run_parts(episodes)
    return _with_parts(_grouping(rest, pages, embedder, (threshold, lexical_threshold))[0], parts)


def _grouping(
    episodes: Sequence[Episode],
    pages: Sequence[Page],
    embedder: Embedder | None,
    thresholds: tuple[float, float],
    merge_thresholds: tuple[float, float] | None = None,
) -> tuple[list[Group], list[tuple[Page, Page]]]:
    """The groups, and the pairs of pages whose centres met (only when ``merge_thresholds``,
    dense then lexical, are given)."""
    if not episodes:
        return [], []
    sigs = _signatures(episodes)
    known = sorted(pages, key=lambda p: p.id)
    merge = merge_thresholds or (math.inf, math.inf)
    if embedder is None:
        gathered = _lexical_leaders(sigs, known, thresholds[1], merge[1])
    else:
        gathered = _dense_leaders(sigs, known, embedder, thresholds[0], merge[0])
    pairs = [(known[i], known[j]) for i, j in gathered.converged]
    return _groups(gathered.leaders, sigs), pairs


def _groups(leaders: Sequence[_Leader], sigs: _Signatures) -> list[Group]:
    """Each leader's episodes under its topic key; walking the input in store order keeps every
    group in store order."""
    key_of: dict[str, str] = {}
    for leader in leaders:
        if leader.members:
            key = leader.page.topic_key if leader.page else _new_topic_key(leader, sigs)
            key_of.update(zip(leader.members, repeat(key)))
    out: dict[str, list[Episode]] = defaultdict(list)
    for ep, key in _answered_in_session(sigs, key_of):
        out[key].append(ep)
    return [Group(topic_key=k, episodes=tuple(out[k])) for k in sorted(out)]


def _answered_in_session(
    sigs: _Signatures, key_of: Mapping[str, str]
) -> Iterator[tuple[Episode, str]]:
    """Each episode with its problem's key, in store order. A tool call that succeeds straight
    after a failed call of the same tool in its session is that failure's answer, so it joins
    the failure's problem even where its own words say less (``deploy {"service": "api",
    "timeout": "10m"}`` after the ``deploy`` that timed out): the fix and what it fixed belong
    on one page. Only structured calls (:func:`~reverie.text.calls.calls_of`) are followed:
    their arguments, not their words, tell a fix from a retry."""
    last: dict[str, tuple[str, str, bool]] = {}  # session → (tool, key, failed)
    for sig, ep in zip(sigs.ordered_keys, sigs.ordered, strict=True):
        key = key_of[sig]
        if ep.session_id is not None and (calls := calls_of(ep)):
            tool, before = calls[0].tool, last.get(ep.session_id)
            if ep.outcome is Outcome.SUCCESS and before and before[2] and before[0] == tool:
                key = before[1]
            last[ep.session_id] = (tool, key, ep.outcome in _FAILING)
        yield ep, key


def _new_topic_key(leader: _Leader, sigs: _Signatures) -> str:
    ep = sigs.sample[leader.founder]
    category = " ".join((ep.category or "general").lower().split()).replace("|", "/")
    tools = "+".join(
        sorted({t.strip().lower().replace("|", "/").replace("+", "/") for t in ep.tools} - {""})
    )
    terms = "+".join(_founding_terms(ep))
    return f"{category or 'general'}|{tools or '-'}|{terms}~{content_hash(leader.founder)[7:15]}"


def _founding_terms(ep: Episode) -> list[str]:
    """The terms a new problem's key keeps: its three strongest, or for a kind of request the
    first :data:`TASK_KEY_TERMS` words of the request, which its page is found by
    (:func:`_task_page_features`)."""
    if is_task(ep):
        words = dict.fromkeys(t[:KEY_TERM_CHARS] for t in _stems(ep.situation))
        return list(words)[:TASK_KEY_TERMS]
    return _top_terms(problem_features(ep), 3)


def _top_terms(features: Features, k: int) -> list[str]:
    words = [(w, t) for t, w in features.items() if ":" not in t]
    return [t for _w, t in sorted(words, key=lambda wt: (-wt[0], wt[1]))[:k]]


# --- lexical path ------------------------------------------------------------------------------


def _idf(features: Iterable[Features], page_features: Sequence[Features]) -> dict[str, float]:
    df: Counter[str] = Counter()
    docs = 0
    for feats in features:
        df.update(feats.keys())
        docs += 1
    for feats in page_features:
        df.update(feats.keys())
        docs += 1
    return {t: math.log((docs + 1) / (n + 1)) + 1.0 for t, n in df.items()}


def _weighted(features: Mapping[str, float], idf: Mapping[str, float]) -> Features:
    values = list(map(mul, features.values(), map(idf.get, features, repeat(1.0))))
    norm = math.sqrt(sum(map(mul, values, values))) or 1.0
    return dict(zip(features, map(truediv, values, repeat(norm)), strict=True))


def _strongest(vec: Mapping[str, float], k: int = INDEX_TERMS) -> list[str]:
    """The ``k`` heaviest terms (ties: alphabetical): a stable sort by weight, descending, of
    the terms in alphabetical order."""
    return sorted(sorted(vec), key=vec.__getitem__, reverse=True)[:k]


def _cosine(a: Mapping[str, float], b: Mapping[str, float], norm_b: float) -> float:
    if len(a) > len(b):
        a, b = b, a
    dot: float = sum(map(mul, a.values(), map(b.get, a.keys(), repeat(0.0))))
    return dot / (norm_b or 1.0)


def _lexical_leaders(
    sigs: _Signatures, pages: Sequence[Page], threshold: float, merge_threshold: float = math.inf
) -> _Gathered:
    page_feats = [_page_features(p) for p in pages]
    # A signature's features are made again where it is placed rather than kept from the idf
    # count: a large cycle's signatures would hold a dict each for the whole pass.
    idf = _idf((problem_features(sigs.sample[key]) for key in sigs.keys), page_feats)
    leaders = [_Leader(page=p) for p in pages]
    sums = [_weighted(f, idf) for f in page_feats]
    norms = [1.0] * len(leaders)
    index: dict[str, list[int]] = defaultdict(list)
    for i, vec in enumerate(sums):
        for term in _strongest(vec):
            index[term].append(i)
    for key in sigs.keys:
        vec = _weighted(problem_features(sigs.sample[key]), idf)
        terms = _strongest(vec)  # its first QUERY_TERMS are the strongest QUERY_TERMS
        best, best_sim = -1, threshold
        for i in _candidates(terms[:QUERY_TERMS], index):
            sim = _cosine(vec, sums[i], norms[i])
            if sim > best_sim or (sim == best_sim and best < 0):
                best, best_sim = i, sim
        if best < 0:
            best, best_sim = len(leaders), 0.0
            leaders.append(_Leader(founder=key))
            sums.append({})
            norms.append(0.0)
            for term in terms:
                index[term].append(best)
        weight = _absorb(sums[best], vec, len(sigs.episodes[key]))
        leaders[best].members.append(key)
        # |s + w v|^2 = |s|^2 + 2 w (s . v) + w^2, with s . v = cosine * |s| and |v| = 1
        dot = best_sim * norms[best]
        norms[best] = math.sqrt(norms[best] ** 2 + 2 * weight * dot + weight * weight)
    converged = _lexical_converged(leaders, sums, norms, index, merge_threshold)
    return _Gathered(leaders, converged)


def _lexical_converged(
    leaders: Sequence[_Leader],
    sums: Sequence[Features],
    norms: Sequence[float],
    index: Mapping[str, list[int]],
    threshold: float,
) -> list[tuple[int, int]]:
    """Pairs of page leaders, one of them joined this pass, whose centres are at least
    ``threshold`` similar (indexes into the pages, smaller first)."""
    if math.isinf(threshold):
        return []
    pairs: set[tuple[int, int]] = set()
    for i, leader in enumerate(leaders):
        if leader.page is None or not leader.members:
            continue
        for j in _candidates(_strongest(sums[i], QUERY_TERMS), index):
            if j == i or leaders[j].page is None:
                continue
            sim = _cosine(sums[i], sums[j], norms[j]) / (norms[i] or 1.0)
            if sim >= threshold:
                pairs.add((min(i, j), max(i, j)))
    return sorted(pairs)


def _candidates(terms: Sequence[str], index: Mapping[str, list[int]]) -> list[int]:
    """The leaders sharing most of a signature's strongest ``terms`` (ties: the older leader)."""
    shared = Counter(chain.from_iterable(map(index.get, terms, repeat(()))))
    return sorted(sorted(shared), key=shared.__getitem__, reverse=True)[:CANDIDATES]


def _absorb(summed: Features, vec: Features, count: int) -> float:
    """Add a signature to a leader's running sum, weighted by how many episodes share it, with
    diminishing returns so one flood of copies does not own the centre; returns the weight."""
    weight = 1.0 + math.log(count)
    grown = map(add, map(summed.get, vec, repeat(0.0)), map(mul, repeat(weight), vec.values()))
    summed.update(zip(vec, grown, strict=True))
    return weight


# --- meaning path ------------------------------------------------------------------------------


def _dense_leaders(
    sigs: _Signatures,
    pages: Sequence[Page],
    embedder: Embedder,
    threshold: float,
    merge_threshold: float = math.inf,
) -> _Gathered:
    import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

    texts = [page_text(p) for p in pages] + [problem_text(sigs.sample[k]) for k in sigs.keys]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    sums = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
    sums[: len(pages)] = vectors[: len(pages)]
    leaders = [_Leader(page=p) for p in pages]
    count = len(pages)
    for j, key in enumerate(sigs.keys):
        vec = vectors[len(pages) + j]
        best = -1
        if count:
            centres = sums[:count]
            sims = centres @ vec / np.maximum(np.linalg.norm(centres, axis=1), 1e-9)
            top = int(np.argmax(sims))
            best = top if sims[top] >= threshold else -1
        if best < 0:
            best = count
            leaders.append(_Leader(founder=key))
            count += 1
        sums[best] += (1.0 + math.log(len(sigs.episodes[key]))) * vec
        leaders[best].members.append(key)
    return _Gathered(leaders, _dense_converged(leaders, sums[: len(pages)], merge_threshold))


def _dense_converged(
    leaders: Sequence[_Leader], centres: np.ndarray, threshold: float
) -> list[tuple[int, int]]:
    """Pairs of page leaders, one of them joined this pass, whose centres are at least
    ``threshold`` similar by cosine (indexes into the pages, smaller first)."""
    import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

    touched = [i for i in range(len(centres)) if leaders[i].members]
    if math.isinf(threshold) or not touched:
        return []
    unit = centres / np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-9)
    sims = unit[touched] @ unit.T
    pairs = set()
    for row, j in zip(*np.nonzero(sims >= threshold), strict=True):
        i = touched[int(row)]
        if i != int(j):
            pairs.add((min(i, int(j)), max(i, int(j))))
    return sorted(pairs)


# --- which groups are knowledge ----------------------------------------------------------------


@dataclass(frozen=True)
class Grouping:
    """A cycle's groups, and the episodes it scanned that are not knowledge (``passed``): the
    checkpoint moves past them, no page cites them, nothing marks them."""

    groups: list[Group]
    passed: list[Episode]
    converged: list[tuple[Page, Page]] = field(default_factory=list)
    """Pairs of active pages whose problems' centres met this cycle: they are one problem now,
    and the cycle merges them (:func:`reverie.dream.dedupe.fold_converged`)."""


def is_knowledge(group: Group, has_page: bool, importance_threshold: int, min_pattern: int) -> bool:
    """Whether a group teaches something: it revises a known problem's page, someone stated a
    lesson or marked it important, or it failed repeatedly or failed and then was fixed. A run of
    routine successes with no lesson, no error and no failure is not knowledge."""
    if has_page:
        return True
    eps = group.episodes
    if any(ep.lesson and not is_template_lesson(ep.lesson) for ep in eps):
        return True
    if any((ep.importance or 0) >= importance_threshold for ep in eps):
        return True
    failing = [ep for ep in eps if ep.outcome in _FAILING or ep.error]
    if len(failing) >= 2:
        return True
    first = min((ep.created_at for ep in failing), default=None)
    fixed = first is not None and any(
        ep.outcome is Outcome.SUCCESS and ep.created_at >= first for ep in eps
    )
    return fixed or (bool(failing) and len(eps) >= min_pattern)


def problem_groups(
    episodes: Sequence[Episode],
    pages: Sequence[Page],
    *,
    embedder: Embedder | None,
    config: DreamConfig,
    boilerplate: Boilerplate | None = None,
) -> Grouping:
    """Group a cycle's episodes: conversation turns (who speaks, no work done) by speaker key
    as dialogue, whole runs by their request against the pages of kinds of request
    (``DreamConfig.task_similarity``),
    each with its turns, the rest by problem against the scope's other active pages; then set
    aside what is not knowledge. A page that ``boilerplate`` founded (its title or lessons are
    stop phrases) does not make the routine episodes joining it knowledge."""
    rest, parts = _run_parts(episodes)  # a run's turns are detail of its task, not dialogue
    talk = [ep for ep in rest if is_turn(ep)]
    work = [ep for ep in rest if not is_turn(ep)]
    runs = [ep for ep in work if is_task(ep)]
    work = [ep for ep in work if not is_task(ep)]
    active = [p for p in pages if p.status is PageStatus.ACTIVE and is_problem_page(p)]
    leaders = [p for p in active if not is_task_page(p)]
    groups, converged = _grouping(
        work,
        leaders,
        embedder,
        (config.problem_similarity, config.problem_similarity_lexical),
        (config.problem_merge_similarity, config.problem_merge_similarity_lexical),
    )
    task_pages = [p for p in active if is_task_page(p)]
    thresholds = (config.task_similarity, config.task_similarity_lexical)
    groups += _with_parts(_grouping(runs, task_pages, embedder, thresholds)[0], parts)
    leaders += task_pages
    known = {p.topic_key for p in leaders if boilerplate is None or not boilerplate.holds(p)}
    kept: list[Group] = []
    passed: list[Group] = []
    for g in groups:
        knowledge = is_knowledge(
            g, g.topic_key in known, config.importance_threshold, config.min_pattern
        )
        (kept if knowledge else passed).append(g)
    kept += [_dialogue(g) for g in cluster(talk, embedder, config.similarity_threshold)]
    kept.sort(key=lambda g: g.topic_key)
    return Grouping(kept, [ep for g in passed for ep in g.episodes], converged)


def _run_parts(work: Sequence[Episode]) -> tuple[list[Episode], dict[str, list[Episode]]]:
    """The episodes to group, and the turns of whole runs present among them, by run: a turn
    that names its run (``metadata["run"]``) is detail of that run's task episode and goes
    where it goes, so a run is one problem's evidence, never a page of its own."""
    runs = {ep.id for ep in work if is_task(ep)}
    parts: dict[str, list[Episode]] = defaultdict(list)
    rest = []
    for ep in work:
        run = ep.metadata.get("run") if isinstance(ep.metadata, dict) else None
        if isinstance(run, str) and run in runs:
            parts[run].append(ep)
        else:
            rest.append(ep)
    return rest, dict(parts)


def _with_parts(groups: Sequence[Group], parts: Mapping[str, list[Episode]]) -> list[Group]:
    if not parts:
        return list(groups)
    out = []
    for g in groups:
        extra = [p for ep in g.episodes for p in parts.get(ep.id, ())]
        eps = tuple(sorted((*g.episodes, *extra), key=order_key)) if extra else g.episodes
        out.append(Group(topic_key=g.topic_key, episodes=eps))
    return out


def is_task_page(page: Page) -> bool:
    """Whether a page is about a kind of request, founded by whole runs (task episodes)."""
    return page.topic_key.split("|", 1)[0] == TASK_CATEGORY


def _dialogue(group: Group) -> Group:
    """A group of turns, its topic key headed ``conversation`` whatever their category."""
    if group.topic_key.split("|", 1)[0] == CONVERSATION:
        return group
    return replace(group, topic_key=f"{CONVERSATION}|{group.topic_key}"[:512])


def is_problem_page(page: Page) -> bool:
    """Whether a page is about a problem (not a fact slot or a conversation)."""
    head = page.topic_key.split("|", 1)[0]
    return head not in (FACT_PREFIX, CONVERSATION)
