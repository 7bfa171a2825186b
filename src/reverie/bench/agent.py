"""``reverie bench agent``: does dreaming help an agent, against BM25 over its raw episodes?

The data is :mod:`reverie.bench.agent_gen` (multi-agent tool episodes with recurring lessons in
many wordings, changing facts, noise, a late backfill). Each Reverie system builds one SQLite
brain in a temporary directory the way agents would: every simulated day, that day's episodes
are ingested in ``created_at`` order and every scope dreams once (``now=`` the end of the day);
then the backfill arrives and every scope dreams a last time. Only the public facade is used
(``Reverie.open``, ``ingest``, ``dream``, ``recall``, ``pages``), so the bench measures whatever
the dream cycle and recall are today.

Systems, all on the same data in the same run: ``reverie-minilm`` (embedder ``minilm``, the
``embed`` extra; skipped with a message when it is missing), ``reverie-lexical`` (no embedder)
and ``bm25``: Okapi BM25 over the raw episodes of the probe's scope, one line per episode
(``- [date, outcome] situation. action. details. error: … lesson: …``), best first, no floor.

**The cut.** A budget is whitespace words of the section, the same for every system: its lines
in its own order while they fit, a line that does not fit skipped
(:func:`reverie.bench.lexical.cut_words`). Reverie is asked for ``4 × words`` tokens and only its
quoted lines are kept (header and fence dropped), as in ``bench locomo``.

**Scoring** (case-insensitive; a key or value matches where it is not part of a longer word of
letters and digits):

* *lesson recall @N*: share of lesson probes whose section at N words holds at least 60% of the
  lesson's answer keys (both of two, two of three, one of one);
* *current-fact rate*: share of fact probes whose section holds the newest value; *stale-fact
  rate*: share whose section holds any older value (both can be true);
* *never-stored → empty*: share of never-stored questions whose section is empty;
* *framing @N*: over the probes whose section at N words is not empty, the mean share of its
  words that are not memory text: the fence lines and each line's bracketed label (reference,
  date, outcome; for BM25 its bullet and label), against the quoted titles, claims and excerpts
  (:func:`framing_share`);
* *leaks*: probes whose section holds an episode (by id, of a line or a cited claim) of another
  scope, plus cross-tenant probes whose section holds ≥ 60% of the other tenant's answer keys;
* *words used @N*: the mean share of the N-word budget that the section fills, over the lesson
  and fact probes (where knowledge exists to fill it).

Model-free counts for the Reverie systems: active pages, claims per page, episodes cited by
active pages against episodes scanned by the cycles.
"""

from __future__ import annotations

import math
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from reverie.bench.agent_data import WORLDS, load_world
from reverie.bench.agent_gen import Dataset, GenConfig, Probe, generate
from reverie.bench.lexical import BM25, cut_words, fit_lines
from reverie.bench.model_calls import ModelCalls, measure_model_calls
from reverie.embed import resolve_embedder
from reverie.engine import Reverie
from reverie.errors import InvalidInput, ReverieError
from reverie.recall.render import FENCE_CLOSE, FENCE_OPEN, format_date, quoted_lines

__all__ = [
    "BUDGETS",
    "KEY_SHARE",
    "SYSTEMS",
    "AgentResult",
    "Section",
    "SystemResult",
    "episode_line",
    "framing_share",
    "has_key",
    "keys_found",
    "leak_reasons",
    "run_agent",
]

SYSTEMS = ("reverie-minilm", "reverie-lexical", "bm25")
BUDGETS = (100, 250)
KEY_SHARE = 0.6
TOKENS_PER_WORD = 4
_EMBEDDERS = {"reverie-minilm": "minilm", "reverie-lexical": None}


def has_key(text: str, key: str) -> bool:
    """``key`` in ``text``, case-insensitive, not inside a longer word of letters and digits."""
    pattern = r"(?<![a-z0-9])" + re.escape(key.lower()) + r"(?![a-z0-9])"
    return re.search(pattern, text.lower()) is not None


def keys_found(text: str, keys: Sequence[str]) -> bool:
    """At least :data:`KEY_SHARE` of ``keys`` in ``text`` (rounded up: 2 of 2, 2 of 3)."""
    need = math.ceil(KEY_SHARE * len(keys) - 1e-9)
    return bool(keys) and sum(has_key(text, k) for k in keys) >= need


@dataclass(frozen=True)
class Section:
    """What one system put in front of the agent for one probe, after the word cut."""

    text: str
    ids: frozenset[str]
    """The episode ids behind the kept lines (a page line: its citations)."""
    framing: float | None = None
    """Share of the section's words that are not memory text; ``None`` for an empty one."""


_System = Callable[[Probe, int], Section]


@dataclass
class SystemResult:
    name: str
    lessons: dict[int, dict[str, bool]] = field(default_factory=dict)
    facts: dict[int, dict[str, tuple[bool, bool]]] = field(default_factory=dict)
    empty: dict[str, bool] = field(default_factory=dict)
    leaks: dict[str, list[str]] = field(default_factory=dict)
    framing: dict[int, list[float]] = field(default_factory=dict)
    words: dict[int, list[int]] = field(default_factory=dict)
    """Per budget, the words of each lesson and fact probe's section."""
    counts: dict[str, float] = field(default_factory=dict)
    skipped: str | None = None

    def metrics(self) -> dict[str, float]:
        """The headline figures (see the module docstring); every rate is in [0, 1]."""
        out: dict[str, float] = {}
        for budget, hits in self.lessons.items():
            out[f"lesson_recall@{budget}"] = _share(hits.values())
        for budget, facts in self.facts.items():
            out[f"fact_current@{budget}"] = _share(c for c, _s in facts.values())
            out[f"fact_stale@{budget}"] = _share(s for _c, s in facts.values())
        for budget, shares in self.framing.items():
            out[f"framing@{budget}"] = round(sum(shares) / len(shares), 4) if shares else 0.0
        for budget, used in self.words.items():
            out[f"words_used@{budget}"] = round(sum(used) / len(used) / budget, 4) if used else 0.0
        out["never_empty"] = _share(self.empty.values())
        out["leaks"] = float(sum(bool(v) for v in self.leaks.values()))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "skipped": self.skipped, "metrics": self.metrics(), "counts": self.counts,
            "lessons": {str(b): h for b, h in self.lessons.items()},
            "facts": {str(b): {k: {"current": c, "stale": s} for k, (c, s) in f.items()}
                      for b, f in self.facts.items()},
            "never_empty": self.empty, "leaks": {k: v for k, v in self.leaks.items() if v},
        }  # fmt: skip


def framing_share(lines: Sequence[str], fence: Sequence[str] = ()) -> float | None:
    """Share of the words of ``fence`` and ``lines`` that are not memory text: the fence lines
    and each line's label, everything up to its first ``"] "``; ``None`` without lines."""
    if not lines:
        return None
    label_words = sum(len(line.partition("] ")[0].split()) for line in lines if "] " in line)
    framing = sum(len(f.split()) for f in fence) + label_words
    total = sum(len(f.split()) for f in fence) + sum(len(line.split()) for line in lines)
    return framing / total if total else None


def _share(flags: Any) -> float:
    values = [bool(f) for f in flags]
    return round(sum(values) / len(values), 4) if values else 0.0


@dataclass
class AgentResult:
    config: GenConfig
    episodes: int
    budgets: tuple[int, ...]
    systems: list[SystemResult]
    lesson_notes: dict[str, str]
    """Per lesson key: its scope, stated or not, how many channels."""
    model_calls: ModelCalls | None = None
    """The LLM distiller's cost on the same replay, against the local model server."""

    def system(self, name: str) -> SystemResult:
        return next(s for s in self.systems if s.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "world": self.config.world, "seed": self.config.seed, "scale": self.config.scale,
            "days": self.config.days, "episodes": self.episodes, "budget_words": list(self.budgets),
            "key_share": KEY_SHARE, "lessons": self.lesson_notes,
            "systems": {s.name: s.to_dict() for s in self.systems},
            "model_calls": _calls(self.model_calls),
        }  # fmt: skip


def _calls(calls: ModelCalls | None) -> dict[str, Any] | None:
    if calls is None:
        return None
    return {"episodes": calls.episodes, "calls": calls.calls, "cache_hits": calls.cache_hits,
            "cycles": calls.cycles, "per_episode": calls.per_episode}  # fmt: skip


# -- scoring ------------------------------------------------------------------------------------


def leak_reasons(probe: Probe, section: Section, owner: dict[str, str]) -> list[str]:
    """Why ``section`` leaks: ids of episodes ``owner`` puts in another scope, and the other
    tenant's answer keys for a cross-tenant probe. Empty when nothing leaked."""
    reasons = sorted(i for i in section.ids if owner.get(i, probe.scope) != probe.scope)
    if probe.kind == "leak" and keys_found(section.text, probe.keys):
        reasons.append(f"answer keys of {probe.home}")
    return reasons


def _score(data: Dataset, result: SystemResult, system: _System, budgets: Sequence[int]) -> None:
    """Ask every probe at every budget and record what each section holds; emptiness and leaks
    are judged on the largest budget."""
    owner = {ep["id"]: ep["scope"] for ep in data.episodes()}
    for budget in budgets:
        result.lessons[budget], result.facts[budget] = {}, {}
        result.framing[budget], result.words[budget] = [], []
    for probe in data.probes:
        for budget in budgets:
            section = system(probe, budget)
            _record(result, probe, budget, section)
            if section.framing is not None:
                result.framing[budget].append(section.framing)
        result.leaks[f"{probe.kind}:{probe.key}@{probe.scope}"] = leak_reasons(
            probe, section, owner
        )
        if probe.kind == "never":
            result.empty[probe.key] = not section.text.strip()


def _record(result: SystemResult, probe: Probe, budget: int, section: Section) -> None:
    if probe.kind in ("lesson", "fact"):
        result.words[budget].append(len(section.text.split()))
    if probe.kind == "lesson":
        result.lessons[budget][probe.key] = keys_found(section.text, probe.keys)
    elif probe.kind == "fact":
        stale = any(has_key(section.text, v) for v in probe.stale)
        result.facts[budget][probe.key] = (has_key(section.text, probe.keys[0]), stale)


# -- the BM25 baseline --------------------------------------------------------------------------


def episode_line(ep: dict[str, Any]) -> str:
    """One raw episode as a line of plain text, every field an agent wrote."""
    when = format_date(datetime.fromisoformat(ep["created_at"]))
    parts = [ep.get("situation", ""), ep.get("action", ""), ep.get("outcome_details") or ""]
    parts += [f"error: {ep['error']}" if ep.get("error") else ""]
    parts += [f"lesson: {ep['lesson']}" if ep.get("lesson") else ""]
    body = ". ".join(p.strip().rstrip(".") for p in parts if p and p.strip())
    return f"- [{when}, {ep.get('outcome', 'unknown')}] {body}."


def _bm25_system(data: Dataset) -> _System:
    by_scope: dict[str, list[dict[str, Any]]] = {s: [] for s in data.scopes}
    for ep in data.episodes():
        by_scope[ep["scope"]].append(ep)
    lines = {s: [episode_line(ep) for ep in eps] for s, eps in by_scope.items()}
    index = {s: BM25(lines[s]) for s in data.scopes}

    def section(probe: Probe, budget: int) -> Section:
        ranked = index[probe.scope].rank(probe.query)
        eps = by_scope[probe.scope]
        taken = [ranked[i] for i in fit_lines([lines[probe.scope][r] for r in ranked], budget)]
        kept = [lines[probe.scope][r] for r in taken]
        return Section("\n".join(kept), frozenset(eps[r]["id"] for r in taken), framing_share(kept))

    return section


# -- Reverie ------------------------------------------------------------------------------------


def _replay(rv: Reverie, data: Dataset, counts: dict[str, float]) -> None:
    """Ingest day by day, dream every scope at the end of each day; backfill; a last dream."""
    counts.update(cycles=0, scanned=0, collected=0)
    batches = [(batch, data.day_end(day)) for day, batch in enumerate(data.days)]
    for batch, now in [*batches, (data.backfill, data.final)]:
        rv.ingest(batch)
        for scope in data.scopes:
            report = rv.dream(scope, now=now)
            counts["cycles"] += 1
            counts["scanned"] += report.scanned
            counts["collected"] += report.collected


def _page_counts(rv: Reverie, data: Dataset, counts: dict[str, float]) -> None:
    pages = [p for scope in data.scopes for p in rv.pages(scope)]
    claims = sum(len(p.revision.claims) for p in pages)
    cited = {e for p in pages for e in p.citations}
    counts.update(
        pages=len(pages), claims_per_page=round(claims / len(pages), 2) if pages else 0.0,
        cited=len(cited), episodes=len(data.episodes()),
        fact_pages=sum(p.kind == "fact" for p in pages),
    )  # fmt: skip


def _reverie_system(rv: Reverie, data: Dataset, counts: dict[str, float]) -> _System:
    def section(probe: Probe, budget: int) -> Section:
        started = time.perf_counter()
        recalled = rv.recall(probe.query, probe.scope, budget * TOKENS_PER_WORD, now=data.final)
        counts["recall_s"] = counts.get("recall_s", 0.0) + time.perf_counter() - started
        counts["warnings"] = counts.get("warnings", 0.0) + bool(recalled.warning)
        lines = quoted_lines(recalled.text)
        taken = fit_lines(lines, budget)
        framing = framing_share([lines[i] for i in taken], (FENCE_OPEN, FENCE_CLOSE))
        if len(recalled.items) != len(lines):  # cannot tell the lines apart: count them all
            return Section(cut_words(lines, budget), frozenset(_ids(recalled.items)), framing)
        kept = [recalled.items[i] for i in taken]
        return Section(cut_words(lines, budget), frozenset(_ids(kept)), framing)

    return section


def _ids(items: Sequence[Any]) -> set[str]:
    return {e for item in items for e in (item.id, *item.citations)}


def _run_reverie(name: str, data: Dataset, budgets: Sequence[int], workdir: Path) -> SystemResult:
    result = SystemResult(name)
    try:
        embedder = resolve_embedder(_EMBEDDERS[name])
    except ReverieError as exc:
        result.skipped = str(exc)
        return result
    started = time.perf_counter()
    with Reverie.open(workdir / f"{name}.db", embedder=embedder) as rv:
        _replay(rv, data, result.counts)
        result.counts["build_s"] = round(time.perf_counter() - started, 1)
        _page_counts(rv, data, result.counts)
        _score(data, result, _reverie_system(rv, data, result.counts), budgets)
    result.counts["recall_s"] = round(result.counts.get("recall_s", 0.0), 2)
    return result


def run_agent(
    config: GenConfig | None = None,
    *,
    data: Dataset | None = None,
    systems: Sequence[str] = SYSTEMS,
    budgets: Sequence[int] = BUDGETS,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    model_calls: bool = False,
) -> AgentResult:
    """Generate the data for ``config`` (or take ``data``, a set read from disk), run every
    system on it, score them (module docstring).

    The brains go under ``workdir`` (default: a temporary directory, removed afterwards).
    """
    unknown = [name for name in systems if name not in SYSTEMS]
    if unknown:
        raise InvalidInput("systems", f"unknown {', '.join(unknown)}; choose from {SYSTEMS}")
    budgets = sorted(set(budgets))  # the last is the largest: emptiness and leaks are judged there
    data = data or generate(config)
    results = []
    with tempfile.TemporaryDirectory(prefix="reverie-bench-agent-") as tmp:
        for name in systems:
            if progress is not None:
                progress(f"{name}: building and probing")
            if name == "bm25":
                result = SystemResult(name)
                _score(data, result, _bm25_system(data), budgets)
            else:
                result = _run_reverie(name, data, budgets, workdir or Path(tmp))
            results.append(result)
        calls = None
        if model_calls:
            if progress is not None:
                progress("model path: replaying with the LLM distiller")
            calls = measure_model_calls(data.days, data.scopes, data.day_end, workdir or Path(tmp),
                                        late=data.backfill, final=data.final)  # fmt: skip
    notes = _lesson_notes(data)
    return AgentResult(data.config, len(data.episodes()), tuple(budgets), results, notes, calls)


def _lesson_notes(data: Dataset) -> dict[str, str]:
    """Per lesson probe: its scope, and for a world of ours whether it is stated and how many
    channels it is met through (a set read from disk says only its scope)."""
    if data.config.world not in WORLDS:
        return {p.key: p.scope for p in data.probes if p.kind == "lesson"}
    return {
        item.key: f"{item.scope}, {'stated' if item.stated else 'unstated'},"
        f" {len(item.channels)} channel{'s' if len(item.channels) > 1 else ''}"
        for item in load_world(data.config.world).lessons
    }
