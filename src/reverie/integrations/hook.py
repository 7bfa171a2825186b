"""Around one agent turn: recall before, record an episode after — and never break the agent.

Framework-agnostic: any agent loop can call :meth:`AgentHook.before` / :meth:`AgentHook.after`,
use the :meth:`AgentHook.turn` context manager, or :meth:`AgentHook.wrap` a ``(task, context) ->
reply`` function. The memory is anything with the facade's ``recall`` and ``remember`` (a
:class:`reverie.Reverie`, or a client of the HTTP service).

Degrades to a no-op: if recall fails the context is ``""``; if recording fails nothing is stored;
either way a warning is logged and the agent's turn goes on. An exception raised BY the agent
inside :meth:`AgentHook.turn` is recorded as a failure episode and then re-raised unchanged —
the hook swallows only its own failures, never the agent's.

A whole run can be remembered with its result: :meth:`AgentHook.record_task` takes the request,
the tool calls made (with their JSON arguments and results) and ``outcome``, ``reward`` or
``feedback``, and stores one task episode (:mod:`reverie.adapters.task`); the dream compares
runs of one kind of request, successes against failures.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from reverie.adapters.task import RunCall, run_result, task_fields
from reverie.integrations.scoping import CallScope
from reverie.models import Episode, Recall, ScopeLike
from reverie.recall.render import MODEL_GUIDANCE

__all__ = [
    "NOTHING_RECALLED",
    "AgentHook",
    "Memory",
    "Turn",
    "recall_text",
    "save_fact",
    "with_context",
]

log = logging.getLogger("reverie.integrations.hook")


class Memory(Protocol):
    """What the hook needs: :class:`reverie.Reverie` satisfies it."""

    def recall(self, query: str, scope: ScopeLike, budget_tokens: int | None = None) -> Recall: ...

    def remember(
        self, episode: Episode | dict[str, Any], *, scope: ScopeLike | None = None
    ) -> Episode: ...

    def now(self, given: datetime | None = None) -> datetime:
        """``given``, else the time by the memory's own clock."""
        ...


@dataclass
class Turn:
    """One turn: the task, the recalled ``context``, and what the agent reports about it.

    ``started_at`` dates the episode: the same task failing the same way twice is two
    episodes, while a retry of one record stays one (see :meth:`reverie.models.Episode.same_as`).
    """

    task: str
    context: str
    action: str = ""
    outcome: str = "unknown"
    error: str | None = None
    lesson: str | None = None
    tools: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    started_at: datetime | None = None

    def succeeded(self, action: str, **details: Any) -> None:
        self._set(action, "success", details)

    def failed(self, action: str, error: str, **details: Any) -> None:
        self._set(action, "failure", {**details, "error": error})

    def _set(self, action: str, outcome: str, details: dict[str, Any]) -> None:
        self.action, self.outcome = action, outcome
        for name in ("error", "lesson", "tools", "metadata"):
            if name in details:
                setattr(self, name, details[name])


def recall_text(
    memory: Memory,
    query: str,
    scope: ScopeLike | Callable[[], ScopeLike],
    budget_tokens: int | None = None,
    *,
    logger: logging.Logger = log,
) -> str:
    """The recall section for ``query``; ``""`` when there is nothing, or — with a warning on
    ``logger`` — when recall fails: it never raises into the agent's turn. ``scope`` may be the
    function that finds the call's scope in the framework's context, whose failure is skipped
    the same way."""
    try:
        where = scope() if callable(scope) else scope
        return memory.recall(query, where, budget_tokens).text
    except Exception as exc:
        logger.warning("reverie recall skipped: %s: %s", type(exc).__name__, exc)
        return ""


NOTHING_RECALLED = "Nothing remembered about that."
"""What a search tool answers when recall finds nothing (or fails)."""


def save_fact(
    memory: Any, where: Callable[[], CallScope], fact: str, source: str, logger: logging.Logger
) -> str:
    """A save tool's body: ``fact`` added as one episode of the call's scope (``memory`` needs
    the facade's ``add``), and the sentence the model reads back; a failure is logged."""
    try:
        call = where()
        memory.add(fact, scope=call.scope, run_id=call.run_id, metadata={"source": source})
    except Exception as exc:
        logger.warning("reverie save skipped: %s: %s", type(exc).__name__, exc)
        return "Could not save that to memory."
    return "Saved to memory."


def with_context(task: str, context: str) -> str:
    """The task with the recalled knowledge above it, introduced by :data:`MODEL_GUIDANCE`
    (what the fence means: the section spends none of its budget saying it); the task alone
    when there is none."""
    return f"{MODEL_GUIDANCE}\n{context}\n\n{task}" if context else task


class AgentHook:
    """Recall before and remember after each turn of one agent (one scope)."""

    def __init__(
        self,
        memory: Memory,
        scope: ScopeLike,
        *,
        budget_tokens: int | None = None,
        session_id: str | None = None,
        category: str | None = None,
    ) -> None:
        self.memory = memory
        self.scope = scope
        self.budget_tokens = budget_tokens
        self.session_id = session_id
        self.category = category

    def before(self, task: str) -> str:
        """The recall section for ``task``; ``""`` when there is nothing, or on any failure."""
        return recall_text(self.memory, task, self.scope, self.budget_tokens)

    def after(self, turn: Turn) -> Episode | None:
        """Record ``turn`` as an episode; None (and a warning) if that fails."""
        episode: dict[str, Any] = {
            "situation": turn.task,
            "action": turn.action,
            "outcome": turn.outcome,
            "error": turn.error,
            "lesson": turn.lesson,
            "tools": turn.tools,
            "metadata": {"role": "user", **turn.metadata},  # the task is the user's word
            "session_id": self.session_id,
            "category": self.category,
        }
        try:
            episode["created_at"] = self.memory.now(turn.started_at).isoformat()
            given = {k: v for k, v in episode.items() if v is not None}
            return self.memory.remember(given, scope=self.scope)
        except Exception as exc:
            log.warning("reverie remember skipped: %s: %s", type(exc).__name__, exc)
            return None

    def record_task(
        self,
        request: str,
        calls: Sequence[RunCall | Mapping[str, Any]] = (),
        *,
        outcome: str | None = None,
        reward: float | None = None,
        feedback: Any = None,
        started_at: datetime | None = None,
    ) -> Episode | None:
        """Remember one whole run with its result: ``calls`` in order, each a
        :class:`~reverie.adapters.task.RunCall` or ``{"tool", "args", "ok"}``. None (and a
        warning) when it cannot be stored or carries no result."""
        try:
            result = run_result(outcome, reward, feedback)
            if result is None:
                raise ValueError("a run needs its outcome, reward or feedback")
            made = [c if isinstance(c, RunCall) else _run_call(c) for c in calls]
            item = task_fields(request, made, result)
            item["session_id"] = self.session_id
            item["created_at"] = self.memory.now(started_at).isoformat()
            given = {k: v for k, v in item.items() if v is not None}
            return self.memory.remember(given, scope=self.scope)
        except Exception as exc:
            log.warning("reverie task skipped: %s: %s", type(exc).__name__, exc)
            return None

    def _started(self) -> datetime | None:
        try:
            return self.memory.now()
        except Exception:  # a memory that cannot tell the time dates the episode when stored
            return None

    @contextmanager
    def turn(self, task: str) -> Iterator[Turn]:
        """``with hook.turn(task) as t:`` — ``t.context`` to prompt with, ``t.succeeded(...)``."""
        current = Turn(task, self.before(task), started_at=self._started())
        try:
            yield current
        except Exception as exc:
            current.outcome, current.error = "failure", f"{type(exc).__name__}: {exc}"
            self.after(current)
            raise
        self.after(current)

    def wrap(self, agent: Callable[[str, str], str]) -> Callable[[str], str]:
        """``agent(task, context) -> reply`` as ``task -> reply``, remembered as a success."""

        def run(task: str) -> str:
            with self.turn(task) as current:
                reply = agent(task, current.context)
                current.succeeded(reply)
            return reply

        return run


def _run_call(call: Mapping[str, Any]) -> RunCall:
    ok = call.get("ok")
    return RunCall(str(call["tool"]), call.get("args"), ok if isinstance(ok, bool) else None)
