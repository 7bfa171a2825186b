"""The plumbing every SQL module of the store builds on: a connection, a dialect, row decoding.

A backend supplies :meth:`SQLBase._read` (one statement, its rows) and :meth:`SQLBase._write`
(one transaction, handing out a handle whose ``execute`` and ``executemany`` return something
with ``fetchone``, ``fetchall`` and ``rowcount``: SQLite's connection does, PostgreSQL's cursor
is wrapped to). Statements are written with ``?`` placeholders; the backend translates them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar

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
from reverie.store.sql.dialect import Dialect

__all__ = ["SQLBase"]


class SQLBase:
    """Connection plumbing and row decoding, shared by every part of :class:`SQLStore`."""

    dialect: ClassVar[Dialect]
    url: str
    lease_owner: str | None = None
    """The worker this store commits for (see :mod:`reverie.store.sql.leases`)."""

    def __init__(self) -> None:
        self._scopes: dict[str, Scope] = {}

    def _read(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _scope(self, key: str) -> Scope:
        scope = self._scopes.get(key)
        if scope is None:
            scope = Scope.parse(key)
            self._scopes[key] = scope
        return scope

    def _ensure_scopes(self, c: Any, scopes: Iterable[Scope], at: datetime) -> None:
        """Register ``scopes`` (in key order: two transactions never wait on each other)."""
        when = self.dialect.ts(at)
        c.executemany(
            "INSERT INTO scopes VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING",
            [(s.key, s.tenant, s.agent, s.user, when) for s in sorted(set(scopes), key=str)],
        )

    def _episode_from_row(self, r: Sequence[Any]) -> Episode:
        d = self.dialect
        return Episode.model_construct(
            seq=r[0],
            id=r[1],
            scope=self._scope(r[2]),
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

    def _revision_from_row(self, r: Sequence[Any]) -> Revision:
        return decode_revision(self.dialect, r)

    def _page_from_row(self, r: Sequence[Any]) -> Page:
        return self._page(r, self._revision_from_row(r[5:]))

    def _page(self, r: Sequence[Any], revision: Revision) -> Page:
        return Page.model_construct(
            id=r[0],
            scope=self._scope(r[1]),
            topic_key=r[2],
            created_at=self.dialect.at(r[3]),
            updated_at=self.dialect.at(r[4]),
            revision=revision,
        )

    def _cycle_from_row(self, r: Sequence[Any]) -> Cycle:
        d = self.dialect
        report = r[7]
        return Cycle(
            id=r[0],
            scope=self._scope(r[1]),
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
