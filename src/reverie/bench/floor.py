"""``reverie bench floor``: the answer floor on a brain of three memories and on a large one.

One calibration (:mod:`reverie.recall.floor`) must serve both ends. A brain of three memories
must answer a paraphrase of one of them, whose cosine is modest; a brain of ``n`` synthetic
agent episodes (:mod:`reverie.bench.synth`, default 100,000) must give an empty section to a
question about something never stored, although by chance alone some of its units come close.

- **Small**: three statements in one scope, three paraphrases of them (each must come back with
  its own statement) and three never-stored questions (each must come back empty).
- **Large**: ``n`` synthetic episodes in one scope, every one embedded (``Reverie.index``), no
  cycle. Asked: the never-stored questions of every ``bench agent`` world whose answer keys no
  synthetic episode holds (the bench checks that itself), and on-topic synthetic queries
  (:func:`reverie.bench.synth.synthetic_queries`), whose share answered is printed beside them so
  that a floor which empties everything cannot pass unseen.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from reverie.bench.agent_data import WORLDS, load_world
from reverie.bench.synth import UNKNOWN_QUERIES, synthetic_episodes, synthetic_queries
from reverie.embed import resolve_embedder
from reverie.engine import Reverie

__all__ = ["FloorBench", "render_floor_bench", "run_floor_bench"]

SMALL_SCOPE = "bench/assistant/bob"
SMALL_MEMORIES = (
    "Our production database runs on db-3.internal, port 5433.",
    "I take the train to work every morning at 7:40.",
    "My daughter Emma starts school in September.",
)
SMALL_PARAPHRASES = (
    ("when does my kid begin her classes", "Emma"),
    ("which machine hosts the prod database", "db-3"),
    ("how do I get to the office", "train"),
)
SMALL_NEVER = (
    "what is the boiling point of mercury",
    "who won the football world cup in 1998",
    "how do I renew my passport",
)
LARGE_SCOPE = "bench/agent-0"
BUDGET_TOKENS = 400


@dataclass
class FloorBench:
    """What each brain answered: ``small_*`` and ``large_*`` are per question (True: as
    wanted, answered for a paraphrase or an on-topic query, empty for a never-stored one)."""

    episodes: int
    small_paraphrases: list[bool] = field(default_factory=list)
    small_never: list[bool] = field(default_factory=list)
    large_never: dict[str, bool] = field(default_factory=dict)
    large_on_topic: list[bool] = field(default_factory=list)
    build_s: float = 0.0

    @property
    def never_empty(self) -> float:
        return _share(list(self.large_never.values()))

    @property
    def passed(self) -> bool:
        small = all(self.small_paraphrases) and all(self.small_never)
        return small and self.never_empty >= 0.9

    def to_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes, "build_s": self.build_s,
            "small": {"paraphrases_answered": self.small_paraphrases,
                      "never_empty": self.small_never},
            "large": {"never_empty": self.never_empty,
                      "on_topic_answered": _share(self.large_on_topic),
                      "answered_never": [q for q, ok in self.large_never.items() if not ok]},
            "passed": self.passed,
        }  # fmt: skip


def _share(flags: Sequence[bool]) -> float:
    return round(sum(flags) / len(flags), 3) if flags else 0.0


def never_questions(texts: Sequence[str]) -> list[str]:
    """The never-stored questions of every agent world whose answer keys none of ``texts``
    holds (lower-cased substring: stricter than a word match)."""
    corpus = "\n".join(texts).lower()
    questions = (q for world in WORLDS for q in load_world(world).never)
    return [q.query for q in questions if not any(k.lower() in corpus for k in q.keys)]


def _small(rv: Reverie, result: FloorBench) -> None:
    for text in SMALL_MEMORIES:
        rv.add(text, scope=SMALL_SCOPE)
    for query, key in SMALL_PARAPHRASES:
        text = rv.recall(query, SMALL_SCOPE, BUDGET_TOKENS).text
        result.small_paraphrases.append(key in text)
    for query in SMALL_NEVER:
        result.small_never.append(rv.recall(query, SMALL_SCOPE, BUDGET_TOKENS).text == "")


def _large(rv: Reverie, result: FloorBench, queries: int) -> None:
    rows = list(synthetic_episodes(result.episodes))
    rv.ingest(rows)
    rv.index(LARGE_SCOPE)
    texts = [" ".join(str(v) for v in row.values() if isinstance(v, str)) for row in rows]
    now = datetime.fromisoformat(rows[-1]["created_at"])
    for query in never_questions(texts):
        found = rv.recall(query, LARGE_SCOPE, BUDGET_TOKENS, now=now)
        result.large_never[query] = found.text == ""
    on_topic = [q for q in synthetic_queries(queries * 2) if q not in UNKNOWN_QUERIES][:queries]
    for query in on_topic:
        found = rv.recall(query, LARGE_SCOPE, BUDGET_TOKENS, now=now)
        result.large_on_topic.append(bool(found.text))


def run_floor_bench(
    episodes: int = 100_000,
    *,
    embedder: str = "minilm",
    queries: int = 40,
    progress: Callable[[str], None] | None = None,
) -> FloorBench:
    """Build both brains with ``embedder`` in a temporary directory and ask them (module doc)."""
    result = FloorBench(episodes)
    model = resolve_embedder(embedder)
    with tempfile.TemporaryDirectory(prefix="reverie-bench-floor-") as tmp:
        with Reverie.open(Path(tmp) / "small.db", embedder=model) as rv:
            _small(rv, result)
        if progress is not None:
            progress(f"large brain: {episodes:,} episodes, ingesting and embedding")
        started = time.perf_counter()
        with Reverie.open(Path(tmp) / "large.db", embedder=model) as rv:
            _large(rv, result, queries)
        result.build_s = round(time.perf_counter() - started, 1)
    return result


def render_floor_bench(result: FloorBench) -> str:
    data = result.to_dict()
    small, large = data["small"], data["large"]
    lines = [
        f"small brain (3 memories): paraphrases answered {sum(small['paraphrases_answered'])}"
        f"/{len(small['paraphrases_answered'])}, never-stored empty {sum(small['never_empty'])}"
        f"/{len(small['never_empty'])}",
        f"large brain ({result.episodes:,} episodes, {result.build_s} s):"
        f" never-stored -> empty {large['never_empty']:.3f} ({len(result.large_never)} questions),"
        f" on-topic answered {large['on_topic_answered']:.3f} ({len(result.large_on_topic)})",
    ]
    lines += [f"  answered, never stored: {q}" for q in large["answered_never"]]
    lines.append("passed" if result.passed else "FAILED")
    return "\n".join(lines)
