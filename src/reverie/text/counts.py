"""Counts in words a person reads: "1 episode", "2 episodes", "1 line failed"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, the noun in the plural unless ``n`` is one (``plural`` where adding
    an s is wrong: "1 entry", "2 entries")."""
    word = noun if n == 1 else (plural or noun + "s")
    return f"{n:,} {word}"
