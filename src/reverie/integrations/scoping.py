"""Whose memory one call reads and writes: a default scope, refined by the framework's context.

One agent object serves many users: the framework hands each run (or tool call) a context of
the application's own (the OpenAI Agents SDK's ``RunContextWrapper.context``, Pydantic AI's
``deps``, a LangGraph namespace, a LlamaIndex session, a CrewAI crew's user). The integrations
read from it mem0's names, so the same context object serves both:

* ``user_id`` and ``agent_id`` name the scope's user and agent, ``tenant`` its tenant;
* ``run_id`` is the episode's session (a run is not a brain of its own);
* ``scope`` gives the whole scope at once (``"tenant/agent/user"``, a mapping or a
  :class:`~reverie.models.Scope`); a context that is itself a ``Scope`` means that scope.

Each is read as a mapping key or an attribute; a missing or ``None`` one keeps the default's.
So a fixed scope is what a call gets when its context names nothing, and a context that names a
user always lands in that user's scope (invariant 7), never in the shared default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reverie.errors import InvalidScope
from reverie.models import Scope, ScopeLike

__all__ = ["CallScope", "call_scope", "field_of"]

_PARTS = {"tenant": "tenant", "agent_id": "agent", "user_id": "user"}


@dataclass(frozen=True)
class CallScope:
    """The scope of one call and the run (session) its episodes belong to."""

    scope: Scope
    run_id: str | None = None


def field_of(context: object, name: str) -> Any:
    """``context[name]`` of a mapping, else ``context.name``; ``None`` when it has neither."""
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def call_scope(default: ScopeLike | None, context: object = None) -> CallScope:
    """The scope ``context`` names over ``default`` (module docstring); :class:`InvalidScope`
    when neither names a tenant and an agent."""
    if isinstance(context, Scope):
        return CallScope(context)
    whole = field_of(context, "scope")
    base = whole if whole is not None else default
    parts = Scope.parse(base).model_dump(exclude_none=True) if base is not None else {}
    for name, part in _PARTS.items():
        given = _text(field_of(context, name))
        if given is not None:
            parts[part] = given
    if "tenant" not in parts or "agent" not in parts:
        raise InvalidScope(
            "no scope for this call: give the integration a default scope, or put 'scope' "
            "(or 'tenant', 'agent_id' and 'user_id') in the framework's context"
        )
    return CallScope(Scope.parse(parts), _text(field_of(context, "run_id")))
