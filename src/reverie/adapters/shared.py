"""What every adapter shares: the result shape, JSON lines, text extraction, failure detection."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from reverie.hashing import short_id
from reverie.jsonl import parse_line
from reverie.models import Scope

__all__ = ["Lines", "Parsed", "episode_id", "excerpt", "looks_failed", "parse_jsonl", "text_of"]

Lines = list[tuple[int, str]]

_FAILED = re.compile(
    r"^\s*(error\b|fatal\b|traceback \(most recent call last\)|exception\b|\w+(error|exception):)",
    re.IGNORECASE,
)


@dataclass
class Parsed:
    """Episode objects, the 1-based line each came from, and the records that were not used."""

    items: list[dict[str, Any]] = field(default_factory=list)
    line_of: list[int] = field(default_factory=list)
    failures: list[tuple[int, str, str]] = field(default_factory=list)

    def add(self, line: int, item: dict[str, Any]) -> None:
        self.items.append(item)
        self.line_of.append(line)

    def fail(self, line: int, field_name: str, reason: str) -> None:
        self.failures.append((line, field_name, reason))

    def as_tuple(self) -> tuple[list[dict[str, Any]], list[int], list[tuple[int, str, str]]]:
        return self.items, self.line_of, self.failures


def load_objects(lines: Lines, parsed: Parsed) -> list[tuple[int, dict[str, Any]]]:
    """The lines that are JSON objects; the others are reported."""
    found: list[tuple[int, dict[str, Any]]] = []
    for number, line in lines:
        try:
            value = parse_line(line)
        except ValueError as exc:
            parsed.fail(number, "json", str(exc))
            continue
        if not isinstance(value, dict):
            parsed.fail(number, "input", f"expected an object, got {type(value).__name__}")
            continue
        found.append((number, value))
    return found


def parse_jsonl(lines: Lines) -> Parsed:
    """The generic format: each line is already an episode object."""
    parsed = Parsed()
    for number, value in load_objects(lines, parsed):
        parsed.add(number, value)
    return parsed


def text_of(content: Any) -> str:
    """Plain text of a message content: a string, or a list of text blocks / strings."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text for block in content for text in _block_text(block) if text)
    if isinstance(content, dict):
        return text_of(content.get("text") or content.get("content"))
    return str(content)


def _block_text(block: Any) -> list[str]:
    if isinstance(block, str):
        return [block]
    if isinstance(block, dict) and block.get("type", "text") in (
        "text",
        "output_text",
        "input_text",
    ):
        return [str(block.get("text", ""))]
    return []


def excerpt(text: str, limit: int) -> str:
    flat = text.strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def looks_failed(text: str) -> bool:
    """A tool result that reads as an error (used when the record has no explicit flag)."""
    if _FAILED.match(text):
        return True
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return False
    return isinstance(value, dict) and bool(value.get("error"))


def compact(value: Any) -> str:
    return (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )


def episode_id(scope: Scope, source: str, *parts: str) -> str:
    """A deterministic id: the same record ingested twice into ``scope`` is one episode. The
    scope is part of it, as it is of an id derived from an episode's content
    (:meth:`~reverie.models.Episode.content_id`): ids are a tenant's own, and one transcript
    ingested into two scopes gives two episodes, neither naming the other's."""
    return short_id("ep", scope.key, source, *parts, length=24)
