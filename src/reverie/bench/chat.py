"""``reverie bench chat``: is what a person says once remembered, and asked back in other words?

The data is :mod:`reverie.bench.chat_gen` (generated people stating facts and preferences once
amid chit-chat, over several short chats; slots that change; questions in other words; questions
about what was never said; the mem0 quickstart). Every Reverie system is fed exactly as a user
would feed it: each chat goes in through :meth:`Reverie.add` (``user_id`` the person, so one
scope per person; a one-message chat as a text, the others as messages), dated by the chat's
time. Two brains per system, in a temporary directory:

* **before dream**: every chat added, no cycle run, then every question recalled;
* **after dream**: chats added day by day, and each person who chatted that day dreams at the end
  of it (``now=`` the day's last second); then every question recalled.

Systems, all on the same data in the same run: ``reverie-minilm`` (embedder ``minilm``, the
``embed`` extra; skipped with a message without it), ``reverie-lexical`` (no embedder), and two
baselines over the raw user messages of the person asked about, one line each, best first, no
floor: ``dense`` (MiniLM cosine top-k) and ``bm25`` (Okapi BM25, :mod:`reverie.bench.lexical`).

**The cut** is the one ``bench agent`` and ``bench locomo`` use: a budget of whitespace words,
a system's lines in its own order while they fit (:func:`reverie.bench.lexical.cut_words`).
Reverie is asked for ``4 × words`` tokens at the time the questions are asked, and only its
quoted lines are kept.

**Scoring** (case-insensitive; a value matches where it is not part of a longer word):

* *answered*: share of the questions about a stated slot whose section holds its current value,
  split into questions that share a content word with what was said and those that share none;
* *current after change* / *stale*: over the questions about a slot whose value changed, the
  share whose section holds the new value / any older one (both can hold);
* *never-said → empty*: share of questions about a slot the person never stated, or about what
  no one says, whose section is empty;
* *quickstart*: the mem0 quickstart's three questions answered (any of their keys).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reverie.api.verbs import scope_for
from reverie.bench.agent import has_key
from reverie.bench.chat_gen import Chat, ChatConfig, ChatData, Question, generate
from reverie.bench.lexical import BM25, cut_words
from reverie.embed import Embedder, cosine_matrix, resolve_embedder
from reverie.engine import Reverie
from reverie.errors import InvalidInput, ReverieError
from reverie.models import Scope
from reverie.recall.render import quoted_lines

__all__ = [
    "BUDGET",
    "SYSTEMS",
    "ChatResult",
    "Hit",
    "Run",
    "run_chat",
    "score",
]

SYSTEMS = ("reverie-minilm", "reverie-lexical", "dense", "bm25")
BUDGET = 100
TOKENS_PER_WORD = 4
_EMBEDDERS = {"reverie-minilm": "minilm", "reverie-lexical": None}
_ANSWERABLE = ("said", "changed")
_EMPTY = ("unstated", "never")

_Ask = Callable[[Question], str]


@dataclass(frozen=True)
class Hit:
    """What one section held for one question."""

    answered: bool
    stale: bool
    empty: bool


def score(question: Question, section: str) -> Hit:
    """The section's hit for ``question`` (module docstring)."""
    answered = any(has_key(section, k) for k in question.keys)
    stale = any(has_key(section, v) for v in question.stale)
    return Hit(answered, stale, not section.strip())


@dataclass
class Run:
    """One system in one phase (``before dream``, ``after dream`` or ``raw`` for a baseline)."""

    system: str
    phase: str
    hits: list[Hit] = field(default_factory=list)
    counts: dict[str, float] = field(default_factory=dict)
    skipped: str | None = None

    @property
    def name(self) -> str:
        return self.system if self.phase == "raw" else f"{self.system} {self.phase}"

    def metrics(self, questions: Sequence[Question]) -> dict[str, float]:
        """The headline figures; every rate is in [0, 1] (0 where no question counts)."""
        rows = list(zip(questions, self.hits, strict=True))

        def share(keep: Callable[[Question], bool], flag: Callable[[Hit], bool]) -> float:
            flags = [flag(h) for q, h in rows if keep(q)]
            return round(sum(flags) / len(flags), 4) if flags else 0.0

        return {
            "answered": share(lambda q: q.kind in _ANSWERABLE, lambda h: h.answered),
            "answered_shared": share(lambda q: q.kind in _ANSWERABLE and q.shared,
                                     lambda h: h.answered),
            "answered_unshared": share(lambda q: q.kind in _ANSWERABLE and not q.shared,
                                       lambda h: h.answered),
            "current": share(lambda q: q.kind == "changed", lambda h: h.answered),
            "stale": share(lambda q: q.kind == "changed", lambda h: h.stale),
            "never_empty": share(lambda q: q.kind in _EMPTY, lambda h: h.empty),
            "unstated_empty": share(lambda q: q.kind == "unstated", lambda h: h.empty),
            "offtopic_empty": share(lambda q: q.kind == "never", lambda h: h.empty),
            "quickstart": share(lambda q: q.kind == "quickstart", lambda h: h.answered),
        }  # fmt: skip


@dataclass
class ChatResult:
    config: ChatConfig
    budget: int
    questions: tuple[Question, ...]
    chats: int
    messages: int
    runs: list[Run]

    def run(self, name: str) -> Run | None:
        return next((r for r in self.runs if r.name == name and r.skipped is None), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.config.seed, "people": self.config.people, "chats": self.chats,
            "user_messages": self.messages, "budget_words": self.budget,
            "questions": {k: sum(q.kind == k for q in self.questions)
                          for k in ("said", "changed", "unstated", "never", "quickstart")},
            "runs": {r.name: {"skipped": r.skipped, "counts": r.counts,
                              "metrics": r.metrics(self.questions) if r.skipped is None else None,
                              "hits": [vars(h) for h in r.hits]} for r in self.runs},
        }  # fmt: skip


# -- the baselines over raw user messages ---------------------------------------------------------


def _user_lines(data: ChatData) -> dict[str, list[str]]:
    lines: dict[str, list[str]] = {u: [] for u in data.users}
    for chat in data.chats:
        lines[chat.user] += [f"- {text}" for text in chat.user_texts]
    return lines


def _bm25(data: ChatData, budget: int) -> _Ask:
    lines = _user_lines(data)
    index = {u: BM25(texts) for u, texts in lines.items()}

    def ask(q: Question) -> str:
        return cut_words([lines[q.user][i] for i in index[q.user].rank(q.query)], budget)

    return ask


def _dense(data: ChatData, budget: int, embedder: Embedder) -> _Ask:
    lines = _user_lines(data)
    vectors = {u: embedder.embed([t[2:] for t in texts]) for u, texts in lines.items()}

    def ask(q: Question) -> str:
        sims = cosine_matrix(embedder.embed([q.query]), vectors[q.user])[0]
        order = sorted(range(len(sims)), key=lambda i: -float(sims[i]))
        return cut_words([lines[q.user][i] for i in order], budget)

    return ask


# -- Reverie ---------------------------------------------------------------------------------------


def _add(rv: Reverie, chat: Chat) -> None:
    """One chat as its user's app adds it: a lone message as a text, otherwise the messages."""
    data: str | list[dict[str, str]] = (
        chat.messages[0]["content"] if len(chat.messages) == 1 else list(chat.messages)
    )
    rv.add(data, user_id=chat.user, run_id=chat.id, now=chat.when)


def _scope(rv: Reverie, user: str) -> Scope:
    return scope_for(rv.config.identity, user_id=user)


def _nightly(rv: Reverie, data: ChatData, counts: dict[str, float]) -> None:
    """Chats day by day; each person who chatted dreams at the end of the day."""
    counts.update(cycles=0, collected=0, created=0)
    for day in sorted({data.day_of(c.when) for c in data.chats}):
        today = [c for c in data.chats if data.day_of(c.when) == day]
        for chat in today:
            _add(rv, chat)
        for user in sorted({c.user for c in today}):
            report = rv.dream(_scope(rv, user), now=data.day_end(day))
            counts["cycles"] += 1
            counts["collected"] += report.collected
            counts["created"] += report.created


def _asker(rv: Reverie, data: ChatData, budget: int) -> _Ask:
    def ask(q: Question) -> str:
        found = rv.recall(q.query, _scope(rv, q.user), budget * TOKENS_PER_WORD, now=data.final)
        return cut_words(quoted_lines(found.text), budget)

    return ask


def _page_counts(rv: Reverie, data: ChatData, counts: dict[str, float]) -> None:
    pages = [p for user in data.users for p in rv.pages(_scope(rv, user))]
    counts.update(pages=len(pages), fact_pages=sum(p.kind == "fact" for p in pages),
                  preference_pages=sum(p.kind == "preference" for p in pages))  # fmt: skip


def _reverie(name: str, data: ChatData, budget: int, workdir: Path) -> list[Run]:
    before, after = Run(name, "before dream"), Run(name, "after dream")
    try:
        embedder = resolve_embedder(_EMBEDDERS[name])
    except ReverieError as exc:
        before.skipped = after.skipped = str(exc)
        return [before, after]
    with Reverie.open(workdir / f"{name}-before.db", embedder=embedder) as rv:
        for chat in data.chats:
            _add(rv, chat)
        _page_counts(rv, data, before.counts)
        _ask_all(before, data, _asker(rv, data, budget))
    started = time.perf_counter()
    with Reverie.open(workdir / f"{name}-after.db", embedder=embedder) as rv:
        _nightly(rv, data, after.counts)
        after.counts["build_s"] = round(time.perf_counter() - started, 1)
        _page_counts(rv, data, after.counts)
        _ask_all(after, data, _asker(rv, data, budget))
    return [before, after]


def _ask_all(run: Run, data: ChatData, ask: _Ask) -> None:
    started = time.perf_counter()
    run.hits = [score(q, ask(q)) for q in data.questions]
    run.counts["ask_s"] = round(time.perf_counter() - started, 2)


def _baseline(name: str, data: ChatData, budget: int) -> Run:
    run = Run(name, "raw")
    if name == "bm25":
        _ask_all(run, data, _bm25(data, budget))
        return run
    try:
        embedder = resolve_embedder("minilm")
    except ReverieError as exc:
        run.skipped = str(exc)
        return run
    assert embedder is not None  # "minilm" resolves to a model or raises
    _ask_all(run, data, _dense(data, budget, embedder))
    return run


def run_chat(
    config: ChatConfig | None = None,
    *,
    data: ChatData | None = None,
    systems: Sequence[str] = SYSTEMS,
    budget: int = BUDGET,
    progress: Callable[[str], None] | None = None,
) -> ChatResult:
    """Generate the data for ``config`` (or take ``data``, a set read from disk), run every
    system on it, score it (module docstring)."""
    unknown = [name for name in systems if name not in SYSTEMS]
    if unknown:
        raise InvalidInput("systems", f"unknown {', '.join(unknown)}; choose from {SYSTEMS}")
    data = data or generate(config)
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="reverie-bench-chat-") as tmp:
        for name in systems:
            if progress is not None:
                what = "adding, dreaming, asking" if name in _EMBEDDERS else "ranking raw messages"
                progress(f"{name}: {what}")
            if name in _EMBEDDERS:
                runs += _reverie(name, data, budget, Path(tmp))
            else:
                runs.append(_baseline(name, data, budget))
    messages = sum(len(c.user_texts) for c in data.chats)
    return ChatResult(data.config, budget, data.questions, len(data.chats), messages, runs)
