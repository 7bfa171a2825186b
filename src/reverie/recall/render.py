"""The prompt section recall produces, one line per packed unit.

The section is priced line by line: :func:`line_tokens` is what one item adds (its line and the
newline before it) and :func:`header_tokens` what the section costs before any item. Because the
token estimate is additive over lines (:mod:`reverie.recall.tokens`) and every line is built
without leading or trailing whitespace or inner newlines, ``count_tokens(render(items))`` is
exactly ``header_tokens(scope) + sum(line_tokens(i) for i in items)``; :func:`reverie.recall.pack`
packs against that sum.

Stored text is untrusted (DESIGN invariant 5): whitespace, newlines included, is collapsed to
single spaces, so an episode cannot open a fake markdown section or fake instructions of its own
inside the memory block; every line is a bullet that names the evidence it came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from reverie.models import RecallItem, Scope, utc
from reverie.recall.tokens import count_tokens

__all__ = [
    "HEADER_NOTE",
    "format_date",
    "header",
    "header_tokens",
    "line_price",
    "line_tokens",
    "render",
    "render_line",
]

HEADER_NOTE = "Knowledge distilled from past episodes; cite ids when relying on them."
MAX_CITED = 3
"""Citations shown per line; the rest are counted ("+2"). ``RecallItem.citations`` keeps all."""


def header(scope: Scope | None = None) -> str:
    """The two lines that open a non-empty section."""
    title = f"## Reverie memory ({scope.key})" if scope is not None else "## Reverie memory"
    return f"{title}\n{HEADER_NOTE}"


def header_tokens(scope: Scope | None = None) -> int:
    return count_tokens(header(scope))


def render(items: Sequence[RecallItem], *, scope: Scope | None = None) -> str:
    """The prompt section for ``items`` in the order given; ``""`` when there are none."""
    if not items:
        return ""
    return "\n".join([header(scope), *(render_line(item) for item in items)])


def render_line(item: RecallItem) -> str:
    """One bullet: ``- [lesson, 3 November 2026] Title: claim [ep-1, ep-4]`` for a page claim
    (the date left out when the title holds it), ``- [episode ID, 2 November 2026, failure]
    excerpt`` for an episode (an ``unknown`` outcome left out)."""
    text = _flat(item.text)
    ident, status = _flat(item.id), _flat(item.status or "")
    if item.kind == "episode":
        status = "" if status == "unknown" else status  # an unknown outcome says nothing
        label = ", ".join(p for p in (f"episode {ident}", _date(item), status) if p)
        return f"- [{label}] {text}".rstrip()
    state = f", {status}" if status and status != "active" else ""
    title = _flat(item.title)
    restated = item.role is not None and _restates(text, title)  # a title drawn from a claim
    body = f"{title}: {text}" if title and text and not restated else text or title
    date = _date(item)
    date = "" if date and date in title else date  # the title already dates it
    kind = _flat(item.page_kind or "") or f"page {ident}"
    cited = _cited(item.citations)
    line = f"- [{kind}{state}{', ' + date if date else ''}] {body}".rstrip()
    return line + (f" [{cited}]" if cited else "")


def _restates(text: str, title: str) -> bool:
    """Whether a claim already says its page's title (a title drawn from the lead lesson, or
    the situation of a "<situation>: <fix>" title), so the line need not repeat it."""
    head = title.rstrip(" .…").lower()
    lead, sep, _ = head.partition(": ")
    said = text.lower()
    return bool(head) and (head[:60] in said or (bool(sep) and len(lead) >= 20 and lead in said))


def line_tokens(item: RecallItem) -> int:
    """What ``item`` adds to a section: its line plus the newline that joins it."""
    return line_price(render_line(item))


def line_price(line: str) -> int:
    """What a rendered ``line`` adds to a section: its tokens plus the joining newline."""
    return count_tokens(line) + 1


def _flat(text: str) -> str:
    return " ".join(text.split())


def format_date(when: datetime) -> str:
    """An absolute date as people write it, ``"8 May 2023"`` (UTC)."""
    day = utc(when)
    return f"{day.day} {day:%B %Y}"


def _date(item: RecallItem) -> str:
    return format_date(item.created_at) if item.created_at else ""


def _cited(ids: Sequence[str]) -> str:
    shown = ", ".join(f for f in (_flat(i) for i in ids[:MAX_CITED]) if f)
    more = len(ids) - MAX_CITED
    if not shown:
        return ""
    return shown + (f" +{more}" if more > 0 else "")
