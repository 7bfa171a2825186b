"""The facade: the one object the CLI, the HTTP service, the MCP server and Python users call.

It holds no logic of its own beyond wiring: parsing input into models, choosing the store from a
path or URL, and handing work to the cycle, undo and recall modules. Time is a parameter
(``now=``); when omitted it is read here, at the edge, never deeper.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reverie.api.embedding import CONFIGURED, choose_embedder
from reverie.config import Config
from reverie.errors import InvalidInput
from reverie.intake import IngestClock, admit
from reverie.models import PageStatus, Scope, ScopeLike, now_utc, utc
from reverie.redaction import Redactor
from reverie.store.usage import RecallUsage

if TYPE_CHECKING:
    from datetime import timedelta

    from reverie.api import verbs
    from reverie.api.items import Deletion, MemoryEvent, MemoryItem, Retirement
    from reverie.dream.cycle import DreamCycle
    from reverie.dream.review import PlanReview
    from reverie.embed import Embedder, EmbedderLike
    from reverie.intake import IngestResult
    from reverie.keys import KeyRing
    from reverie.memory.browse import EpisodeFilter, EpisodeList
    from reverie.memory.edits import EditReport
    from reverie.memory.mirror import ExportReport, ImportReport
    from reverie.memory.revisions import VerifyReport
    from reverie.memory.undo import UndoReport
    from reverie.models import Cycle, CycleReport, Episode, Lineage, Page, Recall, Revision
    from reverie.models.plan import Distiller
    from reverie.recall import RecallTrace
    from reverie.recall.vectors import VectorSearch
    from reverie.store.base import (
        BrainStore,
        Changeset,
        DreamStats,
        JournalEntry,
        RecallTally,
        StoreStats,
    )
    from reverie.store.records import PendingPlan, Receipt

__all__ = ["Reverie"]

log = logging.getLogger("reverie")

DREAM_ATTEMPTS = 3
"""A cycle that loses a race with another process's cycle of the same scope (its commit finds the
checkpoint moved) runs again on the new state; model answers are cached, so the rerun is cheap."""


def _extractive(config: Config, store: BrainStore, embedder: Embedder | None) -> Distiller:
    """The deterministic distiller, the default when no model is configured."""
    from reverie.dream.distill import ExtractiveDistiller
    from reverie.recall.vectors import cached

    return ExtractiveDistiller(config.dream, cached(store, embedder))


def _status(status: str) -> str:
    try:
        return str(PageStatus(status))
    except ValueError:
        known = ", ".join(str(s) for s in PageStatus)
        raise InvalidInput("status", f"{status!r} is not a page status ({known}, or all)") from None


class Reverie:
    """A brain store plus the dream cycle and recall over it.

    >>> with Reverie.open(":memory:") as rv:
    ...     _ = rv.remember({"scope": "acme/coder", "situation": "s", "action": "a"})
    """

    def __init__(
        self,
        store: BrainStore,
        *,
        config: Config | None = None,
        embedder: EmbedderLike = CONFIGURED,
        distiller: Distiller | None = None,
        on_phase: Callable[[str], None] | None = None,
        clock: Callable[[], datetime] = now_utc,
    ) -> None:
        self.store = store
        self.clock = clock
        """The engine's one wall clock (UTC): read by :meth:`now` only; tests pass their own."""
        self.config = config or Config()
        self.redactor = Redactor(self.config.redaction)
        """Redaction under this engine's policy: pages, recall, model prompts, training export."""
        # a name ("auto", "minilm", "hashing", "openai:MODEL"), an Embedder, CONFIGURED (the
        # environment's, else the brain's recorded one, else auto: reverie.api.embedding) or
        # None (lexical recall). Vectors are computed after cycles and by recall, never at ingest.
        self.embedder, self.embedder_name = choose_embedder(store, embedder)
        self._recorded = False
        self._usage = RecallUsage()
        self._usage_failed = False
        self._vectors = self._vector_search()
        self._distiller = distiller
        self._on_phase = on_phase

    @property
    def distiller(self) -> Distiller:
        """What plans a cycle's pages: the one given, else the extractive distiller, built at
        first use (remember and recall never need it)."""
        if self._distiller is None:
            self._distiller = _extractive(self.config, self.store, self.embedder)
        return self._distiller

    @distiller.setter
    def distiller(self, distiller: Distiller) -> None:
        self._distiller = distiller

    def _vector_search(self) -> VectorSearch | None:
        if self.embedder is None:
            return None
        from reverie.recall.vectors import VectorSearch

        return VectorSearch(
            self.embedder,
            window=self.config.recall.vector_window,
            kept=self.config.recall.vector_indexes,
            before_write=self._record_embedder,
        )

    @classmethod
    def open(
        cls,
        target: str | Path,
        *,
        config: Config | None = None,
        embedder: EmbedderLike = CONFIGURED,
        distiller: Distiller | None = None,
    ) -> Reverie:
        """Open (creating and migrating if needed) the brain store at ``target``.

        A SQLite file this process may not write (or a ``file:…?mode=ro`` URI) opens
        read-only when its schema is up to date, and raises
        :class:`~reverie.errors.StoreReadOnly` naming the migrations it needs otherwise.

        With no ``distiller`` given, a model configured by ``REVERIE_LLM_MODEL`` (and
        ``REVERIE_LLM_BASE_URL`` / ``REVERIE_LLM_API_KEY`` / ``REVERIE_LLM_PROVIDER``) distills;
        with none configured, the deterministic extractive distiller does.

        ``embedder``: by default the one ``--embedder`` / ``REVERIE_EMBEDDER`` / the config file
        names, else the one this brain recorded, else ``auto`` (MiniLM with the ``embed`` extra);
        one whose model differs from the brain's recorded embedder raises
        :class:`~reverie.errors.EmbedderMismatch` (:mod:`reverie.api.embedding`).
        """
        from reverie.store import open_store

        return cls.from_store(
            open_store(target), config=config, embedder=embedder, distiller=distiller
        )

    @classmethod
    def from_store(
        cls,
        store: BrainStore,
        *,
        config: Config | None = None,
        embedder: EmbedderLike = CONFIGURED,
        distiller: Distiller | None = None,
    ) -> Reverie:
        """:meth:`open` over a store already made (migrated here, the distiller chosen so)."""
        store.migrate()
        if distiller is None:
            from reverie.dream.llm_distill import llm_distiller_from_env

            redactor = Redactor((config or Config()).redaction)
            distiller = llm_distiller_from_env(cache=store, redactor=redactor)
        return cls(store, config=config, embedder=embedder, distiller=distiller)

    def close(self) -> None:
        self._write_usage()
        if self._vectors is not None:
            self._vectors.close()
        self.store.close()

    def __enter__(self) -> Reverie:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- episodes ---------------------------------------------------------------------------

    def now(self, given: datetime | None = None) -> datetime:
        """``given`` in UTC, else the time by :attr:`clock`: the one place the engine reads it.
        Everything under the facade (store, dream, recall, memory) is handed this ``now``."""
        return utc(given) if given else self.clock()

    def _clock(self, now: datetime | None) -> IngestClock:
        return IngestClock.at(self.now(now), self.config.dream.memory.future_skew_s)

    def remember(
        self,
        episode: Episode | dict[str, Any],
        *,
        scope: ScopeLike | None = None,
        now: datetime | None = None,
    ) -> Episode:
        """Store one episode (idempotent by id) and return it with its ``seq``.

        ``now`` is the ingest clock (read here when omitted): an episode dated more than
        ``MemoryConfig.future_skew_s`` after it is refused with :class:`InvalidInput`, and an
        episode given as a mapping without ``created_at`` is dated ``now``.
        """
        target = Scope.parse(scope) if scope is not None else None
        clock = self._clock(now)
        ep = admit(episode, target, clock)
        stored = self.store.append([ep], at=clock.received)
        return stored[0] if stored else self.store.episode(ep.id, tenant=ep.scope.tenant)

    def ingest(
        self,
        items: Iterable[Episode | dict[str, Any]],
        *,
        scope: ScopeLike | None = None,
        batch_size: int = 1000,
        now: datetime | None = None,
    ) -> IngestResult:
        """Store many episodes in batches; bad items (a future ``created_at`` among them, see
        :meth:`remember`) are reported by position, good ones stored."""
        from reverie.intake import ingest as ingest_items

        default = Scope.parse(scope) if scope is not None else None
        return ingest_items(self.store, items, default, self._clock(now), batch_size)

    # -- dreaming ---------------------------------------------------------------------------

    def _cycle(self) -> DreamCycle:
        from reverie.dream.stats import TalliedCycle
        from reverie.recall.vectors import cached

        return TalliedCycle(  # a DreamCycle that also counts its failures
            self.store,
            self.distiller,
            config=self.config.dream,
            embedder=cached(self.store, self.embedder),
            on_phase=self._on_phase,
            redactor=self.redactor,
        )

    def dream(
        self,
        scope: ScopeLike,
        *,
        now: datetime | None = None,
        dry_run: bool = False,
        cycle_id: str | None = None,
        review: bool = False,
    ) -> CycleReport:
        """Run one cycle for ``scope``; all its effects commit together or not at all.

        ``cycle_id`` names the cycle in advance (the HTTP service returns it before the cycle runs).
        ``review`` (docs/review.md): validate, then hold the changes as a pending plan instead of
        applying them (:meth:`plans`, :meth:`plan`, :meth:`apply_plan`, :meth:`reject_plan`).
        While a plan of ``scope`` is pending, a cycle that would change the store raises
        :class:`~reverie.errors.PlanPending` naming it (a dry run still runs).
        """
        from reverie.dream.review import note_held
        from reverie.errors import Conflict, LeaseLost, PlanPending

        when = self.now(now)
        target = Scope.parse(scope)
        hold = self._hold(target, when, dry_run=dry_run, review=review)
        for attempt in range(1, DREAM_ATTEMPTS + 1):
            try:
                report = self._cycle().run(
                    target, when, dry_run=dry_run, cycle_id=cycle_id, hold=hold
                )
                break
            except (LeaseLost, PlanPending):
                raise
            except Conflict as exc:  # another process committed a cycle of this scope meanwhile
                if attempt == DREAM_ATTEMPTS:
                    raise
                log.info("cycle of %s raced another (%s); dreaming again", target.key, exc)
        if not (dry_run or review) and self._vectors is not None:
            self._index_quietly(target)
        return note_held(report)

    def _hold(
        self, scope: Scope, when: datetime, *, dry_run: bool, review: bool
    ) -> Callable[[Changeset], None] | None:
        from reverie.dream.review import holder, refuse_if_pending

        if dry_run:
            return None
        refuse_if_pending(self.store, scope)
        return holder(self.store, when) if review else None

    def index(self, scope: ScopeLike, *, limit: int | None = None) -> int:
        """Embed ``scope``'s episodes not embedded yet (at most ``limit``) and its active pages'
        claims; return how many texts were embedded (cached ones cost nothing). ``dream`` calls
        it after each cycle; it needs an embedder (docs/recall.md)."""
        if self.embedder is None:
            raise InvalidInput("embedder", "indexing needs an embedder; open with embedder='auto'")
        from reverie.recall.vectors import index_scope

        target = Scope.parse(scope)
        pages = self.store.pages(target, ["active"])
        self._record_embedder()
        return index_scope(self.store, self.embedder, target, pages, limit=limit)

    def _record_embedder(self) -> None:
        """Record this engine's embedder in the brain before its first vector is stored."""
        if self._recorded or self.embedder is None:
            return
        from reverie.api.embedding import read_record, record_embedder

        if read_record(self.store) is None:
            record_embedder(self.store, self.embedder_name, self.embedder)
        self._recorded = True

    def reembed(self, embedder: EmbedderLike) -> int:
        """Switch the brain to ``embedder``: embed every scope's episodes and active pages with
        it and record it, so later opens use it; return how many texts were embedded. Open the
        engine with ``embedder=None`` to switch a brain whose recorded embedder differs."""
        from reverie.api.embedding import reembed

        computed = reembed(self.store, embedder)
        if self._vectors is not None:
            self._vectors.drop(s.key for s in self.store.scopes())
        return computed

    def _index_quietly(self, scope: Scope) -> None:
        try:
            self.index(scope)
        except Exception as exc:  # derived data: recall falls back to the lexical path
            log.warning("indexing %s failed: %s: %s", scope.key, type(exc).__name__, exc)

    def dream_all(
        self, *, now: datetime | None = None, dry_run: bool = False, review: bool = False
    ) -> list[CycleReport]:
        """One cycle for every scope that has episodes waiting; a scope whose plan awaits review
        is skipped unless ``dry_run``.

        A scope whose cycle fails changes nothing and stops no other: every other scope is
        dreamed, then :class:`~reverie.errors.ScopesFailed` names the failures and carries the
        other scopes' reports as ``done``.
        """
        from reverie.dream.review import waiting_plan
        from reverie.errors import each_scope, raise_failures

        scopes = self.store.pending_scopes()
        if not dry_run:
            scopes = [s for s in scopes if waiting_plan(self.store, s) is None]
        when = self.now(now)
        reports, failures = each_scope(
            scopes, lambda s: self.dream(s, now=when, dry_run=dry_run, review=review), "dream"
        )
        return raise_failures("dream", failures, reports)

    def undo(self, cycle_id: str, *, now: datetime | None = None) -> UndoReport:
        """Restore every page ``cycle_id`` touched and make its episodes eligible again."""
        from reverie.dream.archive import refuse_undo_of_archived
        from reverie.memory.undo import plan_undo

        refuse_undo_of_archived(self.store, cycle_id)  # an archived cycle: restore the bundle first
        changes, report = plan_undo(self.store, cycle_id, self.now(now))
        self.store.commit(changes)
        return report

    # -- review mode (logic in reverie.dream.review) ----------------------------------------

    def plans(
        self, scope: ScopeLike | None = None, *, status: str | None = "pending", limit: int = 50
    ) -> list[PendingPlan]:
        """Plans held for review, newest first; ``status=None`` lists them whatever became of
        them (pending, applied, rejected, stale)."""
        from reverie.dream.review import parse_status

        target = Scope.parse(scope) if scope is not None else None
        return self.store.plans(target, parse_status(status), limit)

    def plan(self, plan_id: str) -> PlanReview:
        """A plan with a readable diff of every page it would change and the cited episodes."""
        from reverie.dream.review import review

        return review(self.store, plan_id)

    def apply_plan(self, plan_id: str, *, now: datetime | None = None) -> CycleReport:
        """Commit a pending plan exactly as it was made and return the cycle's report.

        :class:`~reverie.errors.PlanStale` (the plan marked stale, nothing changed) when a page,
        the checkpoint or an episode it was built on moved since.
        """
        from reverie.dream.review import apply_plan

        report = apply_plan(self.store, plan_id, self.now(now))
        if self._vectors is not None:
            self._index_quietly(report.scope)
        return report

    def reject_plan(
        self, plan_id: str, *, reason: str | None = None, now: datetime | None = None
    ) -> PendingPlan:
        """Set a pending plan aside; its episodes stay eligible for the next cycle."""
        from reverie.dream.review import reject_plan

        return reject_plan(self.store, plan_id, self.now(now), reason)

    # -- reading ----------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        scope: ScopeLike,
        budget_tokens: int | None = None,
        *,
        now: datetime | None = None,
        as_of: datetime | None = None,
        include_org: bool | None = None,
        trace: RecallTrace | None = None,
    ) -> Recall:
        """Knowledge for ``query`` under ``budget_tokens``; empty (never raising) on failure.

        ``as_of``: answer as the brain stood then — the pages valid at that time, superseded ones
        included, and only evidence recorded by then (docs/memory.md).
        ``include_org`` (default ``RecallConfig.include_org``, off): also the tenant's org brain,
        its claims labelled ``org`` (:mod:`reverie.dream.promote`).
        ``trace``: a :class:`~reverie.recall.RecallTrace` to fill with why each unit was packed
        or cut (the signals and the budget decision; :mod:`reverie.recall.trace`).
        """
        from reverie.recall import recall as run_recall

        budget = self.config.recall.budget_tokens if budget_tokens is None else budget_tokens
        if budget < 0:
            raise InvalidInput("budget_tokens", "must be 0 or more")
        when = self.now(now)
        found = run_recall(
            self.store,
            query,
            Scope.parse(scope),
            budget,
            config=(
                self.config.recall
                if include_org is None
                else replace(self.config.recall, include_org=include_org)
            ),
            now=when,
            as_of=utc(as_of) if as_of is not None else None,
            vectors=self._vectors,
            redactor=self.redactor,
            trace=trace,
        )
        if trace is None and found.warning is None:  # an agent's recall (reverie.store.usage)
            units, tokens = len(found.items), found.used_tokens
            if self._usage.add(found.scope, when, units=units, tokens=tokens):
                self._write_usage()
        return found

    def recall_stats(self, scope: ScopeLike, since: datetime | None = None) -> list[RecallTally]:
        """How often recall of ``scope`` found something, per hour (from ``since``), oldest
        first: recalls, hits (at least one unit packed), units and tokens packed."""
        self._write_usage()
        return self.store.recall_stats(Scope.parse(scope), utc(since) if since else None)

    def _write_usage(self) -> None:
        """Write the recall counts gathered so far; a failure (a read-only database) loses
        them with one warning, never failing a recall."""
        tallies = self._usage.drain()
        try:
            self.store.record_recalls(tallies)
        except Exception as exc:  # counts only: recall itself must not fail for them
            if not self._usage_failed:
                log.warning("recall counts not recorded: %s", exc)
            self._usage_failed = True

    def search_episodes(
        self, query: str, scope: ScopeLike, *, limit: int = 10, raw: bool = False
    ) -> list[Episode]:
        """The episodes of ``scope`` that share terms with ``query``, best first (full-text
        rank): the evidence itself, where :meth:`recall` answers with what was learned.
        Redacted unless ``raw`` (as for :meth:`episode`)."""
        from reverie.recall import query_terms

        if limit < 1:
            raise InvalidInput("limit", "must be 1 or more")
        terms = query_terms(query)
        found = self.store.search_episodes(Scope.parse(scope), terms, limit)
        return self._shown([e for e, _ in found], raw, terms)

    def browse_episodes(
        self,
        scope: ScopeLike,
        wanted: EpisodeFilter | None = None,
        *,
        limit: int = 50,
        raw: bool = False,
    ) -> EpisodeList:
        """The episodes of ``scope`` that ``wanted`` describes (full-text words, outcome, a date
        range, consolidated or not, a tool): best text matches first, else newest first
        (:mod:`reverie.memory.browse`). Redacted unless ``raw`` (as for :meth:`episode`)."""
        from reverie.memory.browse import EpisodeFilter, browse
        from reverie.recall import query_terms

        wanted = wanted or EpisodeFilter()
        found = browse(self.store, Scope.parse(scope), wanted, limit=limit)
        shown = self._shown(found.episodes, raw, query_terms(wanted.text))
        return replace(found, episodes=shown)

    def pages_citing(self, episode_id: str, *, tenant: str | None = None) -> list[Page]:
        """The active pages of the episode's scope whose current revision cites it (the
        episode of ``tenant``, as in :meth:`episode`)."""
        episode = self.store.episode(episode_id, tenant=tenant or self.config.identity.tenant)
        citing = self.store.pages_citing(episode.scope, [episode_id]).get(episode_id, [])
        found = self.store.pages_by_id(episode.scope, citing)
        return [found[i] for i in citing if i in found]

    def pages(self, scope: ScopeLike, status: str | None = "active") -> list[Page]:
        """The pages of ``scope`` with ``status`` (active, superseded, retired; all or None:
        every page)."""
        wanted = None if status is None or status == "all" else [_status(status)]
        return self.store.pages(Scope.parse(scope), wanted)

    def page(self, page_id: str) -> Page:
        return self.store.page(page_id)

    def page_path(self, page_id: str) -> str:
        """The page's file in the Markdown mirror, relative to the mirror's directory
        (``memories/<slug>.md``, see :meth:`export_markdown`)."""
        from reverie.memory.mirror import mirror_path

        return mirror_path(self.store, self.store.page(page_id))

    def revisions(self, page_id: str) -> list[Revision]:
        return self.store.revisions(page_id)

    def why(self, page_id: str, *, raw: bool = False) -> Lineage:
        """A page, all its revisions, and every episode any revision cites (the page's
        tenant's: an org page cites episodes of its tenant's scopes), redacted unless ``raw``
        (as for :meth:`episode`)."""
        from reverie.models import Lineage

        page = self.store.page(page_id)
        revisions = self.store.revisions(page_id)
        cited = [e for r in revisions for e in r.citations]
        pages = sorted({p for r in revisions for c in r.claims for p in c.page_ids})
        found = self.store.episodes(cited, tenant=page.scope.tenant)
        return Lineage(
            page=page,
            revisions=revisions,
            episodes=self._shown(found, raw),
            cited_pages=pages,
        )

    def cycles(self, scope: ScopeLike | None = None, limit: int = 50) -> list[Cycle]:
        return self.store.cycles(Scope.parse(scope) if scope is not None else None, limit)

    def cycle(self, cycle_id: str) -> Cycle:
        return self.store.cycle(cycle_id)

    # -- service: what the HTTP and MCP edges read ------------------------------------------

    def episode(self, episode_id: str, *, tenant: str | None = None, raw: bool = False) -> Episode:
        """The episode ``episode_id`` of ``tenant`` (default: the tenant of
        :class:`~reverie.config.IdentityConfig`): ids are a tenant's own, two tenants may
        both have a ``b1``. :class:`~reverie.errors.NotFound` if that tenant has none.

        Every episode this engine hands out is redacted by :attr:`redactor`
        (:meth:`~reverie.redaction.Redactor.episode`): the CLI, the HTTP service, MCP and the
        integrations show nothing else. ``raw=True`` is for code in this process that needs
        the evidence as stored (and for ``reverie why --raw``, run by whoever holds the
        database file); no network surface passes it."""
        found = self.store.episode(episode_id, tenant=tenant or self.config.identity.tenant)
        return self._shown([found], raw)[0]

    def episodes(
        self, episode_ids: Iterable[str], *, tenant: str | None = None, raw: bool = False
    ) -> list[Episode]:
        """The episodes of ``tenant`` (as in :meth:`episode`) among ``episode_ids`` that
        exist, by ``seq``; archived ones fetched back; redacted unless ``raw``."""
        found = self.store.episodes(episode_ids, tenant=tenant or self.config.identity.tenant)
        return self._shown(found, raw)

    def _shown(
        self, episodes: list[Episode], raw: bool, terms: Sequence[str] = ()
    ) -> list[Episode]:
        """Stored episodes as they leave the engine: archived ones fetched back, rows past
        today's limits noted, and (unless ``raw``) redacted. Those found by ``terms`` that
        redaction changed are kept only if a term still meets their shown text: a hit
        inside a redacted secret would tell the asker the secret is there."""
        from reverie.dream.archive import readable
        from reverie.recall.query import stem, stems

        found = readable(self.store, episodes)
        if raw:
            return found
        wanted = {stem(t) for t in terms}
        shown = [(e, self.redactor.episode(e)) for e in found]
        return [
            red
            for e, red in shown
            if red is e or not wanted or wanted & stems(f"{red.text} {' '.join(red.entities)}")
        ]

    @property
    def keys(self) -> KeyRing:
        """API keys of the HTTP service: create, list, revoke, authenticate."""
        from reverie.keys import KeyRing

        return KeyRing(self.store, self.now)

    def status(self, scope: ScopeLike | None = None) -> StoreStats:
        return self.store.stats(Scope.parse(scope) if scope is not None else None)

    def scopes(self) -> list[Scope]:
        """Every scope, the org brains after the agents' ones."""
        return sorted(self.store.scopes(), key=lambda s: (s.is_org, s.key))

    # -- memory over time (logic in reverie.memory.revisions, reverie.memory.mirror) -----------

    def restore(self, page_id: str, revision: int, *, now: datetime | None = None) -> Cycle:
        """A new revision of ``page_id`` with the content of ``revision``; undo it like a cycle."""
        from reverie.memory.revisions import plan_restore

        changes = plan_restore(self.store, page_id, revision, self.now(now))
        self.store.commit(changes)
        return self.store.cycle(changes.cycle.id if changes.cycle else "")

    def edit_page(
        self,
        page_id: str,
        *,
        revision: int,
        title: str | None = None,
        kind: str | None = None,
        claims: Iterable[tuple[str, Iterable[str]]] | None = None,
        now: datetime | None = None,
    ) -> EditReport:
        """A person's edit of a page as they read it at ``revision``: a pinned ``human``
        revision, the same as an edit of the Markdown mirror (:mod:`reverie.memory.edits`).
        Each of ``title``, ``kind``, ``claims`` (text and cited episode ids; none: the edit's own
        episode) left out stays as it is; undo it like a cycle."""
        from reverie.memory.edits import edit_page

        lines = None if claims is None else [(text, tuple(ids)) for text, ids in claims]
        when = self.now(now)
        return edit_page(
            self.store, page_id, revision=revision, now=when, title=title, kind=kind, claims=lines
        )

    def verify(self, scope: ScopeLike | None = None) -> VerifyReport:
        """Re-derive the sha256 of every stored revision; list what does not match."""
        from reverie.memory.revisions import verify

        scopes = [Scope.parse(scope)] if scope is not None else self.store.scopes()
        return verify(self.store, scopes)

    def dream_stats(self, scope: ScopeLike | None = None) -> list[DreamStats]:
        """Cumulative stats (cycles completed and failed, model calls, tokens, time) of
        ``scope``, or of every scope that has dreamed."""
        return self.store.dream_stats(Scope.parse(scope) if scope is not None else None)

    def journal(self, scope: ScopeLike, limit: int = 50) -> list[JournalEntry]:
        """The dream journal of ``scope``: its newest ``limit`` entries, oldest first."""
        return self.store.journal(Scope.parse(scope), limit)

    def export_markdown(
        self,
        scope: ScopeLike,
        directory: str | Path,
        *,
        line_limit: int = 200,
        journal: bool = False,
        layout: str = "reverie",
    ) -> ExportReport:
        """Write the Markdown mirror of ``scope`` (MEMORY.md + memories/*.md) to ``directory``;
        ``layout="claude-code"``: Claude Code's memory folder instead (MEMORY.md + one file
        per active page, :mod:`reverie.memory.claude_code_layout`), written one way. The folder is
        remembered, so that an erasure rewrites it at once (docs/privacy.md)."""
        from reverie.memory.claude_code_layout import export_claude_code
        from reverie.memory.mirror import export_markdown

        target = Scope.parse(scope)
        if layout == "claude-code":
            return export_claude_code(
                self.store, target, Path(directory), line_limit=line_limit, recorded_at=self.now()
            )
        if layout != "reverie":
            raise InvalidInput("layout", f"{layout!r} is not a layout (reverie or claude-code)")
        return export_markdown(
            self.store,
            target,
            Path(directory),
            line_limit=line_limit,
            journal=journal,
            recorded_at=self.now(),
        )

    def import_markdown(
        self, scope: ScopeLike, directory: str | Path, *, now: datetime | None = None
    ) -> ImportReport:
        """Turn a person's edits of the mirror into new revisions authored ``human``."""
        from reverie.memory.mirror import import_markdown

        when = self.now(now)
        return import_markdown(self.store, Scope.parse(scope), Path(directory), now=when)

    # -- erasure (logic in reverie.memory.erasure; docs/privacy.md) ----------------------------

    def forget(  # noqa: PLR0913 (keyword-only: one per target of the request)
        self,
        *,
        episodes: Iterable[str] = (),
        page: str | None = None,
        subject: str | None = None,
        older_than: str | float | timedelta | None = None,
        scope: ScopeLike | None = None,
        agent: str | None = None,
        tenant: str | None = None,
        apply: bool = False,
        reason: str = "",
        request_id: str | None = None,
        vacuum: bool = False,
        now: datetime | None = None,
    ) -> Receipt:
        """Erase episodes, a page, a scope, an agent, a tenant, a subject or what is older than
        ``older_than`` (``"400d"``), following provenance to every derived byte; a dry run
        unless ``apply``. The receipt says what was (or would be) erased, and what the
        database files still hold (``physical``); ``vacuum`` also rewrites the tables that hold
        old row versions (PostgreSQL's ``VACUUM FULL``, which locks each while it runs)."""
        from reverie.config import parse_duration
        from reverie.memory.erasure import ForgetRequest
        from reverie.memory.erasure import forget as run_forget

        request = ForgetRequest(
            episodes=tuple(episodes),
            page=page,
            subject=subject,
            older_than=None if older_than is None else parse_duration(older_than, "older_than"),
            scope=Scope.parse(scope) if scope is not None else None,
            agent=agent,
            tenant=tenant,
            reason=reason,
            request_id=request_id,
            vacuum=vacuum,
        )
        receipt = run_forget(self.store, request, self.now(now), apply=apply)
        if apply and self._vectors is not None:
            self._vectors.drop(s.key for s in self.store.scopes())
        return receipt

    def erasure(self, erasure_id: str) -> Receipt:
        """A stored erasure receipt, with its tombstones."""
        return self.store.erasure_receipt(erasure_id)

    def erasures(self, limit: int = 50) -> list[Receipt]:
        """The newest erasure receipts, newest first."""
        return self.store.erasure_receipts(limit=limit)

    def finish_erasures(self, *, now: datetime | None = None) -> list[Receipt]:
        """Finish the file work of erasures a crash interrupted; those still unfinished."""
        from reverie.memory.erasure import finish_pending

        return finish_pending(self.store, self.now(now))

    # -- the conventional verbs (mapping in reverie.api.verbs and docs/api.md) ----------------

    def _named(self, user_id: str | None, agent_id: str | None, scope: ScopeLike | None) -> Scope:
        from reverie.api.verbs import scope_for

        return scope_for(self.config.identity, user_id=user_id, agent_id=agent_id, scope=scope)

    def add(
        self,
        data: verbs.AddInput,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        scope: ScopeLike | None = None,
        now: datetime | None = None,
    ) -> list[MemoryItem]:
        """Store a text, chat messages or an episode as episodes of the scope
        ``tenant/agent_id/user_id`` (or ``scope``); ``run_id`` is their session. Returns the
        stored episodes as memories; a dream cycle later distills them into pages."""
        target = self._named(user_id, agent_id, scope)
        from reverie.api import verbs

        return verbs.add(self, data, target, run_id=run_id, metadata=metadata, now=now)

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        scope: ScopeLike | None = None,
        limit: int = 10,
        filters: dict[str, Any] | None = None,
        now: datetime | None = None,
    ) -> list[MemoryItem]:
        """Memories for ``query``, best first, each with a ``score`` in [0, 1]: recall's pages
        (the claims that matched) and episodes, kept when they match ``filters``."""
        target = self._named(user_id, agent_id, scope)
        from reverie.api import verbs

        return verbs.search(self, query, target, limit=limit, filters=filters, now=now)

    def get(self, memory_id: str, *, tenant: str | None = None) -> MemoryItem:
        """One memory by id: a page (whatever its status) or an episode of ``tenant`` (default:
        :class:`~reverie.config.IdentityConfig`'s; episode ids are a tenant's own)."""
        from reverie.api import verbs

        return verbs.get(self, memory_id, tenant)

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        scope: ScopeLike | None = None,
        limit: int = 100,
        filters: dict[str, Any] | None = None,
    ) -> list[MemoryItem]:
        """The scope's active pages (any status ``filters`` names), then its episodes no cycle
        has consolidated yet."""
        target = self._named(user_id, agent_id, scope)
        from reverie.api import verbs

        return verbs.get_all(self, target, limit=limit, filters=filters)

    def history(self, memory_id: str, *, tenant: str | None = None) -> list[MemoryEvent]:
        """How a memory changed: one event per page revision (ADD, UPDATE, SUPERSEDE, RETIRE,
        RESTORE), oldest first (an episode's ``tenant`` as in :meth:`get`)."""
        from reverie.api import verbs

        return verbs.history(self, memory_id, tenant)

    def delete(
        self, memory_id: str, *, tenant: str | None = None, now: datetime | None = None
    ) -> Deletion:
        """Erase the page or episode ``memory_id`` (an episode's ``tenant`` as in :meth:`get`),
        applied at once (:meth:`forget`; the call is the request): the returned ``Deletion``
        names the erasure receipt. Not undoable; to take a page out of recall and keep it,
        :meth:`retire` it."""
        from reverie.api import verbs

        return verbs.delete(self, memory_id, self.now(now), tenant)

    def retire(
        self, memory_id: str, *, tenant: str | None = None, now: datetime | None = None
    ) -> Retirement:
        """Retire the page ``memory_id``: a revision, undoable with ``undo(r.cycle_id)``; the
        page leaves recall and stays readable in ``why`` and ``history``."""
        from reverie.api import verbs

        return verbs.retire(self, memory_id, self.now(now), tenant)
