"""Every error Reverie raises on purpose derives from :class:`ReverieError`.

The tree::

    ReverieError
    ├── InvalidInput          bad data from a caller; names the field and the reason
    │   └── InvalidScope      a scope string or object that cannot name a brain
    ├── NotFound              an id that does not exist (in this scope)
    ├── Conflict              the request contradicts stored state (same id, other content)
    ├── UndoRefused           an undo that would lose later work, or one already done
    ├── PlanRejected          a distiller's plan failed validation; nothing was changed
    ├── StoreError            the database failed or is not what we expect
    │   └── MigrationError    the schema cannot be brought up to date
    └── MissingExtra          an optional dependency is not installed; names the extra

Edges (CLI, HTTP) turn these into messages and exit or status codes; they never leak a traceback
for a ``ReverieError``.
"""

from __future__ import annotations

__all__ = [
    "Conflict",
    "InvalidInput",
    "InvalidScope",
    "MigrationError",
    "MissingExtra",
    "NotFound",
    "PlanRejected",
    "ReverieError",
    "StoreError",
    "UndoRefused",
]


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


class UndoRefused(ReverieError):
    """An undo that cannot be done without losing later work, or that was already done."""


class PlanRejected(ReverieError):
    """A plan failed validation. ``reasons`` lists every problem found."""

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__("; ".join(reasons))


class StoreError(ReverieError):
    """The backing database failed or holds something unexpected."""


class MigrationError(StoreError):
    """The schema could not be migrated."""


class MissingExtra(ReverieError, ImportError):
    """An optional dependency is missing."""

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{package} is not installed; install it with: pip install 'reverie[{extra}]'"
        )
