"""One scope's failure never stops the others.

Operations over many scopes (dream all, archive, training export) run each scope through
:func:`each_scope`: a scope that raises is logged and recorded with why, and the loop goes on.
Its effects are the scope's own transaction, so a failing scope changed nothing of its own and
nothing of anyone else's. The caller raises :class:`~reverie.errors.ScopesFailed` at the end,
so the failure is never silent and the work done for the others is never lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TypeVar

from reverie.errors import ReverieError, ScopesFailed
from reverie.limits import MAX_METADATA_DEPTH, json_depth
from reverie.models import Episode, Scope

__all__ = ["describe", "each_scope", "partial", "raise_failures", "readable"]

log = logging.getLogger("reverie")

T = TypeVar("T")
D = TypeVar("D")


def describe(exc: BaseException) -> str:
    """What went wrong, for a person: our own errors say it already; others get their type."""
    if isinstance(exc, ReverieError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "RecursionError: a stored value is nested too deeply to process"
    return f"{type(exc).__name__}: {exc}"


def each_scope(
    scopes: Iterable[Scope], work: Callable[[Scope], T], operation: str
) -> tuple[list[T], dict[str, str]]:
    """``work(scope)`` for every scope, in order: the results of those that succeeded, and the
    reason of each that raised, by scope key."""
    done: list[T] = []
    failures: dict[str, str] = {}
    for scope in scopes:
        try:
            done.append(work(scope))
        except Exception as exc:  # isolation: any failure of one scope is that scope's alone
            failures[scope.key] = describe(exc)
            log.info("%s of %s failed, going on: %s", operation, scope.key, failures[scope.key])
    return done, failures


def raise_failures(operation: str, failures: dict[str, str], done: D) -> D:
    """``done`` when nothing failed, else :class:`ScopesFailed` carrying it."""
    if failures:
        raise ScopesFailed(operation, failures, done)
    return done


def partial(work: Callable[[], D]) -> tuple[D, ScopesFailed[D] | None]:
    """Run ``work``; its result and no failure, or, when some scopes failed, what it did for
    the others and the :class:`ScopesFailed` to report after showing that."""
    try:
        return work(), None
    except ScopesFailed as exc:
        return exc.done, exc


def readable(episodes: list[Episode]) -> list[Episode]:
    """``episodes``, each row an older version stored past today's metadata limits shown with
    a note in place of its metadata, so one such row cannot fail the read it is part of."""
    return [ep if _within_limits(ep) else _with_note(ep) for ep in episodes]


def _within_limits(ep: Episode) -> bool:
    return not ep.metadata or json_depth(ep.metadata, MAX_METADATA_DEPTH) <= MAX_METADATA_DEPTH


def _with_note(ep: Episode) -> Episode:
    note = f"not shown: stored nested more than {MAX_METADATA_DEPTH} levels deep, past the limit"
    return ep.model_copy(update={"metadata": {"_unreadable": note}})
