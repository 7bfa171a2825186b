"""What the shared SQL runs on: a :class:`Backend` for what each database does its own way, the
:class:`Rows` it hands back decoded, and the :class:`Database` that holds them.

The store is composed, not assembled from mixins: :class:`~reverie.store.sql.store.SQLStore`
is a :class:`Database` that owns one backend and calls it explicitly, as httpx's client calls
its transport. Everything both databases run alike is a function of the :class:`Database` in
:mod:`reverie.store.sql` (commit, leases, plans, keys and cache, stats, vectors) or
:mod:`reverie.store.sql.erasure`; :class:`SQLStore` names those functions as its methods. A backend
never calls back into the store.

Statements are written with ``?`` placeholders; a backend translates them. ``write()`` is one
transaction whose handle has ``execute`` and ``executemany`` returning something with
``fetchone``, ``fetchall`` and ``rowcount`` (SQLite's connection does; PostgreSQL's cursor is
wrapped to).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol, TypeVar

from reverie.models import (
    Claim,
    Cycle,
    CycleReport,
    CycleStatus,
    Episode,
    Outcome,
    Page,
    PageKind,
    PageStatus,
    Revision,
    Scope,
    meta_fields,
)
from reverie.store.records import Lease
from reverie.store.sql.dialect import Dialect
from reverie.store.sql.rows import CLAIMS_AT

__all__ = ["FETCH_ROWS", "Backend", "Database", "Rows"]

_DECODED_REVISIONS = 1024
FETCH_ROWS = 1000
T = TypeVar("T")


class Backend(Protocol):
    """What truly differs between SQLite and PostgreSQL, and nothing else: the connection and
    its transactions, how ``seq`` is assigned, the text index and its search, the vector index,
    the lease claim, the locks that order commits and migrations, and the dialect
    (:mod:`reverie.store.sql.dialect`). ``c`` is the handle of the caller's :meth:`write`
    transaction (or :meth:`migration`'s); ``name`` is the database as messages name it."""

    dialect: Dialect
    decode: Rows
    url: str
    name: str
    read_only: bool

    def read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]: ...

    def read_as(
        self, sql: str, params: Sequence[Any], decode: Callable[[Sequence[Any]], T]
    ) -> list[T]:
        """The rows of one statement, each decoded as it is fetched (:data:`FETCH_ROWS` at a
        time), so the raw rows of a large read (a cycle's scan) never all exist at once."""

    def write(self) -> AbstractContextManager[Any]:
        """One transaction; committed when the block ends, rolled back on an exception."""

    def close(self) -> None: ...

    def migration(self) -> AbstractContextManager[Any]:
        """One migration's transaction, no other migrator inside it (SQLite: foreign keys off
        around it, as SQLite's procedure for rebuilding a table asks)."""

    def run_script(self, c: Any, sql: str) -> None: ...

    def after_migrate(self) -> None:
        """What the connection needs once the schema is in place."""

    def store_episodes(self, c: Any, episodes: Sequence[Episode], at: datetime) -> list[Episode]:
        """Assign ``seq`` to new ``episodes`` of registered scopes (strictly increasing, and
        committed in order within a scope), insert them, received ``at``, and index their text;
        the stored ones."""

    def lock_scope(self, c: Any, scope: Scope) -> None:
        """Serialise the commits of ``scope`` (SQLite's write transaction already does)."""

    def index_page(self, c: Any, rid: int, scope: Scope, rev: Revision, fresh: bool) -> None:
        """Make page ``rid`` findable by its new revision's text (``fresh``: a new page)."""

    def unindex_page(self, c: Any, rid: int) -> None: ...

    def index_episodes(self, c: Any, episodes: Sequence[Episode]) -> None:
        """Make stored ``episodes`` findable by their text (new, or restored from the cold
        tier)."""

    def unindex_episodes(self, c: Any, seqs: Sequence[int]) -> None:
        """Forget episodes' text in the text index (erased or archived), read inside the
        transaction."""

    def compact_text_index(self, c: Any) -> None:
        """Merge the text index so that erased terms leave it."""

    def search_pages(
        self, scope: Scope, terms: Sequence[str], limit: int, statuses: Iterable[str]
    ) -> list[tuple[Page, float]]: ...

    def search_episodes(
        self, scope: Scope, terms: Sequence[str], limit: int, window: int | None
    ) -> list[tuple[Episode, float]]: ...

    def pages_by_id(self, scope: Scope, page_ids: Sequence[str]) -> dict[str, Page]: ...

    def ensure_vector_index(self, c: Any, dim: int) -> None:
        """Prepare the index for vectors of ``dim`` dimensions (PostgreSQL's HNSW)."""

    def take_lease(
        self, c: Any, scope: Scope, owner: str, ttl: float, now: datetime
    ) -> Sequence[Any] | None:
        """The compare-and-set of :meth:`~reverie.store.base.BrainStore.acquire_lease`: the
        lease row, or None when another owner holds it."""

    def claim_due(
        self, c: Any, owner: str, ttl: float, now: datetime, limit: int
    ) -> list[Sequence[Any]]:
        """Lease rows for up to ``limit`` due scopes, taken for ``owner``; concurrent claims
        never take one scope twice."""

    def secure(self) -> AbstractContextManager[None]:
        """Deleted bytes overwritten while inside (SQLite's ``secure_delete``)."""

    def residue(self, c: Any) -> list[str]:
        """Tables whose old row versions this transaction's updates and deletes leave in the
        database files until vacuumed (PostgreSQL's dead tuples); none where deleted bytes
        are overwritten (SQLite under :meth:`secure`)."""

    def keeps_wal(self) -> bool:
        """Whether the write-ahead log keeps erased rows after :meth:`scrub_free_space`."""

    def scrub_free_space(self, tables: Sequence[str] = ()) -> bool:
        """Overwrite what deleted rows left in the files (SQLite: the whole file; PostgreSQL:
        ``VACUUM FULL`` of ``tables``); False when it could not finish now."""

    def integrity_check(self) -> str: ...


class Rows:
    """Rows decoded into records, as one database hands them back (its :class:`Dialect`).

    Scopes are parsed once per key. With ``cache`` (SQLite, whose rows are text and so
    hashable), decoded revisions are cached by the row's full content: revisions are immutable,
    so a row read again decodes to the same object, and keying on every column (not just the
    id) means a row changed behind the store's back decodes afresh, so ``verify`` still sees
    the bytes on disk. The cache is bounded: cleared when full."""

    def __init__(self, dialect: Dialect, *, cache: bool = False) -> None:
        self.dialect = dialect
        self._cache = cache
        self._scopes: dict[str, Scope] = {}
        self._decoded: dict[tuple[Any, ...], Revision] = {}

    def scope(self, key: str) -> Scope:
        scope = self._scopes.get(key)
        if scope is None:
            scope = Scope.parse(key)
            self._scopes[key] = scope
        return scope

    def episode(self, r: Sequence[Any]) -> Episode:
        """An episode from a row of :data:`~reverie.store.sql.rows.EPISODE_COLUMNS`."""
        d = self.dialect
        return Episode.stored(
            id=r[1],
            seq=r[0],
            scope=self.scope(r[2]),
            session_id=r[3],
            created_at=d.at(r[4]),
            situation=r[5],
            action=r[6],
            outcome=Outcome(r[7]),
            outcome_details=r[8],
            error=r[9],
            lesson=r[10],
            importance=r[11],
            category=r[12],
            tools=d.json(r[13]),
            entities=d.json(r[14]),
            metadata=d.json(r[15]),
            consolidated_in=r[16],
        )

    def revision(self, r: Sequence[Any]) -> Revision:
        """A revision from a row of :data:`~reverie.store.sql.rows.REVISION_COLUMNS`."""
        if not self._cache:
            return decode_revision(self.dialect, r)
        key = tuple(r)
        cached = self._decoded.get(key)
        return self.remember(key, decode_revision(self.dialect, r)) if cached is None else cached

    def cached(self, key: tuple[Any, ...]) -> Revision | None:
        return self._decoded.get(key)

    def lean_revisions(
        self,
        leans: Sequence[Sequence[Any]],
        claims_of: Callable[[Sequence[int]], Sequence[Any]],
    ) -> list[Revision]:
        """The revisions of rows of :data:`~reverie.store.sql.rows.LEAN_REVISION_COLUMNS`
        (every column but the claims), as recall reads pages: revision rows are never updated
        (a change is a new row), so the other columns, the hash among them, name the claims,
        and only revisions not decoded before have theirs read, by ``claims_of`` (the claims
        of the rows at those places of ``leans``, in that order). A page's claims cite every
        episode they stand on and reach tens of kilobytes, which recall would otherwise copy
        and parse on every query; ``verify`` reads full rows."""
        keys = [("lean", *lean) for lean in leans]
        # Taken from the cache once, up front: decoding a missing one may clear the cache
        # (it is bounded), and another thread may clear it too, mid-read.
        known = [self.cached(key) for key in keys]
        missing = [i for i, revision in enumerate(known) if revision is None]
        claims = dict(zip(missing, claims_of(missing), strict=True)) if missing else {}

        def decoded(i: int) -> Revision:
            lean = leans[i]
            full = (*lean[:CLAIMS_AT], claims[i], *lean[CLAIMS_AT:])
            return self.remember(keys[i], decode_revision(self.dialect, full))

        return [decoded(i) if revision is None else revision for i, revision in enumerate(known)]

    def remember(self, key: tuple[Any, ...], revision: Revision) -> Revision:
        """Cache ``revision`` under ``key`` (every column that names it)."""
        if len(self._decoded) >= _DECODED_REVISIONS:
            self._decoded.clear()
        self._decoded[key] = revision
        return revision

    def page(self, r: Sequence[Any]) -> Page:
        """A page from a row of :data:`~reverie.store.sql.store.PAGE_SELECT`."""
        return self.page_with(r, self.revision(r[5:]))

    def page_with(self, r: Sequence[Any], revision: Revision) -> Page:
        return Page.model_construct(
            id=r[0],
            scope=self.scope(r[1]),
            topic_key=r[2],
            created_at=self.dialect.at(r[3]),
            updated_at=self.dialect.at(r[4]),
            revision=revision,
        )

    def cycle(self, r: Sequence[Any]) -> Cycle:
        d = self.dialect
        report = r[7]
        return Cycle(
            id=r[0],
            scope=self.scope(r[1]),
            status=CycleStatus(r[2]),
            started_at=d.at(r[3]),
            finished_at=d.when(r[4]),
            checkpoint_before=r[5],
            checkpoint_after=r[6],
            report=(
                CycleReport.model_validate_json(report)
                if isinstance(report, str)
                else CycleReport.model_validate(report)
            ),
            undone_at=d.when(r[8]),
        )

    def lease(self, r: Sequence[Any]) -> Lease:
        """A lease from a row of :data:`~reverie.store.sql.leases.LEASE_COLUMNS`."""
        d = self.dialect
        return Lease(self.scope(r[0]), r[1], int(r[2]), d.lease_at(r[3]), d.lease_at(r[4]))


class Database:
    """One backend and the shortcuts every shared SQL function takes it by."""

    lease_owner: str | None = None
    """The worker this store commits for (see :mod:`reverie.store.sql.leases`)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.dialect = backend.dialect
        self.decode = backend.decode
        self.url = backend.url
        self.read_only = backend.read_only

    def read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        """One statement, its rows."""
        return self.backend.read(sql, params)

    def read_as(
        self, sql: str, params: Sequence[Any], decode: Callable[[Sequence[Any]], T]
    ) -> list[T]:
        """One statement, each row decoded as it is fetched (see :meth:`Backend.read_as`)."""
        return self.backend.read_as(sql, params, decode)

    def write(self) -> AbstractContextManager[Any]:
        """One transaction (see :meth:`Backend.write`)."""
        return self.backend.write()

    def ensure_scopes(self, c: Any, scopes: Iterable[Scope], at: datetime) -> None:
        """Register ``scopes`` (in key order: two transactions never wait on each other)."""
        when = self.dialect.ts(at)
        c.executemany(
            "INSERT INTO scopes VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING",
            [(s.key, s.tenant, s.agent, s.user, when) for s in sorted(set(scopes), key=str)],
        )


def decode_revision(d: Dialect, r: Sequence[Any]) -> Revision:
    """A revision from a row of :data:`~reverie.store.sql.rows.REVISION_COLUMNS`."""
    return Revision.model_construct(
        page_id=r[0],
        number=r[1],
        hash=r[2],
        title=r[3],
        kind=PageKind(r[4]),
        claims=tuple(Claim.from_stored(c) for c in d.json(r[5])),
        confidence=r[6],
        status=PageStatus(r[7]),
        valid_from=d.when(r[8]),
        valid_until=d.when(r[9]),
        superseded_by=r[10],
        cycle_id=r[11],
        author=r[12],
        reason=r[13],
        created_at=d.at(r[14]),
        **meta_fields(r[15]),
    )
