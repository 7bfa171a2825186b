"""The HTTP service and dashboard (``pip install 'reverie[server]'``; ``reverie serve``).

Importing this package imports FastAPI; importing :mod:`reverie` does not. Every route is a thin
edge over the :class:`reverie.Reverie` facade: it authenticates the key, checks the scope, calls
the facade, and maps :class:`reverie.errors.ReverieError` to a 4xx body that says what to fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["create_app"]

if TYPE_CHECKING:
    from reverie.server.app import create_app
else:

    def create_app(*args: Any, **kwargs: Any) -> Any:
        """Build the ASGI app (see :func:`reverie.server.app.create_app`)."""
        from reverie.server.app import create_app as build  # noqa: PLC0415 (extra: server)

        return build(*args, **kwargs)
