"""The store's records: what goes in (the changeset, a plan, an erasure, a key) and what reads
hand back (stats, leases, bundles, vector units, schedule rows, receipts). Plain data, no I/O.

:mod:`reverie.store.base` declares the protocols over these and imports nothing else of the
store; the modules that implement a part of the store (plans, archive, vectors, schedule,
erasure) import their records from here and re-export them where callers look for them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reverie.errors import InvalidInput, StoreError
from reverie.models import Cycle, CycleReport, Episode, Revision, Scope

__all__ = [
    "EMBED_CHARS",
    "ApiKey",
    "BundleInfo",
    "BundleSwap",
    "Changeset",
    "CycleTally",
    "DreamStats",
    "Erased",
    "Erasure",
    "ExportRecord",
    "JournalEntry",
    "Lease",
    "ModelCost",
    "Observation",
    "PageDrop",
    "PageWrite",
    "PendingPlan",
    "PlanStatus",
    "Promotion",
    "PromotionRecord",
    "RecallTally",
    "Receipt",
    "RevisionRewrite",
    "Rights",
    "ScheduleRecord",
    "StepHook",
    "StoreStats",
    "Strength",
    "Tombstone",
    "VectorRow",
    "VectorUnit",
    "embedded_text",
    "is_stub",
    "no_step",
]

EMBED_CHARS = 1000
"""Only the start of a long episode is embedded (the model reads 128 word pieces anyway)."""


def embedded_text(episode: Episode) -> str:
    """The text of ``episode`` that gets a vector (its content hash keys the cache)."""
    return episode.text[:EMBED_CHARS]


def is_stub(ep: Episode) -> bool:
    """True for the hot-store stub of an archived episode (its text is in the cold tier)."""
    return not ep.situation and not ep.action


StepHook = Callable[[str], None]
"""Called with a step name between the writes of a commit (fault injection, progress)."""


def no_step(_step: str) -> None:
    """The :data:`StepHook` of a commit nobody watches."""


@dataclass(frozen=True, kw_only=True)
class ModelCost:
    """What model calls cost: calls made, answers served from the response cache, tokens.

    The base of every record that counts model cost (:class:`StoreStats`, :class:`DreamStats`,
    :class:`~reverie.store.base.CycleTally`); keyword-only, so it adds the same four fields to
    each without touching their positional ones.
    """

    model_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Strength:
    """A page's reinforcement over the cycles not undone (see :mod:`reverie.dream.decay`)."""

    page_id: str
    episodes: int
    cycles: int
    last_seen: datetime


@dataclass(frozen=True)
class JournalEntry:
    """One entry of the dream journal: what a cycle, undo, restore or import did, and why."""

    scope: Scope
    cycle_id: str | None
    created_at: datetime
    text: str


@dataclass(frozen=True)
class Lease:
    """The right to dream one scope until ``expires_at`` (:mod:`reverie.store.sql.leases`).

    ``token`` grows by one with every new holder (a fencing token).
    """

    scope: Scope
    owner: str
    token: int
    acquired_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class DreamStats(ModelCost):
    """Cumulative dream statistics of one scope, kept apart from its checkpoint."""

    scope: Scope
    cycles_completed: int = 0
    cycles_failed: int = 0
    duration_s: float = 0.0
    episodes: int = 0
    last_completed_at: datetime | None = None
    last_failed_at: datetime | None = None
    last_error: str | None = None


@dataclass(frozen=True)
class RecallTally:
    """Recalls of one scope within one hour (``hour``: its start, UTC): how many asked, how many
    packed at least one unit (``hits``), and the units and tokens they packed, summed."""

    scope: Scope
    hour: datetime
    recalls: int = 0
    hits: int = 0
    units: int = 0
    tokens: int = 0


@dataclass(frozen=True)
class PromotionRecord:
    """A stored promotion: which org page copies which agent page, and as of which revision."""

    org_page_id: str
    source_page_id: str
    source_scope: Scope
    source_revision: int
    promoted_at: datetime
    updated_at: datetime
    cycle_id: str


@dataclass(frozen=True)
class StoreStats(ModelCost):
    """Counts of what a brain (or the whole store) holds, and the model cost of its cycles."""

    episodes: int
    consolidated: int
    pages: int
    active_pages: int
    revisions: int
    cycles: int
    checkpoint: int
    model_latency_s: float = 0.0


# -- API keys (reverie.keys mints and checks them) -------------------------------------------------


class Rights(StrEnum):
    """What a key may do; each right includes the ones before it."""

    READ = "read"
    WRITE = "write"
    ADMIN = "admin"

    def includes(self, other: Rights) -> bool:
        return _LEVELS[self] >= _LEVELS[other]


_LEVELS = {Rights.READ: 0, Rights.WRITE: 1, Rights.ADMIN: 2}


class ApiKey(BaseModel):
    """A stored key: who it lets in, and how to recognise its secret (never the secret)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str = ""
    tenant: str
    agent: str | None = None
    rights: Rights = Rights.READ
    salt: str = Field(repr=False)
    secret_hash: str = Field(repr=False)
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def bound_to(self) -> str:
        """``tenant`` or ``tenant/agent``: the part of the brain this key may touch."""
        return f"{self.tenant}/{self.agent}" if self.agent else self.tenant

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def public(self) -> dict[str, object]:
        """What may be shown about the key: everything but the salt and the hash."""
        return self.model_dump(mode="json", exclude={"salt", "secret_hash"}) | {
            "bound_to": self.bound_to
        }


# -- the changeset a cycle, an undo, an edit or an import commits ----------------------------------


@dataclass(frozen=True)
class PageWrite:
    """A new revision for a page; ``expected_revision`` is the number read (None: new page)."""

    scope: Scope
    topic_key: str
    revision: Revision
    expected_revision: int | None


@dataclass(frozen=True)
class Observation:
    """A cycle re-observed a page's pattern: ``episodes`` new ones, the latest at ``last_seen``."""

    page_id: str
    episodes: int
    last_seen: datetime


@dataclass(frozen=True)
class CycleTally(ModelCost):
    """What one dream cycle adds to its scope's cumulative stats (:class:`DreamStats`).

    A committed cycle's tally lands in the cycle's transaction; a failed one (an exception, or
    every group rejected so nothing was committed) is recorded by a separate small write after
    the failure (:meth:`Stats.record_tally`), since the failed cycle has no transaction to join.
    """

    scope: Scope
    at: datetime
    failed: bool = False
    duration_s: float = 0.0
    episodes: int = 0
    error: str | None = None


@dataclass(frozen=True)
class Promotion:
    """An org copy of a reinforced page (:mod:`reverie.dream.promote`).

    ``write`` is the org page's new revision (scope ``tenant/_org``); the source page, its scope
    and the revision copied are the attribution.
    """

    write: PageWrite
    source_page_id: str
    source_scope: Scope
    source_revision: int
    cycles: int


@dataclass(frozen=True, kw_only=True)
class Changeset:
    """Everything one cycle (or one undo, edit or import) changes, applied atomically by
    :meth:`Store.commit`.

    ``at`` is when the change happens, by the caller's clock: the store stamps the checkpoint,
    an undo and a journal entry without a cycle with it, and fences leases against it (a
    cycle's own ``finished_at`` first), so no store code reads a clock of its own.
    """

    scope: Scope
    expected_checkpoint: int
    checkpoint: int
    page_writes: Sequence[PageWrite] = ()
    marks: Sequence[str] = ()
    mark_cycle: str | None = None
    unmark_cycle: str | None = None
    cycle: Cycle | None = None
    undone_cycle: str | None = None
    # reinforcement rows, the journal entry, and episodes recorded with the change (a
    # person's edit is stored as an episode so the claims it adds can cite it)
    observations: Sequence[Observation] = ()
    journal: str | None = None
    episodes: Sequence[Episode] = ()
    # the cycle's addition to the cumulative stats (dream cycles only, not undo/import)
    tally: CycleTally | None = None
    # org copies of reinforced pages: the only writes that leave ``scope``
    promotions: Sequence[Promotion] = ()
    # the reviewed plan this changeset applies; commit() marks it applied in the same
    # transaction (reverie.store.sql.plans)
    plan_id: str | None = None
    at: datetime
    """The caller's clock (a cycle's, an edit's ``now``): the store reads none of its own."""

    @property
    def landed_at(self) -> datetime:
        """When the change lands: the cycle's finish when it records one, else ``at``."""
        if self.cycle is not None and self.cycle.finished_at is not None:
            return self.cycle.finished_at
        return self.at


# -- plans held for review (reverie.store.sql.plans) -----------------------------------------------


_COUNTS = ("created", "revised", "merged", "superseded", "retired")


class PlanStatus(StrEnum):
    PENDING = "pending"
    APPLIED = "applied"
    REJECTED = "rejected"
    STALE = "stale"


@dataclass(frozen=True)
class PendingPlan:
    """A stored plan: the changeset a reviewed cycle would commit, and what became of it."""

    id: str
    scope: Scope
    cycle_id: str
    status: PlanStatus
    created_at: datetime
    changes: Changeset = field(repr=False)
    settled_at: datetime | None = None
    reason: str | None = None

    @property
    def report(self) -> CycleReport:
        """The report of the cycle the plan would record (counts, changes, model cost)."""
        if self.changes.cycle is None:
            raise StoreError(f"plan {self.id} holds no cycle record")
        return self.changes.cycle.report

    def summary(self) -> dict[str, Any]:
        """The plan without its changeset, as plain JSON (listing, ``--json``)."""
        r = self.report
        return {
            "id": self.id,
            "scope": self.scope.key,
            "cycle_id": self.cycle_id,
            "status": str(self.status),
            "created_at": self.created_at.isoformat(),
            "settled_at": self.settled_at.isoformat() if self.settled_at else None,
            "reason": self.reason,
            "pages": len(self.changes.page_writes),
            "episodes": len(self.changes.marks),
            "checkpoint": [self.changes.expected_checkpoint, self.changes.checkpoint],
            "counts": {k: getattr(r, k) for k in _COUNTS},
        }


# -- the cold tier's bundles (reverie.store.sql.archive) -------------------------------------------


@dataclass(frozen=True)
class BundleInfo:
    """One archived bundle: ``hash`` is ``sha256:`` + the hex digest of its bytes."""

    hash: str
    scope: Scope
    episodes: int
    bytes: int
    first_seq: int
    last_seq: int
    created_at: datetime
    restored_at: datetime | None = None

    @property
    def file_name(self) -> str:
        return bundle_file(self.hash)


def bundle_name(data: bytes) -> str:
    """A bundle's name: ``sha256:`` and the hex digest of its bytes (what each read checks)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def bundle_file(bundle_hash: str) -> str:
    """The file name of a bundle kept beside the database (``<hex>.jsonl.gz``); a name that is
    no sha256 (it could reach outside the folder) is :class:`InvalidInput`."""
    digest = bundle_hash.removeprefix("sha256:")
    if len(digest) != 64 or any(ch not in "0123456789abcdef" for ch in digest):
        raise InvalidInput("bundle", f"{bundle_hash!r} is not a sha256 bundle name")
    return f"{digest}.jsonl.gz"


# -- vector units (reverie.store.sql.embeddings) ---------------------------------------------


@dataclass(frozen=True)
class VectorUnit:
    """One thing recall can find by vector: an episode (``ref`` = its id) or a page claim
    (``ref`` = ``page_id#revision#index``), with the content hash its vector is cached under."""

    scope: Scope
    kind: str
    ref: str
    hash: str
    seq: int | None = None


@dataclass(frozen=True)
class VectorRow:
    """A stored unit with its vector, as an in-memory index loads it (``n`` ascending)."""

    n: int
    kind: str
    ref: str
    hash: str
    vector: bytes


# -- the scheduler's row per scope (reverie.store.sql.schedule) ------------------------------------


@dataclass(frozen=True)
class ScheduleRecord:
    """What the store remembers about one scope's schedule, plus live facts read with it."""

    scope: Scope
    first_seen: datetime
    last_run: datetime | None
    last_success: datetime | None
    failures: int
    running_owner: str | None
    running_since: datetime | None
    last_status: str | None
    last_cycle_id: str | None
    last_message: str | None
    version: int
    pending: int
    crashed: bool


# -- erasure: the plan, and the receipt and tombstones it leaves (docs/privacy.md) -----------------


@dataclass(frozen=True)
class Tombstone:
    """A revision an erasure rewrote (``hash_after``: its new hash) or deleted (None)."""

    erasure_id: str
    page_id: str
    revision: int
    scope: Scope
    hash_before: str
    hash_after: str | None
    at: datetime
    reason: str
    request_id: str

    def to_json(self) -> dict[str, Any]:
        return {
            "page_id": self.page_id,
            "revision": self.revision,
            "scope": self.scope.key,
            "hash_before": self.hash_before,
            "hash_after": self.hash_after,
            "at": self.at.isoformat(),
            "reason": self.reason,
            "request_id": self.request_id,
        }


@dataclass(frozen=True)
class RevisionRewrite:
    """A revision re-derived without the erased evidence (same page and number, new hash)."""

    scope: Scope
    revision: Revision
    hash_before: str
    current: bool


@dataclass(frozen=True)
class PageDrop:
    """A page deleted whole; ``revisions`` are the (number, hash) the plan read."""

    page_id: str
    scope: Scope
    revisions: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class BundleSwap:
    """An archive bundle that held erased episodes, and the one replacing it (None: it held
    nothing else)."""

    old: BundleInfo
    new: BundleInfo | None


@dataclass(frozen=True)
class ExportRecord:
    """Where a scope was exported: a Markdown mirror folder or a training file."""

    path: str
    kind: str
    scope: Scope
    first_at: datetime
    last_at: datetime


@dataclass(frozen=True)
class Erasure:
    """Everything one erasure removes, as the planner read it; applied by
    :func:`reverie.store.sql.erasure.erase` all or nothing."""

    id: str
    request_id: str
    at: datetime
    reason: str
    request: Mapping[str, Any]
    episodes: Sequence[Episode] = ()
    rewrites: Sequence[RevisionRewrite] = ()
    drops: Sequence[PageDrop] = ()
    topic_keys: Mapping[str, str] = field(default_factory=dict)
    bundles: Sequence[BundleSwap] = ()
    scopes: Sequence[Scope] = ()
    """Scopes erased whole (their rows in every table)."""
    touched: Sequence[Scope] = ()
    """Scopes whose reports, journal, plans and messages are scrubbed of ``needles``."""
    needles: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    pending: Mapping[str, Any] = field(default_factory=dict)
    counted: Mapping[str, int] = field(default_factory=dict)
    """Counts the planner knows and the store cannot (claims dropped, files out of reach)."""

    @property
    def episode_ids(self) -> frozenset[str]:
        return frozenset(e.id for e in self.episodes)

    def tombstones(self) -> list[Tombstone]:
        """A tombstone per revision rewritten, then per revision of each page deleted."""
        return [
            Tombstone(self.id, w.revision.page_id, w.revision.number, w.scope, w.hash_before,
                      w.revision.hash, self.at, self.reason, self.request_id)
            for w in self.rewrites
        ] + [
            Tombstone(self.id, d.page_id, number, d.scope, digest, None, self.at, self.reason,
                      self.request_id)
            for d in self.drops
            for number, digest in d.revisions
        ]  # fmt: skip


@dataclass(frozen=True)
class Erased:
    """What one erasure transaction did: rows removed or rewritten per store area, and the
    tables whose old row versions it left in the database files until they are vacuumed
    (PostgreSQL keeps a deleted or updated row's bytes in a dead tuple; SQLite overwrites
    them, ``secure_delete``)."""

    counts: Mapping[str, int]
    residue: Sequence[str] = ()
    wal: bool = False
    """Whether the write-ahead log keeps them too, after the erasure's scrub."""

    def recorded(self) -> dict[str, Any]:
        """What the receipt's details keep of it (read by :attr:`Receipt.physical`)."""
        return {"residue": {"tables": list(self.residue), "wal": self.wal}}


@dataclass(frozen=True)
class Receipt:
    """What an erasure did (or, for a dry run, would do)."""

    id: str
    request_id: str
    created_at: datetime
    request: Mapping[str, Any]
    counts: Mapping[str, int]
    details: Mapping[str, Any]
    applied: bool = True
    finished_at: datetime | None = None
    tombstones: Sequence[Tombstone] = ()

    @property
    def pending(self) -> Mapping[str, Any]:
        """File work still due after the commit (none once ``finished_at`` is set)."""
        return {} if self.finished_at else dict(self.details.get("pending") or {})

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "request_id": self.request_id,
            "applied": self.applied,
            "created_at": self.created_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "request": dict(self.request),
            "counts": dict(self.counts),
            **{k: v for k, v in self.details.items() if k != "pending"},
            "pending": dict(self.pending),
            "physical": self.physical,
            "tombstones": [t.to_json() for t in self.tombstones],
        }

    @property
    def physical(self) -> dict[str, Any]:
        """What the database files still hold of the erased rows, and how to purge it:
        ``tables`` keep old row versions until ``VACUUM FULL`` (``vacuumed``: the tables the
        erasure vacuumed itself, ``forget --vacuum``); ``wal``: the write-ahead log written
        before holds them until its segments are recycled (and archives, backups, replicas
        until rotated). ``purge`` is what an operator still runs."""
        residue = self.details.get("residue") or {}
        done = bool(self.request.get("vacuum")) and self.finished_at is not None
        touched = list(residue.get("tables") or [])
        tables = [] if done else touched
        purge = [f"VACUUM FULL {', '.join(tables)}"] if tables else []
        if residue.get("wal"):
            purge.append(
                "CHECKPOINT, then let PostgreSQL recycle the WAL segments written before it;"
                " rotate WAL archives, base backups and replicas that hold them"
            )
        vacuumed = touched if done else []
        return {"tables": tables, "vacuumed": vacuumed, "wal": bool(residue.get("wal")),
                "purge": purge}  # fmt: skip
