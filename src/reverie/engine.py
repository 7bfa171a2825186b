"""The facade: the one object the CLI, the HTTP service, the MCP server and Python users call.

It holds no logic of its own beyond wiring: parsing input into models, choosing the store from a
path or URL, and handing work to the cycle, undo and recall modules. Time is a parameter
(``now=``); when omitted it is read here, at the edge, never deeper.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from reverie.config import Config
from reverie.dream.cycle import DreamCycle
from reverie.dream.distill import ExtractiveDistiller
from reverie.dream.plan import Distiller
from reverie.dream.undo import UndoReport, plan_undo
from reverie.embed import Embedder
from reverie.errors import Conflict, InvalidInput
from reverie.models import (
    Cycle,
    CycleReport,
    Episode,
    Lineage,
    Page,
    Recall,
    Revision,
    Scope,
    ScopeLike,
    now_utc,
    utc,
)
from reverie.store.base import Store, StoreStats

__all__ = ["IngestError", "IngestResult", "Reverie", "UndoReport"]

log = logging.getLogger("reverie")


@dataclass(frozen=True)
class IngestError:
    """An item ``ingest`` could not store: its 0-based position, the field and the reason."""

    index: int
    field: str
    reason: str


@dataclass
class IngestResult:
    stored: int = 0
    duplicates: int = 0
    errors: list[IngestError] = field(default_factory=list)


def open_store(target: str | Path) -> Store:
    """A store for a file path, ``sqlite:///path``, or ``:memory:``."""
    from reverie.store.sqlite import SQLiteStore

    text = str(target)
    if text.startswith(("postgres://", "postgresql://")):
        raise InvalidInput(
            "db", "the PostgreSQL backend is not available in this version; use a SQLite path"
        )
    if text.startswith("sqlite://"):
        text = text.removeprefix("sqlite://") or ":memory:"
        text = ":memory:" if text in ("/:memory:", ":memory:") else text
    if "://" in text:
        raise InvalidInput(
            "db", f"unsupported database URL {text!r}; give a file path or sqlite:///path"
        )
    return SQLiteStore(text)


class Reverie:
    """A brain store plus the dream cycle and recall over it.

    >>> with Reverie.open(":memory:") as rv:
    ...     _ = rv.remember({"scope": "acme/coder", "situation": "s", "action": "a"})
    """

    def __init__(
        self,
        store: Store,
        *,
        config: Config | None = None,
        embedder: Embedder | None = None,
        distiller: Distiller | None = None,
        on_phase: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.config = config or Config()
        self.embedder = embedder
        self.distiller = distiller or ExtractiveDistiller(self.config.dream)
        self._on_phase = on_phase

    @classmethod
    def open(
        cls,
        target: str | Path,
        *,
        config: Config | None = None,
        embedder: Embedder | None = None,
        distiller: Distiller | None = None,
    ) -> Reverie:
        """Open (creating and migrating if needed) the brain store at ``target``."""
        store = open_store(target)
        store.migrate()
        return cls(store, config=config, embedder=embedder, distiller=distiller)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Reverie:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- episodes ---------------------------------------------------------------------------

    @staticmethod
    def _parse(item: Episode | dict[str, Any], scope: Scope | None) -> Episode:
        if isinstance(item, Episode):
            return item
        if isinstance(item, dict) and scope is not None and "scope" not in item:
            item = {**item, "scope": scope}
        return Episode.parse(item)

    def remember(
        self, episode: Episode | dict[str, Any], *, scope: ScopeLike | None = None
    ) -> Episode:
        """Store one episode (idempotent by id) and return it with its ``seq``."""
        ep = self._parse(episode, Scope.parse(scope) if scope is not None else None)
        stored = self.store.append([ep])
        return stored[0] if stored else self.store.episode(ep.id)

    def ingest(
        self,
        items: Iterable[Episode | dict[str, Any]],
        *,
        scope: ScopeLike | None = None,
        batch_size: int = 1000,
    ) -> IngestResult:
        """Store many episodes in batches; bad items are reported, good ones stored."""
        default = Scope.parse(scope) if scope is not None else None
        result = IngestResult()
        for batch in self._batches(items, default, batch_size, result):
            self._append_batch(batch, result)
        return result

    def _batches(
        self,
        items: Iterable[Episode | dict[str, Any]],
        scope: Scope | None,
        size: int,
        result: IngestResult,
    ) -> Iterator[list[tuple[int, Episode]]]:
        batch: list[tuple[int, Episode]] = []
        for index, item in enumerate(items):
            try:
                batch.append((index, self._parse(item, scope)))
            except InvalidInput as exc:
                result.errors.append(IngestError(index, exc.field, exc.reason))
            if len(batch) >= size:
                yield batch
                batch = []
        if batch:
            yield batch

    def _append_batch(self, batch: list[tuple[int, Episode]], result: IngestResult) -> None:
        try:
            stored = self.store.append([ep for _i, ep in batch])
        except Conflict:
            for index, ep in batch:  # find the culprit(s); the rest still land
                try:
                    self._count(self.store.append([ep]), 1, result)
                except Conflict as exc:
                    result.errors.append(IngestError(index, "id", str(exc)))
            return
        self._count(stored, len(batch), result)

    @staticmethod
    def _count(stored: list[Episode], asked: int, result: IngestResult) -> None:
        result.stored += len(stored)
        result.duplicates += asked - len(stored)

    # -- dreaming ---------------------------------------------------------------------------

    def _cycle(self) -> DreamCycle:
        return DreamCycle(
            self.store,
            self.distiller,
            config=self.config.dream,
            embedder=self.embedder,
            on_phase=self._on_phase,
        )

    def dream(
        self, scope: ScopeLike, *, now: datetime | None = None, dry_run: bool = False
    ) -> CycleReport:
        """Run one cycle for ``scope``; all its effects commit together or not at all."""
        when = utc(now) if now else now_utc()
        return self._cycle().run(Scope.parse(scope), when, dry_run=dry_run)

    def dream_all(self, *, now: datetime | None = None, dry_run: bool = False) -> list[CycleReport]:
        """One cycle for every scope that has episodes waiting."""
        return [self.dream(s, now=now, dry_run=dry_run) for s in self.store.pending_scopes()]

    def undo(self, cycle_id: str, *, now: datetime | None = None) -> UndoReport:
        """Restore every page ``cycle_id`` touched and make its episodes eligible again."""
        changes, report = plan_undo(self.store, cycle_id, utc(now) if now else now_utc())
        self.store.commit(changes)
        return report

    # -- reading ----------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        scope: ScopeLike,
        budget_tokens: int | None = None,
        *,
        now: datetime | None = None,
    ) -> Recall:
        """Knowledge for ``query`` under ``budget_tokens``; empty (never raising) on failure."""
        from reverie.recall import recall as run_recall

        budget = self.config.recall.budget_tokens if budget_tokens is None else budget_tokens
        if budget < 0:
            raise InvalidInput("budget_tokens", "must be 0 or more")
        return run_recall(
            self.store, query, Scope.parse(scope), budget, config=self.config.recall, now=now
        )

    def pages(self, scope: ScopeLike, status: str | None = "active") -> list[Page]:
        return self.store.pages(Scope.parse(scope), None if status is None else [status])

    def page(self, page_id: str) -> Page:
        return self.store.page(page_id)

    def revisions(self, page_id: str) -> list[Revision]:
        return self.store.revisions(page_id)

    def why(self, page_id: str) -> Lineage:
        """A page, all its revisions, and every raw episode any revision cites."""
        page = self.store.page(page_id)
        revisions = self.store.revisions(page_id)
        cited = [e for r in revisions for e in r.citations]
        pages = sorted({p for r in revisions for c in r.claims for p in c.page_ids})
        return Lineage(
            page=page, revisions=revisions, episodes=self.store.episodes(cited), cited_pages=pages
        )

    def cycles(self, scope: ScopeLike | None = None, limit: int = 50) -> list[Cycle]:
        return self.store.cycles(Scope.parse(scope) if scope is not None else None, limit)

    def cycle(self, cycle_id: str) -> Cycle:
        return self.store.cycle(cycle_id)

    def status(self, scope: ScopeLike | None = None) -> StoreStats:
        return self.store.stats(Scope.parse(scope) if scope is not None else None)

    def scopes(self) -> list[Scope]:
        return self.store.scopes()
