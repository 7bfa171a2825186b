"""The cold tier: old consolidated episodes move into content-addressed, verified bundles.

Retention is explicit — nothing here runs unless ``reverie archive --older-than DAYS --apply``
(or :meth:`Archive.run` with ``apply=True``) asks; by default it is a dry run. DESIGN invariant 3:
episodes leave the hot store only after the archive holding them is verified.

A **bundle** is the gzipped JSON-lines of one scope's episodes (each line the episode as stored,
with its ``seq`` but not its consolidation mark, which stays on the hot stub; canonical JSON:
sorted keys, no spaces), ``seq`` ascending, compressed with a fixed level and a zero
timestamp, so the same episodes always give the same bytes (for a given zlib). It is named by the
sha256 of those bytes. On SQLite it is the file ``<data dir>/archive/<hex>.jsonl.gz`` next to the
database, never anywhere else, written atomically (temporary file, fsync, rename); on PostgreSQL,
whose clients share no folder, it is a row of the database under the same name
(:class:`StoredBundles`, :class:`~reverie.store.base.BundleBytes`). Everything below holds for both.

**Verification** reads the file back from disk before anything changes: the bytes must hash to
the name, decompress, parse as the same episodes (every fingerprint equal to the stored one), in
the same order. Only then does one transaction index the bundle and turn the episodes into stubs
(:mod:`reverie.store.sql.archive`). A failed verification raises and removes nothing.

Unconsolidated episodes, and episodes of undone cycles, are never archived. ``why``, the cycle's
page history and the training export read archived episodes back through :func:`resolve`.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from reverie.errors import (
    ArchiveUnreadable,
    InvalidInput,
    NotFound,
    ReverieError,
    UndoRefused,
    each_scope,
    raise_failures,
)
from reverie.files import write_atomically
from reverie.limits import MAX_METADATA_DEPTH, json_depth
from reverie.models import Episode, Scope
from reverie.store.base import BrainStore, BundleBytes
from reverie.store.records import BundleInfo, bundle_file, bundle_name, is_stub

__all__ = [
    "Archive",
    "ArchiveRun",
    "BundleFiles",
    "StoredBundles",
    "VerificationFailed",
    "archive_root",
    "bundle_bytes",
    "bundle_storage",
    "has_cold_tier",
    "readable",
    "refuse_undo_of_archived",
    "resolve",
]

BUNDLE_LIMIT = 10_000
_LEVEL = 9


class VerificationFailed(ReverieError):
    """A bundle read back from disk is not what was written; nothing was removed."""


def bundle_bytes(episodes: Sequence[Episode]) -> bytes:
    """The deterministic gzipped JSON-lines bytes of ``episodes`` (seq ascending)."""
    lines = [
        json.dumps(
            ep.model_dump(mode="json", exclude={"consolidated_in"}),
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        for ep in sorted(episodes, key=lambda e: e.seq or 0)
    ]
    return gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=_LEVEL, mtime=0)


def _parse_bundle(data: bytes) -> list[Episode]:
    text = gzip.decompress(data).decode()
    return [Episode.model_validate_json(line) for line in text.split("\n") if line]


class BundleFiles:
    """Bundles on disk under one folder. Tests subclass it to fail a read or a write."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, bundle_hash: str) -> Path:
        return self.root / bundle_file(bundle_hash)

    def write(self, bundle_hash: str, data: bytes) -> None:
        write_atomically(self.path(bundle_hash), data, field="bundle")

    def read(self, bundle_hash: str) -> bytes:
        try:
            return self.path(bundle_hash).read_bytes()
        except FileNotFoundError:
            raise NotFound(f"no archive bundle {bundle_hash} under {self.root}") from None

    def where(self, bundle_hash: str) -> str:
        return str(self.path(bundle_hash))


class StoredBundles:
    """Bundles kept by the database itself (:class:`~reverie.store.base.BundleBytes`)."""

    def __init__(self, store: BundleBytes) -> None:
        self.store = store

    def write(self, bundle_hash: str, data: bytes) -> None:
        self.store.bundle_put(bundle_hash, data)

    def read(self, bundle_hash: str) -> bytes:
        data = self.store.bundle_get(bundle_hash)
        if data is None:
            raise NotFound(f"no archive bundle {bundle_hash} in the database")
        return data

    def where(self, bundle_hash: str) -> str:
        return f"archive_blobs row {bundle_hash}"


def has_cold_tier(store: BrainStore) -> bool:
    """Whether ``store`` can archive: it keeps the index, and the bytes somewhere lasting (in
    the database, or as files beside a database file)."""
    return isinstance(store, BundleBytes) or getattr(store, "path", ":memory:") != ":memory:"


def archive_root(store: BrainStore) -> Path:
    """``<folder of the database>/archive``, where a file store keeps its bundles."""
    path = getattr(store, "path", ":memory:")
    if isinstance(store, BundleBytes) or path == ":memory:":
        raise InvalidInput("db", "the cold tier's files need a database file (not :memory:)")
    return Path(path).resolve().parent / "archive"


def bundle_storage(store: BrainStore) -> BundleFiles | StoredBundles:
    """Where ``store``'s bundles are kept: in the database, or files beside it."""
    if isinstance(store, BundleBytes):
        return StoredBundles(store)
    return BundleFiles(archive_root(store))


@dataclass
class ArchiveRun:
    """What an archive run did (or, for a dry run, would do)."""

    applied: bool
    cutoff: datetime
    bundles: list[BundleInfo] = field(default_factory=list)
    episodes: int = 0
    bytes_hot: int = 0

    @property
    def bytes_cold(self) -> int:
        return sum(b.bytes for b in self.bundles)


class _Files(Protocol):
    def write(self, bundle_hash: str, data: bytes) -> None: ...

    def read(self, bundle_hash: str) -> bytes: ...

    def where(self, bundle_hash: str) -> str: ...


class Archive:
    """Moves episodes to and from the cold tier of ``store``'s database."""

    def __init__(self, store: BrainStore, files: _Files | None = None) -> None:
        self.store = store
        self.index: BrainStore = store
        self.files: _Files = files or bundle_storage(store)

    def run(
        self,
        older_than: timedelta,
        now: datetime,
        *,
        apply: bool = False,
        scopes: Sequence[Scope] | None = None,
        limit: int = BUNDLE_LIMIT,
    ) -> ArchiveRun:
        """Archive consolidated episodes created before ``now - older_than`` (dry run unless
        ``apply``), one bundle per scope and ``limit`` episodes."""
        cutoff = now - older_than
        run = ArchiveRun(applied=apply, cutoff=cutoff)
        chosen = scopes if scopes is not None else self.store.scopes()
        _done, failures = each_scope(
            chosen, lambda scope: self._run_scope(run, scope, now, limit), "archive"
        )
        return raise_failures("archive", failures, run)

    def _run_scope(self, run: ArchiveRun, scope: Scope, now: datetime, limit: int) -> None:
        """Bundle (and, when applying, move) ``scope``'s eligible episodes into ``run``; each
        bundle commits on its own, so a scope failing midway keeps the bundles it moved."""
        for batch in self._batches(scope, run.cutoff, limit, run.applied):
            data = bundle_bytes(batch)
            info = _info(scope, batch, data, now)
            if run.applied:
                self._move(info, batch, data)
            run.bundles.append(info)
            run.episodes += len(batch)
            run.bytes_hot += sum(len(ep.text.encode()) for ep in batch)

    def _batches(
        self, scope: Scope, cutoff: datetime, limit: int, apply: bool
    ) -> Iterator[list[Episode]]:
        if not apply:  # a dry run cannot move past a batch, so it shows the first one only
            batch = self.index.archive_candidates(scope, cutoff, limit)
            if batch:
                yield batch
            return
        while batch := self.index.archive_candidates(scope, cutoff, limit):
            yield batch

    def _move(self, info: BundleInfo, episodes: list[Episode], data: bytes) -> None:
        self.files.write(info.hash, data)
        self.verify(info.hash, episodes)
        self.index.archive_commit(info, episodes)

    def verify(self, bundle_hash: str, expected: Sequence[Episode]) -> None:
        """Read the bundle back and compare; :class:`VerificationFailed` on any difference."""
        data = self.files.read(bundle_hash)
        if bundle_name(data) != bundle_hash:
            raise VerificationFailed(f"bundle {bundle_hash} does not hash to its name")
        try:
            found = _parse_bundle(data)
        except (OSError, ValueError, EOFError) as exc:
            raise VerificationFailed(f"bundle {bundle_hash} does not read back: {exc}") from None
        want = sorted(expected, key=lambda e: e.seq or 0)
        same = [(e.id, e.seq, e.fingerprint()) for e in found] == [
            (e.id, e.seq, e.fingerprint()) for e in want
        ]
        if not same:
            raise VerificationFailed(f"bundle {bundle_hash} does not hold the episodes written")

    def fetch(self, bundle_hash: str) -> list[Episode]:
        """The episodes of a bundle, checked against its name."""
        bundle_hash = bundle_hash if bundle_hash.startswith("sha256:") else "sha256:" + bundle_hash
        data = self.files.read(bundle_hash)
        if bundle_name(data) != bundle_hash:
            raise VerificationFailed(f"bundle {bundle_hash} does not hash to its name")
        return _parse_bundle(data)

    def fetch_known(self, bundle_hash: str) -> list[Episode]:
        """:meth:`fetch` of a bundle this database names, so any failure to read it back is
        :class:`~reverie.errors.ArchiveUnreadable` saying which file and what to do."""
        where = self.files.where(bundle_hash)
        try:
            return self.fetch(bundle_hash)
        except NotFound:
            raise ArchiveUnreadable(bundle_hash, str(where), "is missing") from None
        except VerificationFailed:
            raise ArchiveUnreadable(bundle_hash, str(where), "was altered") from None
        except (OSError, ValueError, EOFError) as exc:
            problem = f"cannot be read ({type(exc).__name__})"
            raise ArchiveUnreadable(bundle_hash, str(where), problem) from None

    def restore(self, bundle_hash: str, now: datetime) -> int:
        """Put a bundle's episodes back into the hot store; the number restored."""
        bundle_hash = bundle_hash if bundle_hash.startswith("sha256:") else "sha256:" + bundle_hash
        info = next((b for b in self.index.archive_bundles() if b.hash == bundle_hash), None)
        if info is None:
            raise NotFound(f"no archive bundle {bundle_hash} in this database")
        return self.index.archive_restore(info, self.fetch(bundle_hash), now)

    def bundles(self, scope: Scope | None = None) -> list[BundleInfo]:
        return self.index.archive_bundles(scope)


def _info(scope: Scope, batch: Sequence[Episode], data: bytes, now: datetime) -> BundleInfo:
    return BundleInfo(
        hash=bundle_name(data),
        scope=scope,
        episodes=len(batch),
        bytes=len(data),
        first_seq=batch[0].seq or 0,
        last_seq=batch[-1].seq or 0,
        created_at=now,
    )


def resolve(store: BrainStore, episodes: list[Episode]) -> list[Episode]:
    """``episodes`` with every archived stub replaced by its copy from the cold tier.

    Free when nothing is archived (a stub is recognised without a query). A bundle that is
    missing or altered raises :class:`~reverie.errors.ArchiveUnreadable` naming it: showing the
    empty stubs instead would pass off lost evidence as empty evidence.
    """
    stubs = [e for e in episodes if is_stub(e)]
    if not stubs:
        return episodes
    where: dict[tuple[str, str], str] = {}  # (tenant, id): ids are a tenant's own
    for tenant in sorted({e.scope.tenant for e in stubs}):
        ids = [e.id for e in stubs if e.scope.tenant == tenant]
        located = store.archive_locations(ids, tenant=tenant)
        where.update(((tenant, i), bundle) for i, bundle in located.items())
    if not where:
        return episodes
    archive = Archive(store)
    found: dict[tuple[str, str], Episode] = {}
    for bundle_hash in sorted(set(where.values())):
        found.update(
            ((e.scope.tenant, e.id), e)
            for e in archive.fetch_known(bundle_hash)
            if (e.scope.tenant, e.id) in where
        )
    return [
        found[key].model_copy(update={"consolidated_in": e.consolidated_in})
        if (key := (e.scope.tenant, e.id)) in found
        else e
        for e in episodes
    ]


def refuse_undo_of_archived(store: BrainStore, cycle_id: str) -> None:
    """Undo makes a cycle's episodes eligible again, so archived ones must be restored first."""
    bundles = store.archive_bundles_of_cycle(cycle_id)
    if bundles:
        raise UndoRefused(
            f"cycle {cycle_id} consolidated episodes that are archived; restore them first:"
            f" reverie archive restore {bundles[0]}"
            + (f" (and {len(bundles) - 1} more bundle(s))" if len(bundles) > 1 else "")
        )


def readable(store: BrainStore, episodes: list[Episode]) -> list[Episode]:
    """``episodes`` as a reader sees them: archived stubs fetched back (:func:`resolve`), and
    each row an older version stored past today's metadata limits shown with a note in place
    of its metadata, so one such row cannot fail the read it is part of."""
    return [ep if _within_limits(ep) else _with_note(ep) for ep in resolve(store, episodes)]


def _within_limits(ep: Episode) -> bool:
    return not ep.metadata or json_depth(ep.metadata, MAX_METADATA_DEPTH) <= MAX_METADATA_DEPTH


def _with_note(ep: Episode) -> Episode:
    note = f"not shown: stored nested more than {MAX_METADATA_DEPTH} levels deep, past the limit"
    return ep.model_copy(update={"metadata": {"_unreadable": note}})
