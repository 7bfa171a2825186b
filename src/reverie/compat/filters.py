"""mem0's filter grammar over memory records: ``AND`` / ``OR`` / ``NOT``, comparisons, ``*``.

A filter is a mapping. Its keys are fields of a record (``user_id``, ``agent_id``, ``run_id``,
``created_at``, ``updated_at``, ``memory``, ``categories`` …) or keys of its ``metadata``, and
the logical keys ``AND`` and ``OR`` (a list of filters) and ``NOT`` (a filter or a list of
them). A field's condition is a value (equality), ``"*"`` (the field is present and not null),
or a mapping of operators: ``eq``, ``ne``, ``gt``, ``gte``, ``lt``, ``lte``, ``in``, ``nin``,
``contains``, ``icontains``. Several keys in one mapping all must hold.

Comparisons of dates accept ISO strings on either side. A condition on a field the record lacks
is false (``ne`` and ``nin`` included, as a missing value is not a value). An operator this
grammar does not know is an error that names it, never a silent match.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from reverie.errors import InvalidInput

__all__ = ["OPERATORS", "matches"]

_MISSING = object()


def _comparable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _ordered(op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def compare(have: Any, want: Any) -> bool:
        try:
            return op(_comparable(have), _comparable(want))
        except TypeError:
            return False

    return compare


def _contains(have: Any, want: Any, fold: bool) -> bool:
    if isinstance(have, list | tuple | set):
        return any(_contains(h, want, fold) for h in have)
    if not isinstance(have, str) or not isinstance(want, str):
        return False
    return want.lower() in have.lower() if fold else want in have


def _one_of(want: Any) -> list[Any]:
    if not isinstance(want, list | tuple | set):
        raise InvalidInput("filters", f"'in' and 'nin' take a list, got {want!r}")
    return list(want)


OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda h, w: _comparable(h) == _comparable(w),
    "ne": lambda h, w: _comparable(h) != _comparable(w),
    "gt": _ordered(lambda h, w: h > w),
    "gte": _ordered(lambda h, w: h >= w),
    "lt": _ordered(lambda h, w: h < w),
    "lte": _ordered(lambda h, w: h <= w),
    "in": lambda h, w: h in _one_of(w),
    "nin": lambda h, w: h not in _one_of(w),
    "contains": lambda h, w: _contains(h, w, fold=False),
    "icontains": lambda h, w: _contains(h, w, fold=True),
}


def _value(record: Mapping[str, Any], key: str) -> Any:
    if key in record and key != "metadata":
        return record[key]
    meta = record.get("metadata") or {}
    return meta.get(key, _MISSING) if isinstance(meta, Mapping) else _MISSING


def _holds(have: Any, condition: Any) -> bool:
    if condition == "*":
        return have is not _MISSING and have is not None
    if have is _MISSING:
        return False
    if not isinstance(condition, Mapping):
        return bool(OPERATORS["eq"](have, condition))
    for op, want in condition.items():
        if op not in OPERATORS:
            known = ", ".join(OPERATORS)
            raise InvalidInput("filters", f"unknown operator {op!r}; use one of {known}")
        if not OPERATORS[op](have, want):
            return False
    return True


def _all(record: Mapping[str, Any], filters: Any) -> list[bool]:
    if not isinstance(filters, list | tuple):
        filters = [filters]
    return [matches(record, f) for f in filters]


def matches(record: Mapping[str, Any], filters: Mapping[str, Any] | None) -> bool:
    """Whether ``record`` satisfies ``filters`` (see the module docstring)."""
    if not filters:
        return True
    if not isinstance(filters, Mapping):
        raise InvalidInput("filters", "expected a mapping of fields, operators and AND/OR/NOT")
    for key, condition in filters.items():
        if key == "AND":
            ok = all(_all(record, condition))
        elif key == "OR":
            ok = any(_all(record, condition))
        elif key == "NOT":
            ok = not any(_all(record, condition))
        else:
            ok = _holds(_value(record, key), condition)
        if not ok:
            return False
    return True
