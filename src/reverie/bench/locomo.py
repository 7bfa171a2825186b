"""``reverie bench locomo``: recall quality on the LoCoMo long-conversation benchmark.

The data (CC BY-NC 4.0) is never part of Reverie; give its path. Per conversation, in one
in-memory brain (scope ``locomo/<sample_id>``):

1. each session is added as a user's ``add(messages)`` would add it: one ``user`` message per
   turn, named by its speaker, its text plus ``[shares <image caption>]`` when the turn carries
   a photo, dated the session's date-time (the ``openai-chat`` adapter makes each a turn with
   its speaker); a dream cycle runs after each session, an hour after it, as a deployed agent
   would dream between conversations;
2. every question of categories 1–4 (5, adversarial, has no answer) is recalled after the last
   session. The budget unit is whitespace words of the context, for every system alike: a
   system's lines are taken in its own order while they fit, then the context is cut at the
   budget. Reverie's lines are the quoted lines of ``Recall.text``, without header or fence.

Systems, all in the same run: ``reverie`` (pages, then episodes as the complement),
``pages-only`` and ``episodes-only`` (the ablations), and ``bm25``: Okapi BM25 (k1 1.2, b 0.75)
over the raw turns (``"<speaker> (<date>): <text>"``), best first.

Metrics, per category and overall, over content tokens (lowercased letters-and-digits words,
stop words removed): **answer-token recall**, the share of the answer's tokens present in the
context; **evidence-text recall**, the share of gold evidence turns at least 60% of whose
tokens are present in the context.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rich.table import Table

from reverie.bench.lexical import BM25, content_tokens, cut_words
from reverie.config import Config, RecallConfig
from reverie.embed import Embedder
from reverie.engine import Reverie
from reverie.models import utc
from reverie.recall.render import format_date, quoted_lines

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "CATEGORIES",
    "SYSTEMS",
    "Conversation",
    "LocomoResult",
    "Score",
    "Turn",
    "answer_recall",
    "content_tokens",
    "cut_words",
    "evidence_recall",
    "load_locomo",
    "parse_session_time",
    "render_locomo",
    "run_locomo",
]

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SYSTEMS = ("reverie", "pages-only", "episodes-only", "bm25")
EVIDENCE_SHARE = 0.6
_SESSION = re.compile(r"session_(\d+)$")
_DIA = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    when: datetime

    @property
    def said(self) -> str:
        """What the turn says, the photo it shares included."""
        shared = f" [shares {self.caption}]" if self.caption else ""
        return f"{self.text}{shared}"


@dataclass(frozen=True)
class Question:
    index: int
    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    index: int
    sample_id: str
    sessions: list[list[Turn]]
    questions: list[Question]

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s]


# -- loading ------------------------------------------------------------------------------------


def parse_session_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → a naive datetime (treated as UTC)."""
    return datetime.strptime(" ".join(text.replace(",", "").split()), "%I:%M %p on %d %B %Y")


def _normal_dia(raw: str) -> list[str]:
    """Normalise malformed evidence ids (``'D8:6; D9:17'``, ``'D:11:26'``, ``'D30:05'``)."""
    return [f"D{int(a)}:{int(b)}" for a, b in _DIA.findall(raw)]


def _sessions(conv: dict[str, Any]) -> list[list[Turn]]:
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.match(k)))
    sessions = []
    for n in numbers:
        start = parse_session_time(conv[f"session_{n}_date_time"])
        turns = [
            Turn(
                dia_id=_normal_dia(t["dia_id"])[0],
                speaker=t["speaker"],
                text=t.get("text", ""),
                caption=t.get("blip_caption"),
                when=start + timedelta(seconds=i),
            )
            for i, t in enumerate(conv[f"session_{n}"])
        ]
        sessions.append(turns)
    return sessions


def load_locomo(path: Path, only: range | None = None) -> list[Conversation]:
    """The conversations of a LoCoMo JSON file (those whose position is in ``only``)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, item in enumerate(data):
        if only is not None and i not in only:
            continue
        questions = [
            Question(j, q["question"], str(q.get("answer", "")),
                     tuple(e for raw in q.get("evidence", []) for e in _normal_dia(raw)),
                     int(q["category"]))
            for j, q in enumerate(item["qa"])
            if int(q["category"]) in CATEGORIES
        ]  # fmt: skip
        out.append(
            Conversation(
                i, item.get("sample_id", f"conv-{i}"), _sessions(item["conversation"]), questions
            )
        )
    return out


# -- metrics ------------------------------------------------------------------------------------


def answer_recall(answer: str, context: set[str]) -> float | None:
    """Share of the answer's content tokens in ``context``; None when it has none."""
    wanted = set(content_tokens(answer))
    return sum(t in context for t in wanted) / len(wanted) if wanted else None


def evidence_recall(evidence: Sequence[Turn], context: set[str]) -> float | None:
    """Share of ``evidence`` turns with ≥ 60% of their content tokens in ``context``."""
    found = 0
    counted = 0
    for turn in evidence:
        tokens = set(content_tokens(turn.said))
        if tokens:
            counted += 1
            found += sum(t in context for t in tokens) >= EVIDENCE_SHARE * len(tokens)
    return found / counted if counted else None


def baseline_line(turn: Turn) -> str:
    return f"{turn.speaker} ({format_date(turn.when)}): {turn.said}"


# -- running ------------------------------------------------------------------------------------


@dataclass
class Score:
    answer: list[float] = field(default_factory=list)
    evidence: list[float] = field(default_factory=list)

    def add(self, a: float | None, e: float | None) -> None:
        if a is not None:
            self.answer.append(a)
        if e is not None:
            self.evidence.append(e)

    @staticmethod
    def _mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 4) if values else 0.0

    def figures(self) -> dict[str, float]:
        return {
            "answer_recall": self._mean(self.answer),
            "evidence_recall": self._mean(self.evidence),
            "n": len(self.answer),
        }


@dataclass
class LocomoResult:
    budget: int
    conversations: list[int]
    questions: int
    pages: int
    episodes: int
    embedder: str
    scores: dict[str, dict[str, Score]] = field(default_factory=dict)

    def figure(self, system: str, category: str = "overall") -> dict[str, float]:
        return self.scores[system][category].figures()

    def to_json(self) -> str:
        body = {
            "budget_words": self.budget, "conversations": self.conversations,
            "questions": self.questions, "pages": self.pages, "episodes": self.episodes,
            "embedder": self.embedder,
            "systems": {s: {c: sc.figures() for c, sc in cats.items()}
                        for s, cats in self.scores.items()},
        }  # fmt: skip
        return json.dumps(body, indent=2)


def _messages(session: Sequence[Turn]) -> list[dict[str, Any]]:
    return [{"role": "user", "name": t.speaker, "content": t.said} for t in session]


def _reverie_lines(
    rv: Reverie, scope: str, now: datetime, recall: RecallConfig, question: str, budget: int
) -> list[str]:
    rv.config = Config(dream=rv.config.dream, recall=recall)
    result = rv.recall(question, scope, budget * 4, now=now)
    return quoted_lines(result.text)


_System = Callable[[str, int], list[str]]


def _systems(
    rv: Reverie, bm25: BM25, turns: list[Turn], scope: str, now: datetime
) -> dict[str, _System]:
    base = rv.config.recall
    variants = {
        "reverie": base,
        "pages-only": RecallConfig(**{**base.__dict__, "include_episodes": False}),
        "episodes-only": RecallConfig(**{**base.__dict__, "include_pages": False}),
    }
    out: dict[str, _System] = {
        name: partial(_reverie_lines, rv, scope, now, cfg) for name, cfg in variants.items()
    }
    out["bm25"] = lambda q, b: [baseline_line(turns[i]) for i in bm25.rank(q)]
    return out


def _dream_sessions(rv: Reverie, conv: Conversation, scope: str) -> None:
    for session in conv.sessions:
        rv.add(_messages(session), scope=scope, now=utc(session[0].when))
        rv.dream(scope, now=utc(session[-1].when + timedelta(hours=1)))


def _questions(conv: Conversation) -> Iterator[Question]:
    yield from conv.questions


def run_locomo(
    path: Path,
    *,
    conversations: range | None = None,
    budget: int = 250,
    contexts: TextIO | None = None,
    embedder: Embedder | None = None,
) -> LocomoResult:
    """Run the benchmark; see the module docstring. ``contexts`` receives one JSON line per
    question and system."""
    convs = load_locomo(path, conversations)
    result = LocomoResult(
        budget, [c.index for c in convs], 0, 0, 0, embedder.model_id if embedder else "none"
    )
    result.scores = {s: defaultdict(Score) for s in SYSTEMS}
    for conv in convs:
        scope = f"locomo/{conv.sample_id}"
        with Reverie.open(":memory:", embedder=embedder) as rv:
            _dream_sessions(rv, conv, scope)
            stats = rv.status(scope)
            result.pages += stats.active_pages
            result.episodes += stats.episodes
            turns = conv.turns
            by_id = {t.dia_id: t for t in turns}
            now = utc(turns[-1].when + timedelta(days=1))
            systems = _systems(rv, BM25([baseline_line(t) for t in turns]), turns, scope, now)
            for q in conv.questions:
                result.questions += 1
                evidence = [by_id[e] for e in q.evidence if e in by_id]
                for name, lines_for in systems.items():
                    context = cut_words(lines_for(q.question, budget), budget)
                    tokens = set(content_tokens(context))
                    a, e = answer_recall(q.answer, tokens), evidence_recall(evidence, tokens)
                    for cat in (CATEGORIES[q.category], "overall"):
                        result.scores[name][cat].add(a, e)
                    if contexts is not None:
                        row = {"conversation": conv.index, "qa": q.index, "system": name,
                               "question": q.question, "context": context}  # fmt: skip
                        contexts.write(json.dumps(row, ensure_ascii=False) + "\n")
    return result


def render_locomo(result: LocomoResult, console: Console) -> None:
    """A table of answer-token / evidence recall per system and category."""
    title = (
        f"reverie bench locomo · {result.budget} words · conversations {result.conversations}"
        f" · {result.questions} questions · {result.pages} pages · embedder {result.embedder}"
    )
    table = Table(title=title, title_justify="left")
    cats = [*CATEGORIES.values(), "overall"]
    table.add_column("system")
    for cat in cats:
        table.add_column(f"{cat}\nanswer / evidence", justify="right")
    for system in SYSTEMS:
        cells = []
        for cat in cats:
            f = result.scores[system][cat].figures()
            cells.append(f"{f['answer_recall']:.3f} / {f['evidence_recall']:.3f}")
        table.add_row(system, *cells)
    console.print(table)
