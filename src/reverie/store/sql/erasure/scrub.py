"""Removing erased text from free-form values, and from the store's free-form columns.

An erasure knows two kinds of things to remove. *Ids* (the erased episodes): a value that names
one is found by its tokens, never by substring, so erasing ``ep-1`` leaves ``ep-12`` alone.
*Needles* (a subject, the titles of erased pages): found anywhere in a string as a person
reads it — any letter case, composed or decomposed, compatibility forms (``ß`` and ``SS``, ``å``
and ``a`` + ring; :mod:`reverie.text.fold`) — and replaced by :data:`ERASED`. JSON values are
walked, keys included, so a needle is found whatever escaping the stored form used
(``\\u00e9``, ``\\"``).

:func:`scrub_derived` runs inside an erasure's transaction: it drops the vectors no unit uses
any more and the model answers that name an erased episode or hold erased text, empties the
plans that do, and scrubs cycle reports, journal lines and error messages of the scopes the
erasure touched.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reverie.models import Episode, Outcome
from reverie.store.records import Erasure
from reverie.store.sql.dialect import Dialect
from reverie.store.sql.plans import blank_changeset
from reverie.text.fold import find, fold

__all__ = [
    "ERASED",
    "MIN_SUBJECT",
    "Needles",
    "episode_mentions",
    "ids_per_tenant",
    "mentions_ids",
    "scrub_derived",
    "strings",
]

ERASED = "[erased]"
"""What an erased piece of text reads as where the text around it stays."""
MIN_SUBJECT = 3
"""A subject shorter than this would match too much to be meant."""
_TOKEN = re.compile(r"[A-Za-z0-9_.:@-]+")
_FAILING = frozenset({Outcome.FAILURE, Outcome.TIMEOUT})  # as dream.recommend tallies them


class Needles:
    """Strings to find and remove as a person reads them (:mod:`reverie.text.fold`: any letter
    case, composed or decomposed, compatibility forms); empty when there are none."""

    def __init__(self, texts: Iterable[str]) -> None:
        kept = sorted({t.strip() for t in texts if t and t.strip()}, key=lambda t: (-len(t), t))
        self.texts = tuple(kept)
        self._folded = tuple(dict.fromkeys(f for t in kept if (f := fold(t))))

    def __bool__(self) -> bool:
        return bool(self._folded)

    def hit(self, text: str | None) -> bool:
        """Whether ``text`` contains any needle."""
        if not text or not self._folded:
            return False
        folded = fold(text)
        return any(f in folded for f in self._folded)

    def scrub(self, text: str) -> str:
        """``text`` with every needle replaced by :data:`ERASED`."""
        if not self.hit(text):
            return text
        parts, at = [], 0
        for start, end in find(text, self._folded):
            parts += [text[at:start], ERASED]
            at = end
        return "".join([*parts, text[at:]])

    def hit_json(self, value: Any) -> bool:
        """Whether any string (key or value) inside ``value`` contains a needle."""
        return any(self.hit(s) for s in strings(value))

    def scrub_json(self, value: Any) -> Any:
        """``value`` with every needle replaced in its strings, keys included."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, list):
            return [self.scrub_json(v) for v in value]
        if isinstance(value, dict):
            return {self.scrub(str(k)): self.scrub_json(v) for k, v in value.items()}
        return value


def strings(value: Any) -> Iterable[str]:
    """Every string inside a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from strings(v)


def mentions_ids(value: Any, ids: set[str] | frozenset[str]) -> bool:
    """Whether a string inside ``value`` (a JSON value, or JSON text) names one of ``ids``."""
    if not ids:
        return False
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return any(token in ids for token in _TOKEN.findall(text))


def ids_per_tenant(episodes: Iterable[Episode]) -> dict[str, frozenset[str]]:
    """The ids of ``episodes`` per tenant, tenants in order: an id names one episode within one
    tenant only."""
    found: dict[str, set[str]] = {}
    for ep in episodes:
        found.setdefault(ep.scope.tenant, set()).add(ep.id)
    return {tenant: frozenset(ids) for tenant, ids in sorted(found.items())}


def episode_mentions(ep: Episode, needles: Needles) -> bool:
    """Whether a needle is in any free-form field of ``ep``: its texts, id, session, category,
    tools, entities, and every key and value of its metadata."""
    texts = [ep.id, ep.session_id, ep.situation, ep.action, ep.outcome_details, ep.error]
    texts += [ep.lesson, ep.category, *ep.tools, *ep.entities]
    return any(needles.hit(t) for t in texts) or needles.hit_json(ep.metadata)


# -- the store's free-form columns, inside an erasure's transaction ------------------------------


@dataclass(frozen=True)
class _Column:
    """A free-form column of a scope's rows that may quote erased text."""

    table: str
    key: str
    column: str
    is_json: bool
    area: str  # the receipt's name for it


_FREE_TEXT = (
    _Column("cycles", "id", "report", True, "cycle_reports"),
    _Column("journal", "n", "text", False, "journal"),
    _Column("dream_stats", "scope_key", "last_error", False, "stats"),
    _Column("schedule_state", "scope_key", "last_message", False, "schedule"),
)


def scrub_derived(c: Any, d: Dialect, e: Erasure, n: Counter[str]) -> None:
    """Remove what ``e`` erased from derived data (see the module docstring); counts in ``n``."""
    n["embeddings"] += c.execute(
        "DELETE FROM embeddings WHERE NOT EXISTS (SELECT 1 FROM vector_units u"
        " WHERE u.model = embeddings.model AND u.hash = embeddings.hash)"
    ).rowcount
    needles = Needles(e.needles)
    reached = e.episode_ids | {drop.page_id for drop in e.drops}
    n["model_cache"] += _scrub_cache(c, d, needles, reached)
    keys = [s.key for s in e.touched if s not in e.scopes]
    n["plans"] += _scrub_plans(c, d, e, keys, needles, reached)
    n["cycle_reports"] += _untally_tools(c, d, e)
    if needles:
        for col in _FREE_TEXT:
            n[col.area] += _scrub_column(c, d, keys, col, needles)


def _untally_tools(c: Any, d: Dialect, e: Erasure) -> int:
    """The cycle reports that counted an erased episode in their ``tool_stats`` count it no
    more: its tools' tallies drop by one (and its failure), a tally left at zero goes, so the
    report names no tool only erased evidence used. Reports of scopes erased whole are gone."""
    by_cycle: dict[str, list[Episode]] = {}
    for ep in e.episodes:
        if ep.consolidated_in and ep.tools and ep.scope not in e.scopes:
            by_cycle.setdefault(ep.consolidated_in, []).append(ep)
    changed = 0
    for cycle_id, episodes in sorted(by_cycle.items()):
        row = c.execute("SELECT report FROM cycles WHERE id = ?", (cycle_id,)).fetchone()
        report = d.json(row[0]) if row and row[0] is not None else None
        if not isinstance(report, dict) or not isinstance(report.get("tool_stats"), dict):
            continue
        stats = _without(report["tool_stats"], episodes)
        if stats != report["tool_stats"]:
            report["tool_stats"] = stats
            text = json.dumps(report, ensure_ascii=False)
            c.execute("UPDATE cycles SET report = ? WHERE id = ?", (text, cycle_id))
            changed += 1
    return changed


def _without(stats: dict[str, Any], episodes: Sequence[Episode]) -> dict[str, Any]:
    out = {tool: list(row) if isinstance(row, list) else row for tool, row in stats.items()}
    for ep in episodes:
        for tool in (t.lower() for t in ep.tools):  # as tool_stats counts them
            row = out.get(tool)
            if isinstance(row, list) and len(row) == 2:
                row[0] -= 1
                row[1] = max(0, row[1] - (ep.outcome in _FAILING))
    return {t: r for t, r in out.items() if not isinstance(r, list) or r[0] > 0}


def _scrub_cache(c: Any, d: Dialect, needles: Needles, reached: frozenset[str]) -> int:
    gone = [
        key
        for key, response in c.execute("SELECT key, response FROM model_cache").fetchall()
        if mentions_ids(value := d.json(response), reached) or needles.hit_json(value)
    ]
    for start in range(0, len(gone), 500):
        chunk = gone[start : start + 500]
        c.execute(f"DELETE FROM model_cache WHERE key IN ({','.join('?' * len(chunk))})", chunk)
    return len(gone)


def _scrub_plans(
    c: Any,
    d: Dialect,
    e: Erasure,
    keys: Sequence[str],
    needles: Needles,
    reached: frozenset[str],
) -> int:
    """Plans that hold erased content are emptied (a pending one turns stale)."""
    scrubbed = 0
    for where, params in d.members("scope_key", list(keys)):
        rows = c.execute(
            f"SELECT id, changeset, reason FROM pending_plans WHERE {where}", params
        ).fetchall()
        for plan_id, stored, reason in rows:
            data = d.json(stored)
            if not (mentions_ids(data, reached) or needles.hit_json(data) or needles.hit(reason)):
                continue
            c.execute(
                "UPDATE pending_plans SET status = CASE WHEN status = 'pending' THEN 'stale'"
                " ELSE status END, settled_at = coalesce(settled_at, ?), reason = ?,"
                " changeset = ? WHERE id = ?",
                (
                    d.ts(e.at),
                    f"its content was erased ({e.id})",
                    json.dumps(blank_changeset(data, ERASED), ensure_ascii=False),
                    plan_id,
                ),
            )
            scrubbed += 1
    return scrubbed


def _scrub_column(c: Any, d: Dialect, keys: Sequence[str], col: _Column, needles: Needles) -> int:
    scrubbed = 0
    for where, params in d.members("scope_key", list(keys)):
        rows = c.execute(
            f"SELECT {col.key}, {col.column} FROM {col.table}"
            f" WHERE {where} AND {col.column} IS NOT NULL",
            params,
        ).fetchall()
        for key, stored in rows:
            value = d.json(stored) if col.is_json else stored
            if not (needles.hit_json(value) if col.is_json else needles.hit(value)):
                continue
            new = needles.scrub_json(value) if col.is_json else needles.scrub(value)
            text = json.dumps(new, ensure_ascii=False) if col.is_json else new
            c.execute(f"UPDATE {col.table} SET {col.column} = ? WHERE {col.key} = ?", (text, key))
            scrubbed += 1
    return scrubbed
