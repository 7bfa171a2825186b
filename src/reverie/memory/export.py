"""Training-data export: every active page as one chat example, in JSON lines.

Each row is ``{"messages": [system, user, assistant], "metadata": {...}}`` — the format OpenAI,
Hugging Face TRL and most fine-tuning tools read. The *user* turn holds the raw episodes the page
cites (archived ones read back from the cold tier), the *assistant* turn the page as markdown, so
a model learns to distill experience the way the brain did.

Deterministic: the same brain gives the same bytes — scopes by key, pages by id, episodes by
``seq``, keys sorted, no export timestamp. Text leaves the process, so every turn goes through
:func:`reverie.redaction.redact` (DESIGN invariant 5). The file is written atomically.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from reverie.dream.archive import resolve
from reverie.errors import each_scope, raise_failures
from reverie.files import write_atomically
from reverie.memory.export_records import record_export
from reverie.models import Episode, Page, Scope
from reverie.redaction import DEFAULT, Redactor
from reverie.store.base import BrainStore

__all__ = ["SYSTEM_PROMPT", "TrainingExport", "training_rows", "write_training"]

SYSTEM_PROMPT = (
    "You turn an AI agent's raw experience into durable knowledge. Read the episodes (what the"
    " situation was, what was done, how it ended, any lesson) and write one knowledge page:"
    " a title, then one claim per line, each claim citing the ids of the episodes it rests on"
    " in brackets. Say only what the episodes support."
)


@dataclass(frozen=True)
class TrainingExport:
    path: Path
    rows: int
    scopes: int
    episodes: int
    bytes: int


def _episode_block(ep: Episode) -> str:
    lines = [f"### {ep.id} ({ep.created_at:%Y-%m-%d}, {ep.outcome})"]
    for label, value in (
        ("Situation", ep.situation),
        ("Action", ep.action),
        ("Outcome", ep.outcome_details),
        ("Error", ep.error),
        ("Lesson", ep.lesson),
        ("Tools", ", ".join(ep.tools)),
    ):
        if value:
            lines.append(f"{label}: {value}")
    return "\n".join(lines)


def _row(page: Page, episodes: Sequence[Episode], redactor: Redactor) -> dict[str, Any]:
    user = f"Episodes of {page.scope} about `{page.topic_key}`:\n\n" + "\n\n".join(
        _episode_block(ep) for ep in episodes
    )
    return {
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": redactor.text(user)},
            {"role": "assistant", "content": redactor.text(page.to_markdown())},
        ],
        "metadata": {
            "scope": page.scope.key,
            "page_id": page.id,
            "revision": page.revision.number,
            "hash": page.revision.hash,
            "kind": str(page.kind),
            "confidence": page.confidence,
            "episodes": [ep.id for ep in episodes],
        },
    }


def _scope_rows(
    store: BrainStore, scope: Scope, min_confidence: float, redactor: Redactor
) -> list[dict[str, Any]]:
    rows = []
    for page in sorted(store.pages(scope, ["active"]), key=lambda p: p.id):
        if page.confidence < min_confidence:
            continue
        episodes = resolve(store, store.episodes(page.citations, tenant=scope.tenant))
        if episodes:
            rows.append(_row(page, episodes, redactor))
    return rows


def _sorted_scopes(store: BrainStore, scopes: Sequence[Scope] | None) -> list[Scope]:
    return sorted(scopes if scopes is not None else store.scopes(), key=lambda s: s.key)


def training_rows(
    store: BrainStore,
    scopes: Sequence[Scope] | None = None,
    *,
    min_confidence: float = 0.0,
    redactor: Redactor = DEFAULT,
) -> Iterator[dict[str, Any]]:
    """One chat row per active page (with at least ``min_confidence``), deterministic order."""
    for scope in _sorted_scopes(store, scopes):
        yield from _scope_rows(store, scope, min_confidence, redactor)


def write_training(
    store: BrainStore,
    out: Path,
    scopes: Sequence[Scope] | None = None,
    *,
    min_confidence: float = 0.0,
    redactor: Redactor = DEFAULT,
    recorded_at: datetime | None = None,
) -> TrainingExport:
    """Write :func:`training_rows` to ``out`` (atomically) and say what was written. With
    ``recorded_at`` (and a store that keeps them) the file is remembered as an export of the
    scopes it holds rows of, so an erasure's receipt names it: once written, its rows are out of
    Reverie's reach (docs/privacy.md).

    A scope that cannot be exported (an archive bundle it cites is missing, say) is left out
    and the others are written; then :class:`~reverie.errors.ScopesFailed` names it, with the
    export of the rest as ``done``.
    """
    chosen = _sorted_scopes(store, scopes)
    per_scope, failures = each_scope(
        chosen, lambda s: _scope_rows(store, s, min_confidence, redactor), "export training"
    )
    rows = [row for scope_rows in per_scope for row in scope_rows]
    text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows)
    data = text.encode()
    write_atomically(out, data)
    exported = sorted({r["metadata"]["scope"] for r in rows})
    record_export(store, out, "training", [Scope.parse(key) for key in exported], recorded_at)
    done = TrainingExport(
        path=out,
        rows=len(rows),
        scopes=len({r["metadata"]["scope"] for r in rows}),
        episodes=sum(len(r["metadata"]["episodes"]) for r in rows),
        bytes=len(data),
    )
    return raise_failures("export training", failures, done)
