"""Every error the service returns has one shape, and says what to fix::

    {"error": {"status": 422, "code": "invalid_input", "message": "...",
               "field": "situation", "reason": "..."}}

:class:`reverie.errors.ReverieError` maps to a status here and nowhere else; a request that does
not match the schema (FastAPI's validation) gets the same shape with the first bad field named and
every problem listed under ``problems``.

A database driver's own exception (SQLite's, PostgreSQL's) is classified by
:mod:`reverie.store.failures`, as the CLI classifies it: locked or busy is 503 with
``Retry-After``, read-only 503, a full disk 507, a damaged file 500, each with a message that
names the problem. The driver's words go to the log, never into the answer.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from reverie.errors import (
    ArchiveUnreadable,
    Conflict,
    InvalidInput,
    MissingExtra,
    NotFound,
    PlanPending,
    PlanStale,
    ReverieError,
    StoreBusy,
    StoreDamaged,
    StoreError,
    StoreFull,
    StoreReadOnly,
    UndoRefused,
)
from reverie.limits import MAX_METADATA_DEPTH
from reverie.store.failures import store_failure

__all__ = ["RETRY_AFTER_S", "ApiError", "install_handlers"]

RETRY_AFTER_S = 5
"""What a 503 for a busy database tells the client to wait (it already waited ``busy_timeout``)."""

log = logging.getLogger("reverie.server")


class ApiError(Exception):
    """An HTTP error raised by the service's own edge code (auth, limits)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        self.extra = extra
        super().__init__(message)


def _body(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    error = {"status": status, "code": code, "message": message, **extra}
    return JSONResponse({"error": error}, status_code=status)


_STATUS: list[tuple[type[ReverieError], int, str]] = [
    (InvalidInput, 422, "invalid_input"),
    (NotFound, 404, "not_found"),
    (PlanStale, 409, "plan_stale"),  # nothing applied, the plan marked stale
    (PlanPending, 409, "plan_pending"),
    (Conflict, 409, "conflict"),
    (UndoRefused, 409, "undo_refused"),
    (MissingExtra, 501, "missing_extra"),
    (ArchiveUnreadable, 503, "archive_unreadable"),  # a bundle to put back; names it
    (StoreBusy, 503, "store_busy"),  # with Retry-After
    (StoreReadOnly, 503, "store_read_only"),
    (StoreFull, 507, "store_full"),
    (StoreDamaged, 500, "store_damaged"),
    (StoreError, 503, "store_error"),
]


def _reverie_error(_request: Request, exc: Exception) -> JSONResponse:
    for cls, status, code in _STATUS:
        if isinstance(exc, cls):
            if isinstance(exc, InvalidInput):
                return _body(status, code, str(exc), field=exc.field, reason=exc.reason)
            if isinstance(exc, StoreError) and exc.detail:
                log.warning("%s: %s", exc, exc.detail)
            answer = _body(status, code, str(exc))
            if isinstance(exc, StoreBusy):
                answer.headers["Retry-After"] = str(RETRY_AFTER_S)
            return answer
    return _body(400, "bad_request", str(exc))


def _driver_error(request: Request, exc: Exception) -> JSONResponse:
    """A database driver's exception that reached the edge unwrapped, answered by its class."""
    return _reverie_error(request, store_failure(exc).error())


def _api_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    answer = _body(exc.status, exc.code, exc.message, **exc.extra)
    answer.headers.update(exc.headers)
    return answer


def _field(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:] or parts
    return ".".join(parts) or "body"


def _problem(error: dict[str, Any]) -> dict[str, str]:
    reason = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    if error.get("type") == "json_invalid":
        where = error.get("loc", ("body", 0))[-1]
        return {"field": "body", "reason": f"not valid JSON (at character {where}): {reason}"}
    return {"field": _field(error.get("loc", ())), "reason": reason}


def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = [_problem(e) for e in exc.errors()]
    first = problems[0] if problems else {"field": "body", "reason": "invalid request"}
    message = f"{first['field']}: {first['reason']}"
    return _body(422, "invalid_input", message, **first, problems=problems)


_UNPARSED = "There was an error parsing the body"
"""FastAPI's words for a body its JSON parser gave up on (nested past the recursion limit)."""


def _http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 400 and exc.detail == _UNPARSED:
        message = (
            "the body could not be parsed as JSON (malformed, or nested far too deeply);"
            f" send one JSON object, its metadata nested at most {MAX_METADATA_DEPTH} levels"
        )
        return _body(400, "invalid_body", message, field="body", reason=message)
    codes = {404: "not_found", 405: "method_not_allowed"}
    return _body(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))


def install_handlers(app: FastAPI, driver_errors: tuple[type[Exception], ...] = ()) -> None:
    """Answer every error in the one shape; ``driver_errors`` are the store driver's
    exceptions (:func:`reverie.store.failures.driver_errors`)."""
    app.add_exception_handler(ReverieError, _reverie_error)
    for error in driver_errors:
        app.add_exception_handler(error, _driver_error)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
