"""Boilerplate: text a brain's episodes repeat everywhere, so it says nothing about any of them.

Agents and their frameworks fill the lesson, outcome and action fields with status lines ("Task
completed", "Operation concluded per standard procedure", "N/A"). Such text must never title a
page, become a claim, make an episode knowledge or lift a page in recall. It is found by its
**distribution** in the brain's own episodes, the way a search engine finds stop words by their
document frequency, not by a list of words:

* **Phrase.** A text is reduced to its key (:func:`phrase_key`): its content words, lowercased,
  stemmed, stop words, numbers and ids out, as a sorted set. Near-duplicates ("Run 41 finished
  OK." / "run 97 finished ok") share a key. The lesson, outcome details and action of an
  episode are pooled: a filler is the same filler in any field.
* **Spread.** Each episode also has a **context**, what it is about without those fields: its
  situation, error, tools and category (:func:`~reverie.dream.problems.problem_features`, idf
  weighted over the episodes read). The spread of a phrase is the *effective number of
  unrelated contexts* it occurs in, ``n² / Σᵢ Σⱼ Zᵢⱼ`` over its ``n`` episodes (the
  Leinster–Cobbold diversity of order 2), where ``Zᵢⱼ`` is how alike two contexts are: their
  cosine, blended with whether they share tools and category (:data:`SAME_CHANNEL`). A lesson taught
  many times in one problem has a spread near 1-2, however many episodes teach it (its contexts
  are alike); a status line written after every kind of work has a spread near the number of
  unrelated problems it was written in.
* **Stop phrase.** A phrase whose spread reaches ``DreamConfig.boilerplate_spread`` is a stop
  phrase of that brain. The spread of ``n`` episodes is at most ``n``, so a small brain, where a
  real lesson has been taught a few times, cannot mistake it for filler.
* **Lift.** A framework's timeout line is written after every timeout, and timeouts gather in a
  few problems, so its spread stays low. What gives it away is that it is no more common near
  its episodes than anywhere among episodes of the same outcome: its **lift** (:func:`lift`),
  the likeness-weighted share of its episodes' same-outcome neighbours that carry it, over its
  share of that outcome, is near 1, where a lesson's is many times that (it is said where its
  problem is). A lesson or outcome text (never an action: a call that failed everywhere is
  still the call) with more episodes than ``boilerplate_spread``, of an outcome whose episodes
  spread over at least two unrelated contexts (:data:`MIN_CONTEXTS`), is a stop phrase when
  its lift is at most ``DreamConfig.boilerplate_lift``.
* **Tenant.** A framework writes the same status lines for every agent it runs, so a brain's
  statistics also read a share of the newest episodes of a few other brains of its tenant
  (:data:`SIBLINGS`); two brains' contexts never share a channel. A young brain thus knows its
  tenant's filler from its first cycle. Filler that is rare in every brain ("Be careful and
  thorough." on one episode in two hundred) is seen too few times in one brain for any spread
  to show; so each lesson the brain holds fewer than ``boilerplate_spread`` times is looked up
  in those other brains' text index (:data:`CARRIERS` at most each), and the carriers found
  join its statistics. Other tenants are never read: one tenant's text never decides what
  another's brain keeps.
* **Prior.** A few universal fillers (``n/a``, ``none``, ``ok``, empty or all stop words) are
  boilerplate in any brain, before any statistics exist (:func:`is_template_lesson`).

Where the statistic lives: it is computed, per scope, from a bounded read of the newest episodes
(``DreamConfig.boilerplate_window``) when a cycle starts (:func:`boilerplate_of`). It is
a pure function of the store's episodes, so it needs no table of its own, no migration, and
nothing to undo: an undone cycle, an erasure or a retried crash leaves it exactly as the episodes
left it. Filler is frequent by nature, so the newest episodes hold it.

The cycle then works on a **view** of its episodes with the stop phrases blanked
(:meth:`Boilerplate.strip`): grouping, knowledge, lessons, titles and claims all see the episode
without them. So is a success's lesson that only restates the episode (:func:`restates`): a
note naming routine work ("Posting the weekly uptime summary") makes no page of its own; its
episodes are a tally of their problem's page, if it has one. Episodes themselves are never
changed.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from reverie.dream.cluster import STOP_WORDS, order_key
from reverie.models import TEACHING_ROLES, Outcome
from reverie.recall.query import query_terms, stem
from reverie.text.slots import slot_of

if TYPE_CHECKING:
    from reverie.config import DreamConfig
    from reverie.models import Episode, Page, Scope
    from reverie.store.base import BrainStore

__all__ = [
    "FIELDS",
    "MIN_CONTEXTS",
    "SAME_CHANNEL",
    "SIBLINGS",
    "Boilerplate",
    "boilerplate_of",
    "is_template_lesson",
    "learn_boilerplate",
    "lift",
    "phrase_key",
    "restates",
    "spread",
]

FIELDS = ("lesson", "outcome_details", "action")
"""The fields whose text can be boilerplate; the rest of an episode is its context."""
SAME_CHANNEL = 0.5
"""The share of two contexts' likeness that is having the same tools and category (the rest
is the cosine of what they are about)."""

SIBLINGS = 4
"""A brain's statistics also read this many other brains of its tenant, each an eighth of the
window: a framework writes the same status lines for every agent it runs."""

CARRIERS = 16
"""At most this many carriers of one lesson are read from each other brain of the tenant."""
LOOKUPS = 256
"""At most this many of a brain's rarest lessons (newest first) are looked up elsewhere per
cycle: the cost stays bounded whatever the window holds."""

MIN_CONTEXTS = 2.0
"""A phrase's lift is only read when its outcome's episodes spread over at least this many
unrelated contexts: where one problem is all a brain knows, nothing tells filler from lesson."""

_WORDS = re.compile(r"[^\W_]+")
_PRIOR = frozenset({"n a", "na", "none", "null", "nil", "ok", "okay", "tbd", "todo"})


def _normal_words(text: str) -> list[str]:
    return _WORDS.findall(text.lower())


@lru_cache(maxsize=1 << 14)
def is_template_lesson(text: str | None) -> bool:
    """The prior: a text that is boilerplate in any brain ("N/A.", "none", "ok", "", only stop
    words, or not one word of two letters or more: ``¯\\_(ツ)_/¯``, ``#42``). Everything else
    is judged by the brain's own statistics (:class:`Boilerplate`)."""
    words = _normal_words(text or "")
    if not words or " ".join(words) in _PRIOR or all(w in STOP_WORDS for w in words):
        return True
    return not any(sum(c.isalpha() for c in w) >= 2 for w in words)


@lru_cache(maxsize=1 << 15)
def phrase_key(text: str | None) -> str:
    """A text's content words (stemmed; stop words, numbers and ids out) as one sorted string:
    the key near-duplicates share. Empty when nothing is left."""
    words = {
        stem(w)
        for w in _normal_words(text or "")
        if w not in STOP_WORDS and len(w) > 1 and not any(c.isdigit() for c in w)
    }
    return " ".join(sorted(words))


@dataclass(frozen=True)
class Boilerplate:
    """The stop phrases of one brain (their keys) and the spread each was found with."""

    stops: frozenset[str] = frozenset()
    spreads: Mapping[str, float] | None = None

    def is_stop(self, text: str | None) -> bool:
        """Whether ``text`` says nothing in this brain: the prior, or one of its stop phrases.
        The predicate the cycle and recall share."""
        return is_template_lesson(text) or phrase_key(text) in self.stops

    def holds(self, page: Page) -> bool:
        """Whether ``page`` is titled by, or teaches, one of the brain's stop phrases."""
        if self.is_stop(page.title):
            return True
        return any(c.role in TEACHING_ROLES and self.is_stop(c.text) for c in page.revision.claims)

    def strip(self, episodes: Iterable[Episode]) -> list[Episode]:
        """The episodes as the cycle sees them: every boilerplate field blanked (a copy; the
        stored episode is untouched)."""
        return [self.view(ep) for ep in episodes]

    def view(self, ep: Episode) -> Episode:
        """One episode as the cycle sees it (:meth:`strip`): ``ep`` itself when nothing of it is
        boilerplate."""
        update: dict[str, object] = {}
        if ep.lesson is not None and (self.is_stop(ep.lesson) or restates(ep)):
            update["lesson"] = None
        if ep.outcome_details is not None and self.is_stop(ep.outcome_details):
            update["outcome_details"] = None
        if ep.action and phrase_key(ep.action) in self.stops:
            update["action"] = ""
        return ep.view(**update) if update else ep


def restates(ep: Episode) -> bool:
    """Whether a success's lesson only says what the episode already says: every content word
    of it is in its situation, action, outcome, tools or category ("Tagging chats for the QA
    sample" on ``tag_conversation {"tag": "qa_sample"}`` for "Sampling chats for review"). Such
    a note names the routine work; it teaches nothing. A value it states is a fact, kept."""
    if ep.outcome is not Outcome.SUCCESS or not ep.lesson:
        return False
    said = phrase_key(ep.lesson).split()
    if not said or slot_of(ep.lesson, least=1) is not None:
        return False
    fields = (ep.situation, ep.action, ep.outcome_details or "", ep.category or "", *ep.tools)
    return set(said) <= set(phrase_key(" ".join(fields)).split())


def boilerplate_of(store: BrainStore, scope: Scope, config: DreamConfig) -> Boilerplate:
    """The stop phrases of ``scope``, learnt from its newest episodes and a share of those of
    up to :data:`SIBLINGS` other brains of its tenant (module docstring)."""
    window = config.boilerplate_window
    if window <= 0:
        return Boilerplate()
    episodes = store.recent_episodes(scope, window)
    siblings = _siblings(store, scope)
    for sibling in siblings:
        episodes += store.recent_episodes(sibling, max(1, window // (2 * SIBLINGS)))
    spread = config.boilerplate_spread
    episodes += _carriers_elsewhere(store, siblings, episodes, spread, window)
    return learn_boilerplate(episodes, spread, config.boilerplate_lift)


def _carriers_elsewhere(
    store: BrainStore,
    siblings: Sequence[Scope],
    read: Sequence[Episode],
    threshold: float,
    window: int,
) -> list[Episode]:
    """The episodes of ``siblings`` that carry a lesson ``read`` holds fewer than
    ``threshold`` times, found through their text index among each one's newest ``window``
    matches (what a lookup costs stays bounded however long a sibling's history), that
    ``read`` does not hold yet."""
    if not siblings:
        return []
    counts = Counter(phrase_key(ep.lesson) for ep in read if ep.lesson)
    rare: dict[str, str] = {}
    for ep in sorted(read, key=order_key, reverse=True):
        key = phrase_key(ep.lesson)
        if key and counts[key] < threshold and key not in rare:
            rare[key] = ep.lesson or ""
            if len(rare) == LOOKUPS:
                break
    seen = {ep.id for ep in read}
    found: list[Episode] = []
    for key, text in rare.items():
        terms = query_terms(text)
        for sibling in siblings:
            for ep, _ in store.search_episodes(sibling, terms, CARRIERS, window=window):
                if ep.id not in seen and phrase_key(ep.lesson) == key:
                    seen.add(ep.id)
                    found.append(ep)
    return found


def _siblings(store: BrainStore, scope: Scope) -> list[Scope]:
    """Other brains of the tenant (not its org brain): the same agent's first, then by key."""
    others = [s for s in store.scopes() if s.tenant == scope.tenant and s != scope]
    others = [s for s in others if not s.is_org]
    others.sort(key=lambda s: (s.agent != scope.agent, s.key))
    return others[:SIBLINGS]


def learn_boilerplate(
    episodes: Sequence[Episode], threshold: float, most_lift: float = 1.6
) -> Boilerplate:
    """The stop phrases of ``episodes``: keys whose spread reaches ``threshold``, or whose lift
    is at most ``most_lift`` (module docstring). Pure and order-independent."""
    ordered = sorted(episodes, key=order_key)
    carriers = _carriers(ordered)
    candidates = {k: eps for k, eps in carriers.items() if len(eps) >= threshold}
    if not candidates:
        return Boilerplate()
    contexts = _contexts({ep.id: ep for ep in ordered}, ordered)
    spreads = {k: spread(eps, contexts) for k, eps in sorted(candidates.items())}
    stops = {k for k, s in spreads.items() if s >= threshold}
    actions = {phrase_key(ep.action) for ep in ordered}
    classes = _Classes(ordered, contexts)
    for key, eps in sorted(candidates.items()):
        if key in stops or key in actions:
            continue
        outcome, same = classes.majority(eps)
        diverse = len(same) > threshold and classes.spread(outcome) >= MIN_CONTEXTS
        if diverse and lift(same, classes.sums[outcome], contexts) <= most_lift:
            stops.add(key)
    return Boilerplate(frozenset(stops), {k: round(s, 3) for k, s in spreads.items()})


def _carriers(episodes: Sequence[Episode]) -> dict[str, list[Episode]]:
    """Per phrase key, the episodes that carry it in any of :data:`FIELDS` (each once)."""
    out: defaultdict[str, list[Episode]] = defaultdict(list)
    for ep in episodes:
        keys = {phrase_key(getattr(ep, f)) for f in FIELDS} - {""}
        for key in keys:
            out[key].append(ep)
    return out


@dataclass(frozen=True)
class _Context:
    vector: dict[str, float]
    channel: tuple[str, ...]


_FEATURES: dict[tuple[object, ...], Mapping[str, float]] = {}
_FEATURES_KEPT = 1 << 14


def _context_features(ep: Episode) -> Mapping[str, float]:
    """What an episode is about without its lesson, outcome and action: the problem features
    of its situation, error, category and tools. Cached by those fields: each cycle reads its
    window again."""
    from reverie.dream.problems import problem_features  # noqa: PLC0415 (problems imports us)

    key = (ep.situation, ep.error, ep.category, *ep.tools)
    if key not in _FEATURES:
        if len(_FEATURES) >= _FEATURES_KEPT:
            _FEATURES.clear()
        bare = ep.model_copy(update={"lesson": None, "action": "", "outcome_details": None})
        _FEATURES[key] = problem_features(bare)
    return _FEATURES[key]


def _contexts(wanted: Mapping[str, Episode], everyone: Sequence[Episode]) -> dict[str, _Context]:
    """The unit tf-idf context vector (idf over ``everyone``) and channel of each wanted
    episode."""

    features = _context_features
    df = Counter(t for ep in everyone for t in features(ep))
    idf = {t: math.log((len(everyone) + 1) / (n + 1)) + 1.0 for t, n in df.items()}
    out = {}
    for ep_id, ep in wanted.items():
        raw = {t: w * idf[t] for t, w in features(ep).items()}
        norm = math.sqrt(sum(v * v for v in raw.values())) or 1.0
        category = (ep.category or "").strip().lower()
        channel = (ep.scope.key, category, *sorted(t.lower() for t in ep.tools))
        out[ep_id] = _Context({t: v / norm for t, v in raw.items()}, channel)
    return out


@dataclass
class _Sums:
    """The sum of some episodes' context vectors, and their count per channel."""

    terms: defaultdict[str, float]
    channels: Counter[tuple[str, ...]]
    n: int = 0

    @classmethod
    def of(cls, eps: Iterable[Episode], contexts: Mapping[str, _Context]) -> _Sums:
        sums = cls(defaultdict(float), Counter())
        for ep in eps:
            context = contexts[ep.id]
            sums.channels[context.channel] += 1
            sums.n += 1
            for term, value in context.vector.items():
                sums.terms[term] += value
        return sums

    def likeness(self, context: _Context) -> float:
        """``Σⱼ Zᵢⱼ`` of one context against the summed episodes (:func:`spread`)."""
        cosine = sum(v * self.terms.get(t, 0.0) for t, v in context.vector.items())
        return (1 - SAME_CHANNEL) * cosine + SAME_CHANNEL * self.channels[context.channel]


class _Classes:
    """The episodes of each outcome, summed: what a phrase's lift is measured against."""

    def __init__(self, episodes: Sequence[Episode], contexts: Mapping[str, _Context]) -> None:
        by: defaultdict[str, list[Episode]] = defaultdict(list)
        for ep in episodes:
            by[str(ep.outcome)].append(ep)
        self.members = dict(by)
        self.sums = {o: _Sums.of(eps, contexts) for o, eps in by.items()}
        self._contexts = contexts
        self._spreads: dict[str, float] = {}

    def majority(self, eps: Sequence[Episode]) -> tuple[str, list[Episode]]:
        """The outcome most of ``eps`` have (ties: by name), and those episodes."""
        counts = Counter(str(ep.outcome) for ep in eps)
        outcome = min(counts, key=lambda o: (-counts[o], o))
        return outcome, [ep for ep in eps if str(ep.outcome) == outcome]

    def spread(self, outcome: str) -> float:
        if outcome not in self._spreads:
            self._spreads[outcome] = spread(self.members[outcome], self._contexts)
        return self._spreads[outcome]


def lift(eps: Sequence[Episode], outcome: _Sums, contexts: Mapping[str, _Context]) -> float:
    """How much more often ``eps``' phrase is met near them than among all ``outcome``
    episodes: the mean over ``eps`` of ``Σⱼ Zᵢⱼ [j carries it] / Σⱼ Zᵢⱼ`` over the outcome's
    episodes ``j ≠ i``, divided by the phrase's share of the outcome. Near 1 for text written
    whatever the problem; a lesson said where its problem is scores many times that."""
    if len(eps) < 2 or outcome.n < 2:
        return math.inf
    own = _Sums.of(eps, contexts)
    local = []
    for ep in eps:
        near = outcome.likeness(contexts[ep.id]) - 1.0  # itself out
        local.append((own.likeness(contexts[ep.id]) - 1.0) / near if near > 0 else 1.0)
    share = (len(eps) - 1) / (outcome.n - 1)
    return (sum(local) / len(local)) / share if share > 0 else math.inf


def spread(eps: Sequence[Episode], contexts: Mapping[str, _Context]) -> float:
    """The effective number of unrelated contexts ``eps`` occur in: ``n² / Σᵢ Σⱼ Zᵢⱼ`` (module
    docstring); 1 for identical contexts, ``n`` for unrelated ones.

    ``Zᵢⱼ = (1 - c) cos(vᵢ, vⱼ) + c [same channel]`` with ``c`` = :data:`SAME_CHANNEL`: the inner
    product of unit vectors, so the double sum is the squared norm of their sum and costs one
    pass, not one per pair."""
    n = len(eps)
    if n < 2:
        return float(n)
    total: defaultdict[str, float] = defaultdict(float)
    channels: Counter[tuple[str, ...]] = Counter()
    for ep in eps:
        context = contexts[ep.id]
        channels[context.channel] += 1
        for term, value in context.vector.items():
            total[term] += value
    alike = (1 - SAME_CHANNEL) * sum(v * v for v in total.values())
    alike += SAME_CHANNEL * sum(k * k for k in channels.values())
    return n * n / alike if alike > 0 else float(n)
