"""Pattern keys, error classes and content words; and the grouping of conversation turns.

Work episodes are grouped by the problem they are about (:mod:`reverie.dream.problems`); this
module holds the text utilities that grouping and the distillers share, and :func:`cluster`, the
grouping that conversation turns (category ``conversation``) still use. Two paths, both pure and
deterministic:

* **Lexical** (no embedder): episodes with the same :func:`pattern_key` form a group.
* **Embedding**: episodes whose texts have cosine similarity ≥ ``threshold`` are linked, and each
  connected component of that graph is a group. Components are a property of the graph, not of
  the order edges are found in; the input is also sorted canonically before embedding, so even
  floating-point rounding cannot depend on the caller's order.

Either way a group's ``topic_key`` is its most common pattern key (ties: the lexicographically
smallest), groups with the same topic key are merged (a topic key names exactly one page), and
the output is ordered by topic key. Invariant: the same episodes give the same groups, whatever
their order.

The pattern key is ``category|tools[|terms]``:

* ``category`` — the episode's category, lowercased, or ``general``;
* ``tools`` — its tools, lowercased, unique, sorted, joined by ``+``, or ``-`` for none;
* ``terms`` — only when there is neither category nor tools: the top two salient terms of the
  situation, sorted, joined by ``+`` (omitted when the situation has none).

The outcome is deliberately not part of the key: the failures of a task and the fix that finally
worked belong on one page, where the tally, the lessons and "what worked" sit side by side.

``|`` and ``+`` inside a category or tool name are replaced by ``/`` so the key stays parseable.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from reverie.models import Episode

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from reverie.embed import Embedder

__all__ = [
    "STOP_WORDS",
    "Group",
    "cluster",
    "content_words",
    "error_class",
    "order_key",
    "pattern_key",
    "salient_terms",
    "telling_line",
]

#: Above this many episodes, pairwise similarity is computed per category bucket only.
MAX_PAIRWISE = 20_000
_BLOCK = 1024

_STOP_TEXT = """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each else etc even ever every few for from further get gets
    got had hadn't has hasn't have haven't having he her here hers herself him himself his how i
    if in into is isn't it it's its itself just let like made make many may me might more most
    much must my myself need needs no nor not now of off on once only or other our ours
    ourselves out over own per same she should shouldn't so some such than that that's the their
    theirs them themselves then there these they this those through to too under until up upon
    us use used using very via was wasn't we were weren't what when where which while who whom
    why will with without won't would wouldn't yet you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")

# Tried in order, the first match wins: exit codes, HTTP statuses, exception names, phrases.
# Codes come before names because "HTTPError: 503 Server Error" says more as "HTTP 503".
_HTTP = (
    re.compile(r"\bHTTP(?:/\d(?:\.\d)?)?(?:\s+Error)?\s*[:#]?\s*([1-5]\d\d)\b", re.I),
    re.compile(r"\bstatus(?:[\s_]?code)?\s*[:=]?\s*([1-5]\d\d)\b", re.I),
    re.compile(
        r"\b([45]\d\d)\s*[:-]?\s*(?:Client Error|Server Error|Too Many Requests|Not Found|"
        r"Forbidden|Unauthorized|Bad Request|Bad Gateway|Service Unavailable|Gateway Time-?out|"
        r"Internal Server Error|Conflict|Payment Required|Request Timeout)\b",
        re.I,
    ),
)
_EXIT = re.compile(
    r"\bexit(?:ed)?(?:\s+with)?(?:\s+(?:code|status))?\s*[:=]?\s*(-?\d{1,3})\b", re.I
)
_EXCEPTION = re.compile(
    r"\b(?:[A-Za-z_]\w*\.)*([A-Z]\w*?(?:Error|Exception|Timeout|Refused|Interrupt|Exit|Fault|"
    r"Expired|Failure|Warning|Iteration))\b"
)
_PHRASES = (
    (re.compile(r"\btimed?[\s-]?out\b|\btimeout\b|\bdeadline exceeded\b", re.I), "TimeoutError"),
    (re.compile(r"\bconnection refused\b|\bECONNREFUSED\b", re.I), "ConnectionRefusedError"),
    (re.compile(r"\bconnection reset\b|\bECONNRESET\b", re.I), "ConnectionResetError"),
    (re.compile(r"\bpermission denied\b|\bEACCES\b", re.I), "PermissionError"),
    (re.compile(r"\bno such file or directory\b|\bENOENT\b", re.I), "FileNotFoundError"),
    (re.compile(r"\bout of memory\b|\bOOM(?:Killed)?\b", re.I), "MemoryError"),
    (re.compile(r"\brate[\s-]?limit(?:ed)?\b", re.I), "HTTP 429"),
    (re.compile(r"\bcommand not found\b", re.I), "exit 127"),
)
_TIMEOUT_NAMES = re.compile(r"time(?:d)?out|expired", re.I)


@lru_cache(maxsize=1 << 14)
def error_class(error: str | None) -> str | None:
    """A short, stable class for an error message, or ``None`` when there is no error.

    ``"requests.exceptions.ReadTimeout: ..."`` -> ``"TimeoutError"``;
    ``"HTTP Error 429: Too Many Requests"`` -> ``"HTTP 429"``; ``"exit code 137"`` ->
    ``"exit 137"``; ``"KeyError: 'x'"`` -> ``"KeyError"``. Text that names no class is ``"error"``.
    """
    if error is None or not error.strip():
        return None
    if found := _EXIT.search(error):
        return f"exit {int(found.group(1))}"
    for pattern in _HTTP:
        if found := pattern.search(error):
            return f"HTTP {found.group(1)}"
    if names := _EXCEPTION.findall(error):
        # A traceback ends with the exception that was raised; a one-line message starts with it.
        name: str = names[-1] if error.lstrip().startswith("Traceback") else names[0]
        return "TimeoutError" if _TIMEOUT_NAMES.search(name) else name
    for pattern, name in _PHRASES:
        if pattern.search(error):
            return name
    return "error"


def telling_line(error: str | None) -> str:
    """The line of an error message that names it: the last of a traceback, else the first."""
    lines = [line.strip() for line in (error or "").strip().splitlines() if line.strip()]
    if not lines:
        return ""
    return lines[-1] if lines[0].startswith("Traceback") else lines[0]


def content_words(text: str) -> list[str]:
    """Content words of ``text`` in order: lowercased, not stop words, ≥ 3 characters, not
    only digits."""
    return [
        w
        for w in _TOKEN.findall(text.lower())
        if len(w) >= 3 and not w.isdigit() and w not in STOP_WORDS
    ]


def salient_terms(text: str, k: int = 2) -> list[str]:
    """The ``k`` most frequent content words of ``text`` (ties: alphabetical)."""
    counts = Counter(content_words(text))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [word for word, _ in ranked[: max(k, 0)]]


def _clean_part(value: str) -> str:
    return " ".join(value.lower().split()).replace("|", "/").replace("+", "/")


def pattern_key(ep: Episode) -> str:
    """``category|tools[|terms]`` (see the module docstring), e.g. ``"deploy|kubectl"``."""
    category = _clean_part(ep.category or "")
    tools = sorted({_clean_part(t) for t in ep.tools} - {""})
    key = f"{category or 'general'}|{'+'.join(tools) or '-'}"
    if not category and not tools:
        terms = sorted(salient_terms(ep.situation, 2))
        if terms:
            key += "|" + "+".join(terms)
    return key


def order_key(ep: Episode) -> tuple[bool, int, datetime, str]:
    """Store order: by ``seq``; episodes without one (unit tests) after, by (created_at, id)."""
    return (ep.seq is None, ep.seq or 0, ep.created_at, ep.id)


@dataclass(frozen=True)
class Group:
    """Episodes that share one topic, in store order. ``topic_key`` names the page they feed."""

    topic_key: str
    episodes: tuple[Episode, ...]


def cluster(
    episodes: Sequence[Episode],
    embedder: Embedder | None = None,
    threshold: float = 0.72,
    *,
    max_pairwise: int = MAX_PAIRWISE,
) -> list[Group]:
    """Group ``episodes`` by topic; the same groups for any order of the input.

    Without ``embedder`` groups are pattern keys. With one, groups are connected components of
    "cosine ≥ ``threshold``", named by their most common pattern key. Above ``max_pairwise``
    episodes, similarity is only computed within a category (within a pattern key for a category
    still too large), which bounds time and memory.
    """
    ordered = sorted(episodes, key=order_key)
    keys = [pattern_key(ep) for ep in ordered]
    if embedder is None or len(ordered) < 2:
        return _groups(ordered, keys)
    parts = _partition(range(len(ordered)), keys, max_pairwise)
    components: list[list[int]] = []
    for part in parts:
        texts = [ordered[i].text for i in part]
        for comp in _components(embedder.embed(texts), threshold):
            components.append([part[j] for j in comp])
    named = [_dominant(keys[i] for i in comp) for comp in components]
    topic = [""] * len(ordered)
    for name, comp in zip(named, components, strict=True):
        for i in comp:
            topic[i] = name
    return _groups(ordered, topic)


def _partition(indices: Sequence[int], keys: Sequence[str], limit: int) -> list[list[int]]:
    """One part when small enough; else per category, and per full key for a huge category."""
    if len(indices) <= limit:
        return [list(indices)]
    by_category = _bucket_by(indices, lambda i: keys[i].split("|", 1)[0])
    parts: list[list[int]] = []
    for members in by_category:
        if len(members) <= limit:
            parts.append(members)
        else:
            parts.extend(_bucket_by(members, lambda i: keys[i]))
    return parts


def _bucket_by(indices: Iterable[int], key: Callable[[int], str]) -> list[list[int]]:
    buckets: dict[str, list[int]] = defaultdict(list)
    for i in indices:
        buckets[key(i)].append(i)
    return [buckets[k] for k in sorted(buckets)]


def _dominant(keys: Iterable[str]) -> str:
    counts = Counter(keys)
    return min(counts, key=lambda k: (-counts[k], k))


def _groups(ordered: Sequence[Episode], keys: Sequence[str]) -> list[Group]:
    """Episodes (already in store order) gathered under their key, groups sorted by key."""
    members: dict[str, list[Episode]] = defaultdict(list)
    for ep, key in zip(ordered, keys, strict=True):
        members[key].append(ep)
    return [Group(topic_key=k, episodes=tuple(members[k])) for k in sorted(members)]


def _components(vectors: NDArray[np.float32], threshold: float) -> list[list[int]]:
    """Connected components of "row cosine ≥ threshold", as sorted index lists.

    Rows are compared block by block (memory ``O(block × n)``); each block's edges are merged into
    a union-find forest kept as a numpy parent array, so dense graphs stay fast too.
    """
    import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

    n = len(vectors)
    parent = np.arange(n, dtype=np.int64)
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        sims = vectors[start:stop] @ vectors[start:].T
        rows, cols = np.nonzero(sims >= threshold)
        rows += start
        cols += start
        upper = cols > rows
        _union(parent, rows[upper], cols[upper])
    _flatten(parent)
    comps: dict[int, list[int]] = defaultdict(list)
    for i, root in enumerate(parent.tolist()):
        comps[root].append(i)
    return [comps[r] for r in sorted(comps)]


def _flatten(parent: NDArray[np.int64]) -> None:
    """Pointer jumping until every entry points at its root."""
    while True:
        grand = parent[parent]
        if (grand == parent).all():
            return
        parent[:] = grand


def _union(parent: NDArray[np.int64], u: NDArray[np.int64], v: NDArray[np.int64]) -> None:
    """Merge the trees of every edge ``(u[i], v[i])``; roots always point to a smaller index."""
    import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

    while u.size:
        _flatten(parent)
        ru, rv = parent[u], parent[v]
        apart = ru != rv
        if not apart.any():
            return
        u, v, ru, rv = u[apart], v[apart], ru[apart], rv[apart]
        np.minimum.at(parent, np.maximum(ru, rv), np.minimum(ru, rv))
