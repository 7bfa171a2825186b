"""Turns of a dialogue, recognised by who speaks, never by a category string.

An episode *has a speaker* when it says who spoke it: ``metadata["speaker"]`` (a person's name,
as a two-person chat or a transcript gives it) or ``metadata["role"]`` (a chat message's role, as
the ``openai-chat`` adapter, ``add(text)`` and ``add(messages)`` set it). It is a *turn* of a
dialogue when it also did no work (no tools, no error, no lesson, no failure): a chat turn that
ran tools or failed is a task, distilled by problem, though what its speaker stated still counts.
What the speaker said is the situation, less a leading ``"<speaker>: "`` when a transcript wrote
one; a chat turn's action is the other side's reply, which is not the speaker's word.

Every surface that carries a dialogue sets one of those keys, so dream and recall treat a chat
through any of them alike: the dialogue distiller, the speaker's durable statements
(:mod:`reverie.text.stated`), and recall's one-word need for a line of dialogue.
"""

from __future__ import annotations

from collections.abc import Sequence

from reverie.models import Episode, Outcome

__all__ = [
    "CONVERSATION",
    "has_speaker",
    "is_conversation",
    "is_named",
    "is_run_part",
    "is_turn",
    "said",
    "speaker_of",
]

CONVERSATION = "conversation"
"""The head of a dialogue page's topic key."""
SPEAKER_CHARS = 60


def _named(ep: Episode, key: str) -> str | None:
    value = ep.metadata.get(key) if isinstance(ep.metadata, dict) else None
    return value.strip()[:SPEAKER_CHARS] if isinstance(value, str) and value.strip() else None


def has_speaker(ep: Episode) -> bool:
    """Whether ``ep`` names who spoke it (``metadata.speaker`` or ``metadata.role``)."""
    return _named(ep, "speaker") is not None or _named(ep, "role") is not None


def is_named(ep: Episode) -> bool:
    """Whether a person's name says who spoke ``ep`` (a ``metadata.speaker`` other than its
    role), not a role alone: a turn between people, where a role's turn is someone telling an
    app (the ``openai-chat`` adapter writes the role as the speaker of an unnamed message)."""
    speaker, role = _named(ep, "speaker"), _named(ep, "role")
    return speaker is not None and (role is None or speaker.casefold() != role.casefold())


_WORK = frozenset({Outcome.FAILURE, Outcome.TIMEOUT})


def is_turn(ep: Episode) -> bool:
    """Whether ``ep`` is a turn of a dialogue: it has a speaker and did no work."""
    worked = bool(ep.tools or ep.error or (ep.lesson or "").strip()) or ep.outcome in _WORK
    return has_speaker(ep) and not worked


def is_run_part(ep: Episode) -> bool:
    """Whether ``ep`` is one turn of a whole run that carries its result (``metadata["run"]``
    names the run's task episode): what its speaker says is that task's request, not a
    statement of someone the brain keeps knowing. Runs of a service agent have as many
    requesters as runs, all with the one role ``user``."""
    return isinstance(ep.metadata, dict) and isinstance(ep.metadata.get("run"), str)


def is_conversation(episodes: Sequence[Episode]) -> bool:
    """True when every episode is a turn (see the module docstring)."""
    return bool(episodes) and all(is_turn(e) for e in episodes)


def speaker_of(ep: Episode) -> str:
    """Who spoke ``ep``: its speaker, else its role, else ``"someone"``."""
    return _named(ep, "speaker") or _named(ep, "role") or "someone"


def said(ep: Episode) -> str:
    """What the speaker of ``ep`` said: the situation, less a ``"<speaker>:"`` prefix."""
    text = ep.situation.strip()
    prefix = f"{speaker_of(ep)}:"
    return text[len(prefix) :].strip() if text.startswith(prefix) else text
