"""What every record shares: aware UTC datetimes, and one parse for all of them.

Times are aware UTC datetimes: :func:`utc` makes one of any datetime (a naive one is taken to be
UTC) and :func:`now_utc` reads the clock. :func:`parse_model` is how input from an edge becomes a
record: a pydantic :class:`~pydantic.ValidationError` surfaces as
:class:`reverie.errors.InvalidInput` naming the first bad field and the reason.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from reverie.errors import InvalidInput

__all__ = ["first_error", "now_utc", "parse_model", "utc"]

M = TypeVar("M", bound=BaseModel)


def utc(value: datetime) -> datetime:
    """Return ``value`` as an aware UTC datetime (naive values are taken to be UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def now_utc() -> datetime:
    return datetime.now(UTC)


def first_error(exc: ValidationError) -> InvalidInput:
    """The first error of ``exc`` as :class:`InvalidInput`: its field path and its message."""
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or "input"
    return InvalidInput(field, str(err["msg"]).removeprefix("Value error, "))


def parse_model(cls: type[M], data: Any) -> M:
    """Validate ``data`` as ``cls``; raise :class:`InvalidInput` naming the first bad field."""
    if isinstance(data, cls):
        return data
    if not isinstance(data, dict):
        raise InvalidInput("input", f"expected an object, got {type(data).__name__}")
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise first_error(exc) from None
