"""Shell completion of the names a brain holds: scopes, page ids and cycle ids.

Completion runs on every Tab, before any command: it opens the database named by ``--db`` /
``REVERIE_DB`` / the default **read-only** (a SQLite file opened with ``mode=ro``; a missing
file or a server URL completes nothing rather than connecting or creating), reads a bounded
number of rows, and never fails: a broken database offers no candidates instead of a traceback
in the user's shell. Install with ``reverie --install-completion``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import typer

from reverie.config import resolve_db

if TYPE_CHECKING:
    from reverie.store.base import BrainStore

MAX_CANDIDATES = 200
"""The most names one Tab offers: a shell lists them all, and a prefix narrows them fast."""


@contextmanager
def _read_only(ctx: typer.Context) -> Iterator[BrainStore | None]:
    """The store the command line names, opened read-only; None when there is none to read."""
    path = Path(resolve_db(ctx.find_root().params.get("db")))
    if "://" in str(path) or not path.is_file():
        yield None
        return
    from reverie.store import open_store

    store = open_store(f"file:{quote(str(path.resolve()))}?mode=ro")
    try:
        yield store
    finally:
        store.close()


Names = Callable[["BrainStore"], list[str]]


def _offered(ctx: typer.Context, names: Names, prefix: str) -> list[str]:
    with suppress(Exception), _read_only(ctx) as store:  # a Tab never fails
        if store is not None:
            return sorted({n for n in names(store) if n.startswith(prefix)})[:MAX_CANDIDATES]
    return []


def _scope_keys(store: BrainStore) -> list[str]:
    return [s.key for s in store.scopes()]


def _page_ids(store: BrainStore) -> list[str]:
    return [p.id for s in store.scopes() for p in store.pages(s, ["active"])]


def _cycle_ids(store: BrainStore) -> list[str]:
    return [c.id for c in store.cycles(None, limit=MAX_CANDIDATES)]


def scopes(ctx: typer.Context, incomplete: str) -> list[str]:
    """The brain's scope keys starting with ``incomplete``."""
    return _offered(ctx, _scope_keys, incomplete)


def page_ids(ctx: typer.Context, incomplete: str) -> list[str]:
    """Active page ids starting with ``incomplete``, in the ``--scope`` given if any."""
    from reverie.models import Scope

    given = ctx.params.get("scope")
    if isinstance(given, str) and given:
        with suppress(Exception):
            scope = Scope.parse(given)
            return _offered(ctx, lambda s: [p.id for p in s.pages(scope, ["active"])], incomplete)
    return _offered(ctx, _page_ids, incomplete)


def cycle_ids(ctx: typer.Context, incomplete: str) -> list[str]:
    """The newest cycle ids starting with ``incomplete``."""
    return _offered(ctx, _cycle_ids, incomplete)
