"""Every error Reverie raises on purpose derives from :class:`ReverieError`.

The tree::

    ReverieError
    ├── InvalidInput          bad data from a caller; names the field and the reason
    │   └── InvalidScope      a scope string or object that cannot name a brain
    ├── NotFound              an id that does not exist (in this scope)
    ├── Conflict              the request contradicts stored state (same id, other content)
    │   ├── LeaseLost         another worker took over a scope's lease
    │   ├── PlanPending       a scope's plan awaits review; apply or reject it first
    │   ├── EmbedderMismatch  the brain's vectors were made by another embedder; names both
    │   └── PlanStale         a reviewed plan's pages or checkpoint moved since it was made
    ├── UndoRefused           an undo that would lose later work, or one already done
    ├── PlanRejected          a distiller's plan failed validation; nothing was changed
    ├── GroupDeferred         a distiller cannot take a group now (over budget, model down)
    ├── LLMError              a model call failed (network, status, retries exhausted)
    │   └── LLMBadOutput      the model answered, but not with JSON matching the schema
    ├── StoreError            the database failed or is not what we expect
    │   ├── StoreBusy         another process holds the database; retry shortly
    │   ├── StoreReadOnly     the database cannot be written (a write, or a needed migration)
    │   ├── StoreFull         the disk (or a file size limit) is full
    │   ├── StoreDamaged      the file is not a database, or a damaged one
    │   ├── MigrationError    the schema cannot be brought up to date
    │   └── ArchiveUnreadable an archive bundle the database names is missing or altered
    ├── ScopesFailed          a multi-scope operation did every scope it could; names the rest
    └── MissingExtra          an optional dependency is not installed; names the extra

Edges (CLI, HTTP) turn these into messages and exit or status codes; they never leak a traceback
for a ``ReverieError``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Generic, Protocol, TypeVar

__all__ = [
    "ArchiveUnreadable",
    "Conflict",
    "EmbedderMismatch",
    "GroupDeferred",
    "InvalidInput",
    "InvalidScope",
    "LLMBadOutput",
    "LLMError",
    "LeaseLost",
    "MigrationError",
    "MissingExtra",
    "NotFound",
    "PlanPending",
    "PlanRejected",
    "PlanStale",
    "ReverieError",
    "ScopesFailed",
    "StoreBusy",
    "StoreDamaged",
    "StoreError",
    "StoreFull",
    "StoreReadOnly",
    "UndoRefused",
    "describe",
    "each_scope",
    "partial",
    "raise_failures",
]

T = TypeVar("T")


class ReverieError(Exception):
    """Base of every error Reverie raises on purpose."""


class InvalidInput(ReverieError, ValueError):
    """Input that cannot be stored. ``field`` names what to fix, ``reason`` says why."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class InvalidScope(InvalidInput):
    """A scope that cannot name a brain."""

    def __init__(self, reason: str) -> None:
        super().__init__("scope", reason)


class NotFound(ReverieError, LookupError):
    """An id that does not exist."""


class Conflict(ReverieError):
    """The request contradicts what is stored."""


class LeaseLost(Conflict):
    """A worker's lease on a scope was taken over (it stalled past the lease); stop that work."""


class PlanPending(Conflict):
    """A scope has a plan awaiting review (review mode); ``plan_id`` names it."""

    def __init__(self, plan_id: str, scope_key: str) -> None:
        self.plan_id = plan_id
        super().__init__(
            f"scope {scope_key} has plan {plan_id} pending review; apply it or reject it first"
            f" (reverie plan apply {plan_id} / reverie plan reject {plan_id})"
        )


class EmbedderMismatch(Conflict):
    """A brain opened with another embedder than the one that made its vectors (``recorded``);
    the two models' vectors are not comparable, so recall would be wrong. Nothing was changed."""

    def __init__(self, recorded: str, asked: str, recorded_model: str, asked_model: str) -> None:
        self.recorded, self.asked = recorded, asked
        super().__init__(
            f"this brain's vectors were made by embedder {recorded!r} ({recorded_model}), not"
            f" {asked!r} ({asked_model}): open it with --embedder {recorded} (or"
            f" REVERIE_EMBEDDER={recorded}), or switch it with `reverie reembed {asked}`,"
            " which embeds every brain again with the new one"
        )


class PlanStale(Conflict):
    """A pending plan can no longer be applied as made; ``moved`` says what changed since.

    Nothing was applied; the plan is marked stale. Dream again (``--review``) for a fresh one.
    """

    def __init__(self, plan_id: str, moved: list[str]) -> None:
        self.plan_id = plan_id
        self.moved = moved
        super().__init__(
            f"plan {plan_id} is stale, nothing was applied: {'; '.join(moved)};"
            " dream again for a fresh plan"
        )


class UndoRefused(ReverieError):
    """An undo that cannot be done without losing later work, or that was already done."""


class PlanRejected(ReverieError):
    """A plan failed validation. ``reasons`` lists every problem found."""

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__("; ".join(reasons))


class GroupDeferred(ReverieError):
    """A distiller declines a group for now; its episodes stay eligible for a later cycle.

    ``fit`` > 0: the first ``fit`` episodes of the group fit the input budget; the cycle asks
    again with those and defers the rest. ``rest``: defer every remaining group of the cycle
    too (the model is down, so asking again now would only wait for timeouts).
    """

    def __init__(self, reason: str, *, fit: int = 0, rest: bool = False) -> None:
        self.reason = reason
        self.fit = fit
        self.rest = rest
        super().__init__(reason)


class LLMError(ReverieError):
    """A model call failed: network, timeout, an error status, or retries exhausted."""


class LLMBadOutput(LLMError):
    """The model answered, but (even after one repair) not with JSON matching the schema.

    It still cost something: ``calls``, ``input_tokens``, ``output_tokens``, ``latency_s``.
    """

    def __init__(
        self,
        message: str,
        *,
        calls: int = 0,
        input_tokens: int = 0,
        output_tokens: int = 0,
        latency_s: float = 0.0,
    ) -> None:
        self.calls = calls
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.latency_s = latency_s
        super().__init__(message)


class StoreError(ReverieError):
    """The backing database failed or holds something unexpected.

    ``detail`` keeps the driver's own words, when a driver failure is behind it
    (:mod:`reverie.store.failures`), apart from the message that says what to do.
    """

    def __init__(self, message: str = "", *, detail: str | None = None) -> None:
        self.detail = detail
        super().__init__(message)


class StoreBusy(StoreError):
    """Another process holds the database (locked, busy); the same call may succeed later."""


class StoreReadOnly(StoreError):
    """The database cannot be written: a read-only file, folder or connection."""


class StoreFull(StoreError):
    """A write hit a full disk or a file size limit; what was committed before it stays."""


class StoreDamaged(StoreError):
    """The file is not a database, or its pages are damaged; a backup is the remedy."""


class MigrationError(StoreError):
    """The schema could not be migrated."""


class ArchiveUnreadable(StoreError):
    """An archive bundle holding episodes of this database cannot be read back as written.

    ``bundle`` is its ``sha256:`` name, ``where`` the file it should be; the episodes it holds
    exist nowhere else, so the remedy is putting that file back, never dropping the stubs.
    """

    def __init__(self, bundle: str, where: str, problem: str) -> None:
        self.bundle = bundle
        self.where = where
        super().__init__(
            f"archive bundle {bundle} {problem} ({where}); its episodes are archived in it, so"
            " put that file back from a backup (it must hash to its name); `reverie archive"
            " list` shows every bundle this database expects"
        )


class ScopesFailed(ReverieError, Generic[T]):
    """A multi-scope operation (dream all, archive, export) went on past failing scopes.

    Every other scope was done; ``done`` is the operation's usual result for them and
    ``failures`` maps each failing scope's key to why it failed.
    """

    def __init__(self, operation: str, failures: dict[str, str], done: T) -> None:
        self.operation = operation
        self.failures = failures
        self.done = done
        listed = "; ".join(f"{key}: {why}" for key, why in failures.items())
        super().__init__(
            f"{operation} failed for {len(failures)} scope(s), the others went on: {listed}"
        )

    def lines(self) -> list[str]:
        """One line per failing scope."""
        return [f"{self.operation} of {key} failed: {why}" for key, why in self.failures.items()]


class MissingExtra(ReverieError, ImportError):
    """An optional dependency is missing."""

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{package} is not installed; install it with: pip install 'reverie[{extra}]'"
        )


# -- one scope's failure never stops the others -----------------------------------------------
# Operations over many scopes (dream all, archive, training export) run each scope through
# each_scope: a scope that raises is logged and recorded with why, and the loop goes on. Its
# effects are the scope's own transaction, so a failing scope changed nothing of its own and
# nothing of anyone else's. The caller raises ScopesFailed at the end (raise_failures), so the
# failure is never silent and the work done for the others is never lost.

log = logging.getLogger("reverie")

D = TypeVar("D")
R = TypeVar("R")


class _Keyed(Protocol):
    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=_Keyed)


def describe(exc: BaseException) -> str:
    """What went wrong, for a person: our own errors say it already; others get their type."""
    if isinstance(exc, ReverieError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "RecursionError: a stored value is nested too deeply to process"
    return f"{type(exc).__name__}: {exc}"


def each_scope(
    scopes: Iterable[K], work: Callable[[K], R], operation: str
) -> tuple[list[R], dict[str, str]]:
    """``work(scope)`` for every scope, in order: the results of those that succeeded, and the
    reason of each that raised, by scope key."""
    done: list[R] = []
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
