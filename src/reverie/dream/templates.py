"""Template lessons: text in the lesson field that teaches nothing.

Agents and their frameworks fill the lesson field with boilerplate ("Approach worked; remember
this pattern", "N/A", "Task completed successfully"). Such a lesson never becomes a claim and
never makes an episode knowledge. A lesson is a template when its normalised words are one of
the known phrases, or when every word it has is generic: a stop word or one of
:data:`GENERIC_WORDS` (words about the outcome or the act of remembering, none about the work).
"""

from __future__ import annotations

import re
from functools import lru_cache

from reverie.dream.cluster import STOP_WORDS

__all__ = ["GENERIC_WORDS", "is_template_lesson"]

_WORDS = re.compile(r"[^\W_]+")
_TEMPLATE_TEXTS = (
    "n a",
    "na",
    "none",
    "null",
    "nil",
    "ok",
    "okay",
    "tbd",
    "todo",
)
GENERIC_WORDS = frozenset(
    {
     "approach", "approaches", "worked", "works", "work", "working", "success", "successful",
     "successfully", "succeeded", "succeed", "fine", "good", "great", "ok", "okay", "done",
     "complete", "completed", "completes", "finished", "task", "tasks", "remember", "remembered",
     "pattern", "patterns", "lesson", "lessons", "learned", "learnt", "nothing", "notable",
     "new", "issue", "issues", "problem", "problems", "fail", "failed", "failure", "error",
     "errors", "expected", "planned", "usual", "normal", "normally", "again", "keep", "same",
     "note", "noted", "everything", "all", "went", "smoothly", "well", "as", "it", "this",
     "that", "step", "steps", "result", "results", "outcome", "fixed", "resolved", "handled",
     "thing", "things",
    }
)  # fmt: skip


def _normal_words(text: str) -> list[str]:
    return _WORDS.findall(text.lower())


_TEMPLATES = frozenset(" ".join(_normal_words(t)) for t in _TEMPLATE_TEXTS)


@lru_cache(maxsize=1 << 14)
def is_template_lesson(text: str | None) -> bool:
    """True for a lesson that says nothing ("approach worked", "N/A.", "", ...)."""
    words = _normal_words(text or "")
    if not words or " ".join(words) in _TEMPLATES:
        return True
    return all(w in GENERIC_WORDS or w in STOP_WORDS for w in words)
