"""The ASGI app: the JSON API (``/v1``), ``/health``, the OpenAPI schema and the dashboard
(and its icon at ``/favicon.ico``).

One :class:`reverie.Reverie` serves every request. SQLite serializes writers itself (WAL, one
write transaction at a time), so sync routes run on the server's thread pool and dreams on their
own small pool (:mod:`reverie.server.dreams`). The interactive docs pages FastAPI would load from
a CDN are off; ``/openapi.json`` is served.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from reverie import __version__
from reverie.engine import Reverie
from reverie.server.actions import actions_router
from reverie.server.body_limit import BodyLimit
from reverie.server.browse import browse_router
from reverie.server.dreams import DreamRunner
from reverie.server.forget import forget_router
from reverie.server.http_errors import install_handlers
from reverie.server.plans import plans_router
from reverie.server.ratelimit import RateLimit, RateLimiter, RateLimits
from reverie.server.routes import public, router
from reverie.store.failures import driver_errors

__all__ = ["DEFAULT_MAX_BODY", "create_app"]

DEFAULT_MAX_BODY = 8 * 1024 * 1024

_DESCRIPTION = """Reverie gives AI agents a sleep cycle: append episodes, dream, recall.

Every `/v1` route needs an API key (`reverie keys create`) sent as `Authorization: Bearer rvk_...`
or `X-API-Key`. A key is bound to a tenant (optionally one agent) with read, write or admin rights
(admin: erasure, `/v1/forget`).
Errors come back as `{"error": {"status", "code", "message", "field"?, "reason"?}}`."""


def _static_dir() -> Path:
    return Path(str(resources.files("reverie.server") / "static"))


def create_app(
    rv: Reverie,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY,
    dream_workers: int = 2,
    rate_limits: RateLimits | None = None,
) -> FastAPI:
    """The service over ``rv``. The caller keeps ownership of ``rv`` (and closes it).
    ``rate_limits``: per-key token buckets (:mod:`reverie.server.ratelimit`); None is unlimited."""
    runner = DreamRunner(rv, workers=dream_workers)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        runner.close()

    app = FastAPI(
        title="Reverie",
        version=__version__,
        description=_DESCRIPTION,
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.reverie = rv
    app.state.dreams = runner
    limiter = RateLimiter(rate_limits) if rate_limits else None
    app.state.rate_limiter = limiter
    install_handlers(app, driver_errors(rv.store))
    app.include_router(public)
    app.include_router(router)
    app.include_router(plans_router)  # review mode
    app.include_router(forget_router)  # erasure, admin keys only
    app.include_router(browse_router)  # the console: episodes searched, pages citing them
    app.include_router(actions_router)  # the console: undo, restore, edit
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    if limiter is not None:
        app.add_middleware(RateLimit, limiter=limiter)  # outermost: refuses before the body
    app.mount("/dashboard", StaticFiles(directory=_static_dir(), html=True), name="dashboard")

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/dashboard/")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:  # what browsers ask for at the root, whatever the page says
        return FileResponse(_static_dir() / "favicon.svg", media_type="image/svg+xml")

    return app
