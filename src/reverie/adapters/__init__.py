"""Ingest adapters: turn other formats into episodes (``reverie ingest --format ...``).

Every adapter takes the non-blank lines of a file as ``(line number, text)`` and returns a
:class:`Parsed`: the episode objects, the line each came from, and ``(line, field, reason)`` for
every record it could not use. Nothing is dropped silently: a record of a kind the adapter does
not know is reported, not skipped. Episode ids derive from the scope and the content (source,
session, call id), so ingesting the same transcript twice into one scope stores nothing new.

Formats: ``jsonl`` (one episode object per line), ``openai-chat`` (one chat transcript per line,
``{"messages": [...]}``; one episode per user turn) and ``coding-agent`` (a coding agent's session
log, one event per line; one episode per tool call, with its result as outcome and error).
"""

from __future__ import annotations

from reverie.adapters.coding_agent import parse_session
from reverie.adapters.openai_chat import parse_chats
from reverie.adapters.shared import Lines, Parsed, parse_jsonl
from reverie.errors import InvalidInput
from reverie.models import Scope

__all__ = ["FORMATS", "Lines", "Parsed", "parse"]

FORMATS = ("jsonl", "openai-chat", "coding-agent")


def parse(fmt: str, lines: Lines, *, scope: Scope | None = None) -> Parsed:
    """Episodes from ``lines`` in format ``fmt``. Transcripts carry no scope: every format but
    ``jsonl`` needs ``scope``, the one their episodes are stored in and their ids derive from."""
    if fmt not in FORMATS:
        raise InvalidInput("--format", f"{fmt!r} is not one of {', '.join(FORMATS)}")
    if fmt == "jsonl":
        return parse_jsonl(lines)
    if scope is None:
        raise InvalidInput("--scope", f"--format {fmt} needs --scope: transcripts name no scope")
    if fmt == "openai-chat":
        return parse_chats(lines, scope)
    return parse_session(lines, scope)
