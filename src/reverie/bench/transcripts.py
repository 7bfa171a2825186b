"""``reverie bench transcripts``: real agent runs with known results, read as chat transcripts.

The input is one or more files of published runs, tau-bench's or tau2-bench's
(:mod:`reverie.bench.transcripts_read`), read where they lie and never copied: each run has a
task id, a trial, a reward, its messages (OpenAI chat messages with tool calls) and the
ground-truth actions of its task. Each run becomes one ``openai-chat`` transcript line
carrying its reward as the result, read through the real adapter, and the brain dreams
nightly: the runs are spread over ``nights`` days and a cycle runs after each.

Figures:

* **pages** — active pages of the scope;
* **purity** — a run's *kind* is the sorted set of its task's ground-truth write actions (names
  not starting with a read verb, :data:`READ_PREFIXES`); a page's purity is the share of the
  runs it cites that are of its most common kind; the figure is their mean weighted by cited
  runs;
* **utterance titles** — titles that are a verbatim prefix of a user message, quote
  :data:`QUOTED_WORDS` or more of its words in a row (case and punctuation aside), or open
  with a salutation, with or without a speaker's label before them (:data:`SALUTATIONS`: the
  measure, not a mechanism of the product);
* **coverage** — the share of runs some page cites.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console

from reverie import Reverie
from reverie.adapters import parse
from reverie.bench.transcripts_read import read_runs
from reverie.embed import Embedder
from reverie.models import Page, Scope

__all__ = ["TranscriptsResult", "render_transcripts", "run_transcripts"]

SCOPE = "bench/transcripts"
START = datetime(2026, 1, 5, 8, tzinfo=UTC)
READ_PREFIXES = ("get_", "search_", "list_", "calculate", "think", "find_")
SPEAKER_LABEL = 60
QUOTED_WORDS = 3
"""A title that runs this many of a user's words in a row, or more, quotes the user."""
SALUTATIONS = ("hi", "hello", "hey", "good morning", "good afternoon", "good evening", "greetings")


@dataclass
class PageRow:
    title: str
    kind: str
    runs: int
    majority: str
    purity: float
    claims: list[str] = field(default_factory=list)
    cited: list[str] = field(default_factory=list)


@dataclass
class TranscriptsResult:
    runs: int
    kinds: int
    pages: int
    purity: float
    utterance_titles: int
    coverage: float
    rows: list[PageRow]

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def task_kind(run: dict[str, Any]) -> str:
    """The sorted set of the task's ground-truth write actions (``-`` when it has none)."""
    actions = run.get("info", {}).get("task", {}).get("actions", [])
    names = sorted({a["name"] for a in actions if not a["name"].startswith(READ_PREFIXES)})
    return "+".join(names) or "-"


def _line(run: dict[str, Any], at: datetime) -> str:
    chat = {
        "id": f"task{run['task_id']}-trial{run.get('trial', 0)}",
        "messages": run["traj"],
        "reward": float(run["reward"]),
        "created": at.timestamp(),
    }
    return json.dumps(chat, ensure_ascii=False)


def _user_texts(run: dict[str, Any]) -> list[str]:
    return [str(m.get("content") or "") for m in run["traj"] if m.get("role") == "user"]


def is_utterance_title(title: str, user_texts: Sequence[str]) -> bool:
    """Whether a title opens with a greeting, is the start of a user's message, or quotes
    :data:`QUOTED_WORDS` or more of a message's words in a row, also once a speaker's label
    (``"user: "``) is taken off."""
    head = title.rstrip("…").strip().lower()
    label, colon, rest = head.partition(": ")
    heads = [head, rest.strip()] if colon and len(label) <= SPEAKER_LABEL else [head]
    texts = [" ".join(t.split()).lower() for t in user_texts]
    spoken = [f" {' '.join(_WORDS.findall(t))} " for t in texts]

    def quoted(h: str) -> bool:
        words = _WORDS.findall(h)
        return len(words) >= QUOTED_WORDS and any(f" {' '.join(words)} " in t for t in spoken)

    return any(
        h.startswith(SALUTATIONS) or (h and any(t.startswith(h) for t in texts)) or quoted(h)
        for h in heads
    )


_WORDS = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def _dream(rv: Reverie, runs: Sequence[dict[str, Any]], nights: int) -> dict[str, str]:
    """Ingest the runs night by night, a cycle after each; ``episode id -> run key``."""
    scope = Scope.parse(SCOPE)
    owner: dict[str, str] = {}
    per_night = max(1, -(-len(runs) // nights))
    for night in range(nights):
        batch = runs[night * per_night : (night + 1) * per_night]
        if not batch:
            break
        day = START + timedelta(days=night)
        lines = [(i + 1, _line(r, day + timedelta(minutes=5 * i))) for i, r in enumerate(batch)]
        parsed = parse("openai-chat", lines, scope=scope)
        for item in parsed.items:
            owner[item["id"]] = item["metadata"]["conversation"]
        rv.ingest(parsed.items, scope=SCOPE)
        rv.dream(SCOPE, now=day + timedelta(hours=20))
    return owner


def _row(page: Page, owner: dict[str, str], kind_of: dict[str, str]) -> PageRow:
    cited = {owner[e] for c in page.revision.claims for e in c.episode_ids if e in owner}
    kinds = Counter(kind_of[r] for r in cited)
    majority, top = kinds.most_common(1)[0] if kinds else ("-", 0)
    return PageRow(
        title=page.title,
        kind=str(page.revision.kind),
        runs=len(cited),
        majority=majority,
        purity=top / len(cited) if cited else 0.0,
        claims=[f"[{c.role}] {c.text}" for c in page.revision.claims],
        cited=sorted(cited),
    )


def run_transcripts(
    paths: Sequence[Path],
    *,
    nights: int = 4,
    embedder: Embedder | None = None,
    limit: int | None = None,
) -> TranscriptsResult:
    """Ingest the runs at ``paths`` through the chat adapter, dream nightly, measure the pages."""
    runs = read_runs(paths)[:limit]
    kind_of = {f"task{r['task_id']}-trial{r.get('trial', 0)}": task_kind(r) for r in runs}
    with (
        tempfile.TemporaryDirectory() as tmp,
        Reverie.open(Path(tmp) / "b.db", embedder=embedder) as rv,
    ):
        owner = _dream(rv, runs, nights)
        rows = [_row(p, owner, kind_of) for p in rv.pages(SCOPE)]
    texts = [t for r in runs for t in _user_texts(r)]
    weighted = sum(r.purity * r.runs for r in rows)
    cited = sum(r.runs for r in rows)
    covered = {run for row in rows for run in row.cited}
    return TranscriptsResult(
        runs=len(runs),
        kinds=len(set(kind_of.values())),
        pages=len(rows),
        purity=round(weighted / cited, 3) if cited else 0.0,
        utterance_titles=sum(is_utterance_title(r.title, texts) for r in rows),
        coverage=round(len(covered) / len(runs), 3) if runs else 0.0,
        rows=rows,
    )


def render_transcripts(result: TranscriptsResult, console: Console, claims: int = 0) -> None:
    console.print(
        f"runs {result.runs} of {result.kinds} kinds · pages {result.pages} · purity "
        f"{result.purity:.3f} (target ≥ 0.8) · utterance titles {result.utterance_titles} "
        f"(target 0) · coverage {result.coverage:.3f}"
    )
    for row in sorted(result.rows, key=lambda r: -r.runs):
        console.print(f"  {row.purity:.2f} {row.runs:>3} runs  {row.title}  ({row.majority})")
        for text in row.claims[:claims]:
            console.print(f"        {text[:300]}")
