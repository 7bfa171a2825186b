"""The embedded default store: one SQLite file, WAL, FTS5.

Writes run in ``BEGIN IMMEDIATE`` transactions (the write lock is taken up front, so two writers
queue on ``busy_timeout`` instead of deadlocking on a lock upgrade). ``seq`` comes from an
AUTOINCREMENT key, so it is strictly increasing even across deletes, and is assigned inside the
write transaction from ``sqlite_sequence``. Timestamps are stored as ISO-8601 UTC strings, which
sort as they compare.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from reverie.errors import Conflict, MigrationError, NotFound, StoreError
from reverie.keys import ApiKey, Rights
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
    now_utc,
)
from reverie.store.archive import SQLiteArchiveMixin  # issue 6
from reverie.store.base import (
    Changeset,
    JournalEntry,
    PageWrite,
    StepHook,
    StoreStats,
    Strength,
)
from reverie.store.cumulative import SQLiteCumulativeMixin  # issue 5/6: stats, org
from reverie.store.leases import SQLiteLeasesMixin
from reverie.store.migrations import load_migrations, split_statements
from reverie.store.plans import SQLitePlansMixin  # issue 4 (8): review mode
from reverie.store.schedule import SQLiteScheduleMixin  # issue 6
from reverie.store.vectors import SQLiteVectorsMixin

__all__ = ["SQLiteStore", "scope_token"]

_CHUNK = 500
_DECODED_REVISIONS = 1024
_EPISODE_COLUMNS = (
    "seq, id, scope_key, session_id, created_at, situation, action, outcome, outcome_details,"
    " error, lesson, importance, category, tools, entities, metadata, consolidated_in"
)
EPISODE_COLUMNS = _EPISODE_COLUMNS  # issue 3: read by reverie.store.vectors
_REVISION_COLUMNS = (
    "page_id, number, hash, title, kind, claims, confidence, status, valid_from, valid_until,"
    " superseded_by, cycle_id, author, reason, created_at"
)


def scope_token(scope_key: str) -> str:
    """An opaque FTS token that stands for one scope inside a MATCH expression."""
    return "s" + hashlib.sha1(scope_key.encode("utf-8")).hexdigest()[:24]


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def fts_phrase(term: str) -> str:
    """Quote one term for an FTS5 MATCH (no operator inside a term survives quoting)."""
    return '"' + term.replace('"', '""') + '"'


class SQLiteStore(
    SQLiteVectorsMixin,
    SQLiteLeasesMixin,
    SQLiteScheduleMixin,
    SQLiteArchiveMixin,  # issue 6
    SQLitePlansMixin,  # issue 4 (8)
    SQLiteCumulativeMixin,  # issue 5/6: stats, org promotion
):
    """A :class:`reverie.store.base.Store` on one SQLite file (or ``:memory:``)."""

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 30_000) -> None:
        self.path = str(path)
        self.url = "sqlite:///" + self.path if self.path != ":memory:" else "sqlite://:memory:"
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=busy_timeout_ms / 1000,
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite database {self.path}: {exc}") from exc
        self._lock = threading.RLock()
        self._scopes: dict[str, Scope] = {}
        self._decoded: dict[tuple[Any, ...], Revision] = {}
        self._pragmas(busy_timeout_ms)

    def _pragmas(self, busy_timeout_ms: int) -> None:
        c = self._conn
        c.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if self.path != ":memory:":
            c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = NORMAL")
        c.execute("PRAGMA foreign_keys = ON")

    # -- plumbing ---------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot start a write transaction: {exc}") from exc
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def migrate(self) -> list[str]:
        applied: list[str] = []
        with self._write() as c:
            c.execute(
                "CREATE TABLE IF NOT EXISTS _migrations"
                " (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
        for name, sql in load_migrations("sqlite"):
            with self._write() as c:
                if c.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                    continue
                try:
                    for statement in split_statements(sql):
                        c.execute(statement)
                except sqlite3.Error as exc:
                    raise MigrationError(f"migration {name} failed: {exc}") from exc
                c.execute("INSERT INTO _migrations VALUES (?, ?)", (name, _iso(now_utc())))
                applied.append(name)
        return applied

    def migrations(self) -> list[str]:
        return [r[0] for r in self._read("SELECT name FROM _migrations ORDER BY name")]

    def _scope(self, key: str) -> Scope:
        scope = self._scopes.get(key)
        if scope is None:
            scope = Scope.parse(key)
            self._scopes[key] = scope
        return scope

    # -- episodes ---------------------------------------------------------------------------

    def append(self, episodes: Sequence[Episode]) -> list[Episode]:
        unique = self._dedupe_batch(episodes)
        with self._write() as c:
            existing = self._existing(c, unique)
            fresh = [e for e in unique if e.id not in existing]
            return self._insert_episodes(c, fresh)

    @staticmethod
    def _dedupe_batch(episodes: Sequence[Episode]) -> list[Episode]:
        seen: dict[str, Episode] = {}
        for ep in episodes:
            prior = seen.get(ep.id)
            if prior is None:
                seen[ep.id] = ep
            elif prior.fingerprint() != ep.fingerprint():
                raise Conflict(
                    f"episode id {ep.id} appears twice in one batch with different content"
                )
        return list(seen.values())

    def _existing(self, c: sqlite3.Connection, episodes: Sequence[Episode]) -> dict[str, Episode]:
        wanted = {e.id: e for e in episodes}
        found: dict[str, Episode] = {}
        conflicts: list[str] = []
        for chunk in _chunks(list(wanted)):
            marks = ",".join("?" * len(chunk))
            rows = c.execute(
                f"SELECT {_EPISODE_COLUMNS}, fingerprint FROM episodes WHERE id IN ({marks})", chunk
            ).fetchall()
            for row in rows:
                if row[-1] != wanted[row[1]].fingerprint():
                    conflicts.append(row[1])
                found[row[1]] = self._episode_from_row(row[:-1])
        if conflicts:
            raise Conflict(
                f"episode ids already stored with different content: {', '.join(conflicts[:10])}",
            )
        return found

    def _insert_episodes(self, c: sqlite3.Connection, episodes: Sequence[Episode]) -> list[Episode]:
        if not episodes:
            return []
        scopes = {e.scope for e in episodes}
        self._ensure_scopes(c, scopes)
        tokens = {s: scope_token(s.key) for s in scopes}
        row = c.execute("SELECT seq FROM sqlite_sequence WHERE name = 'episodes'").fetchone()
        base = row[0] if row else 0
        inserted_at = _iso(now_utc())
        stored = list(episodes)
        for i, e in enumerate(stored):
            e.seq = base + i + 1  # the caller's object gets its store-assigned seq
        c.executemany(
            "INSERT INTO episodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [self._episode_row(e, inserted_at) for e in stored],
        )
        c.executemany(
            "INSERT INTO episodes_fts(rowid, scope, body) VALUES (?,?,?)",
            [(e.seq, tokens[e.scope], episode_search_text(e)) for e in stored],
        )
        return stored

    def _ensure_scopes(self, c: sqlite3.Connection, scopes: Iterable[Scope]) -> None:
        now = _iso(now_utc())
        c.executemany(
            "INSERT OR IGNORE INTO scopes VALUES (?,?,?,?,?)",
            [(s.key, s.tenant, s.agent, s.user, now) for s in scopes],
        )

    @staticmethod
    def _episode_row(e: Episode, inserted_at: str | None) -> tuple[Any, ...]:
        return (
            e.seq,
            e.id,
            e.scope.key,
            e.session_id,
            _iso(e.created_at),
            e.situation,
            e.action,
            str(e.outcome),
            e.outcome_details,
            e.error,
            e.lesson,
            e.importance,
            e.category,
            json.dumps(e.tools) if e.tools else "[]",
            json.dumps(e.entities) if e.entities else "[]",
            json.dumps(e.metadata, sort_keys=True) if e.metadata else "{}",
            e.fingerprint(),
            None,
            inserted_at,
        )

    def _episode_from_row(self, r: Sequence[Any]) -> Episode:
        return Episode.model_construct(
            seq=r[0],
            id=r[1],
            scope=self._scope(r[2]),
            session_id=r[3],
            created_at=datetime.fromisoformat(r[4]),
            situation=r[5],
            action=r[6],
            outcome=Outcome(r[7]),
            outcome_details=r[8],
            error=r[9],
            lesson=r[10],
            importance=r[11],
            category=r[12],
            tools=json.loads(r[13]),
            entities=json.loads(r[14]),
            metadata=json.loads(r[15]),
            consolidated_in=r[16],
        )

    def episode(self, episode_id: str) -> Episode:
        rows = self._read(f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE id = ?", (episode_id,))
        if not rows:
            raise NotFound(f"no episode {episode_id}")
        return self._episode_from_row(rows[0])

    def episodes(self, episode_ids: Iterable[str]) -> list[Episode]:
        ids = list(dict.fromkeys(episode_ids))
        found: list[Episode] = []
        for chunk in _chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows = self._read(
                f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE id IN ({marks})", chunk
            )
            found += [self._episode_from_row(r) for r in rows]
        return sorted(found, key=lambda e: e.seq or 0)

    def scan(self, scope: Scope, after_seq: int, limit: int) -> list[Episode]:
        rows = self._read(
            f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE scope_key = ? AND seq > ?"
            " AND consolidated_in IS NULL ORDER BY seq LIMIT ?",
            (scope.key, after_seq, limit),
        )
        return [self._episode_from_row(r) for r in rows]

    def recent_episodes(self, scope: Scope, limit: int) -> list[Episode]:
        rows = self._read(
            f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE scope_key = ?"
            " ORDER BY seq DESC LIMIT ?",
            (scope.key, limit),
        )
        return [self._episode_from_row(r) for r in rows]

    def marked(self, cycle_id: str) -> list[int]:
        rows = self._read(
            "SELECT seq FROM episodes WHERE consolidated_in = ? ORDER BY seq", (cycle_id,)
        )
        return [r[0] for r in rows]

    # -- pages ------------------------------------------------------------------------------

    _PAGE_SELECT = (
        "SELECT p.id, p.scope_key, p.topic_key, p.created_at, p.updated_at, "
        + ", ".join("r." + c.strip() for c in _REVISION_COLUMNS.split(","))
        + " FROM pages p JOIN revisions r ON r.page_id = p.id AND r.number = p.current_revision"
    )

    def _page_from_row(self, r: Sequence[Any]) -> Page:
        return Page.model_construct(
            id=r[0],
            scope=self._scope(r[1]),
            topic_key=r[2],
            created_at=datetime.fromisoformat(r[3]),
            updated_at=datetime.fromisoformat(r[4]),
            revision=self._revision_from_row(r[5:]),
        )

    def _revision_from_row(self, r: Sequence[Any]) -> Revision:
        """Decode a revision row; decoded revisions are cached by the row's full content.

        Revisions are immutable, so a row read again decodes to the same object; keying on every
        column (not just the id) means a row changed behind our back is decoded afresh, so
        ``verify`` still sees the bytes on disk. Bounded: the cache is cleared when full.
        """
        key = tuple(r)
        cached = self._decoded.get(key)
        if cached is None:
            if len(self._decoded) >= _DECODED_REVISIONS:
                self._decoded.clear()
            cached = self._decoded[key] = _decode_revision(r)
        return cached

    def page(self, page_id: str) -> Page:
        rows = self._read(self._PAGE_SELECT + " WHERE p.id = ?", (page_id,))
        if not rows:
            raise NotFound(f"no page {page_id}")
        return self._page_from_row(rows[0])

    def pages(self, scope: Scope, statuses: Iterable[str] | None = None) -> list[Page]:
        sql = self._PAGE_SELECT + " WHERE p.scope_key = ?"
        params: list[Any] = [scope.key]
        if statuses is not None:
            wanted = list(statuses)
            sql += f" AND p.status IN ({','.join('?' * len(wanted))})"
            params += wanted
        return [self._page_from_row(r) for r in self._read(sql + " ORDER BY p.rid", params)]

    def pages_by_topic(self, scope: Scope, topic_keys: Iterable[str]) -> dict[str, Page]:
        found: dict[str, Page] = {}
        for chunk in _chunks(list(dict.fromkeys(topic_keys))):
            sql = (
                self._PAGE_SELECT
                + f" WHERE p.scope_key = ? AND p.topic_key IN ({','.join('?' * len(chunk))})"
            )
            for row in self._read(sql, [scope.key, *chunk]):
                page = self._page_from_row(row)
                found[page.topic_key] = page
        return found

    def pages_by_id(self, scope: Scope, page_ids: Iterable[str]) -> dict[str, Page]:
        """Issue 3: the pages of ``scope`` among ``page_ids``, in one read per 500 ids."""
        found: dict[str, Page] = {}
        for chunk in _chunks(list(dict.fromkeys(page_ids))):
            sql = (
                self._PAGE_SELECT
                + f" WHERE p.scope_key = ? AND p.id IN ({','.join('?' * len(chunk))})"
            )
            for row in self._read(sql, [scope.key, *chunk]):
                page = self._page_from_row(row)
                found[page.id] = page
        return found

    def revisions(self, page_id: str) -> list[Revision]:
        rows = self._read(
            f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE page_id = ? ORDER BY number",
            (page_id,),
        )
        if not rows:
            raise NotFound(f"no page {page_id}")
        return [self._revision_from_row(r) for r in rows]

    # -- search -----------------------------------------------------------------------------

    @staticmethod
    def _match(scope: Scope, column: str, terms: Sequence[str]) -> str:
        body = " OR ".join(fts_phrase(t) for t in terms)
        return f"scope : {scope_token(scope.key)} AND {column} : ({body})"

    def search_pages(
        self, scope: Scope, terms: Sequence[str], limit: int, statuses: Iterable[str] = ("active",)
    ) -> list[tuple[Page, float]]:
        if not terms:
            return []
        wanted = list(statuses)
        match = self._match(scope, "{title body}", terms)
        rows = self._read(
            "SELECT f.rowid, -bm25(pages_fts, 0, 0, 2.0, 1.0) AS score FROM pages_fts f"
            " WHERE pages_fts MATCH ? ORDER BY bm25(pages_fts, 0, 0, 2.0, 1.0) LIMIT ?",
            (match, limit * 3),
        )
        scores = {r[0]: r[1] for r in rows}
        top = self._eligible_rids(scope, scores, wanted)[:limit]
        if not top:
            return []
        # Only the pages that make the cut are decoded: a page's claims can be large.
        sql = self._PAGE_SELECT.replace("SELECT ", "SELECT p.rid, ", 1)
        page_rows = self._read(sql + f" WHERE p.rid IN ({','.join('?' * len(top))})", top)
        pages = {r[0]: self._page_from_row(r[1:]) for r in page_rows}
        return [(pages[rid], scores[rid]) for rid in top]

    def _eligible_rids(
        self, scope: Scope, scores: dict[int, float], statuses: list[str]
    ) -> list[int]:
        """The page rids in ``scores`` of ``scope`` with one of ``statuses``, best score first."""
        if not scores:
            return []
        rows = self._read(
            f"SELECT rid FROM pages WHERE rid IN ({','.join('?' * len(scores))}) AND scope_key = ?"
            f" AND status IN ({','.join('?' * len(statuses))}) ORDER BY rid",
            [*scores, scope.key, *statuses],
        )
        return sorted((r[0] for r in rows), key=lambda rid: -scores[rid])

    def search_episodes(
        self, scope: Scope, terms: Sequence[str], limit: int, *, window: int | None = None
    ) -> list[tuple[Episode, float]]:
        if not terms:
            return []
        # Rank inside the FTS table first, then join only the top rows: joining every match
        # before sorting costs a row lookup per match (tens of thousands for common terms).
        # With a window, only the newest `window` matches are scored: FTS5 walks the doclists
        # newest first and stops, so a term matching most of the brain costs the window, not
        # the brain. Older evidence reaches recall through the pages it was distilled into.
        candidates = "SELECT rowid, bm25(episodes_fts, 0, 1.0) AS rank FROM episodes_fts"
        candidates += " WHERE episodes_fts MATCH ?"
        params: list[Any] = [self._match(scope, "body", terms)]
        if window is not None:
            candidates += " ORDER BY rowid DESC LIMIT ?"
            params.append(window)
        rows = self._read(
            f"SELECT {', '.join('e.' + c.strip() for c in _EPISODE_COLUMNS.split(','))}, -f.rank"
            f" FROM (SELECT rowid, rank FROM ({candidates}) ORDER BY rank LIMIT ?) f"
            " JOIN episodes e ON e.seq = f.rowid WHERE e.scope_key = ? ORDER BY f.rank",
            (*params, limit, scope.key),
        )
        return [(self._episode_from_row(r[:-1]), r[-1]) for r in rows]

    # -- cycles -----------------------------------------------------------------------------

    def checkpoint(self, scope: Scope) -> int:
        rows = self._read("SELECT seq FROM checkpoints WHERE scope_key = ?", (scope.key,))
        return int(rows[0][0]) if rows else 0

    def commit(self, changes: Changeset, on_step: StepHook | None = None) -> None:
        step = on_step or (lambda _name: None)
        with self._write() as c:
            self._ensure_scopes(c, [changes.scope])
            self._check_lease(c, changes)  # issue 8: a worker's lease fences the scope
            self._check_checkpoint(c, changes)
            if changes.episodes:  # issue 5: e.g. a person's edit, recorded as evidence
                self._insert_episodes(
                    c, [e for e in changes.episodes if e.id not in self._existing(c, [e])]
                )
            step("checkpoint-checked")
            for write in changes.page_writes:
                self._write_page(c, write)
            step("pages-written")
            self._apply_marks(c, changes)
            step("episodes-marked")
            c.execute(
                "INSERT INTO checkpoints VALUES (?, ?, ?) ON CONFLICT(scope_key) DO UPDATE"
                " SET seq = excluded.seq, updated_at = excluded.updated_at",
                (changes.scope.key, changes.checkpoint, _iso(now_utc())),
            )
            self._record_cycle(c, changes)
            self._record_memory(c, changes)
            self._settle_applied(c, changes)  # issue 4 (8): a reviewed plan, applied
            self._record_dream(c, changes)  # issue 5/6: stats, org promotion
            step("cycle-recorded")

    def _check_checkpoint(self, c: sqlite3.Connection, changes: Changeset) -> None:
        row = c.execute(
            "SELECT seq FROM checkpoints WHERE scope_key = ?", (changes.scope.key,)
        ).fetchone()
        current = row[0] if row else 0
        if current != changes.expected_checkpoint:
            raise Conflict(
                f"scope {changes.scope.key} moved on (checkpoint {current}, expected"
                f" {changes.expected_checkpoint}); another cycle ran — dream again"
            )

    def _write_page(self, c: sqlite3.Connection, w: PageWrite) -> None:
        rev = w.revision
        row = c.execute(
            "SELECT rid, current_revision, scope_key FROM pages WHERE id = ?", (rev.page_id,)
        ).fetchone()
        current = row[1] if row else None
        if current != w.expected_revision or (row and row[2] != w.scope.key):
            raise Conflict(f"page {rev.page_id} changed since it was read (revision {current})")
        when = _iso(rev.created_at)
        if row is None:
            c.execute(
                "INSERT INTO pages (id, scope_key, topic_key, current_revision, status,"
                " created_at, updated_at)"
                " VALUES (?,?,?,?,?,?,?)",
                (rev.page_id, w.scope.key, w.topic_key, rev.number, str(rev.status), when, when),
            )
            rid = c.execute("SELECT rid FROM pages WHERE id = ?", (rev.page_id,)).fetchone()[0]
        else:
            rid = row[0]
        self._insert_revision(c, rev)
        if row is not None:
            c.execute(
                "UPDATE pages SET current_revision = ?, status = ?, updated_at = ? WHERE id = ?",
                (rev.number, str(rev.status), when, rev.page_id),
            )
            c.execute("DELETE FROM pages_fts WHERE rowid = ?", (rid,))
        c.execute(
            "INSERT INTO pages_fts(rowid, scope, status, title, body) VALUES (?,?,?,?,?)",
            (rid, scope_token(w.scope.key), str(rev.status), rev.title, rev.body),
        )

    @staticmethod
    def _insert_revision(c: sqlite3.Connection, rev: Revision) -> None:
        claims = json.dumps([cl.model_dump(mode="json") for cl in rev.claims], ensure_ascii=False)
        c.execute(
            f"INSERT INTO revisions ({_REVISION_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                rev.page_id,
                rev.number,
                rev.hash,
                rev.title,
                str(rev.kind),
                claims,
                rev.confidence,
                str(rev.status),
                _iso(rev.valid_from),
                _iso(rev.valid_until),
                rev.superseded_by,
                rev.cycle_id,
                rev.author,
                rev.reason,
                _iso(rev.created_at),
            ),
        )
        c.executemany(
            "INSERT INTO citations VALUES (?,?,?)",
            [(rev.page_id, rev.number, e) for e in rev.citations],
        )

    @staticmethod
    def _apply_marks(c: sqlite3.Connection, changes: Changeset) -> None:
        if changes.unmark_cycle:
            c.execute(
                "UPDATE episodes SET consolidated_in = NULL WHERE consolidated_in = ?",
                (changes.unmark_cycle,),
            )
        if not changes.marks:
            return
        cur = c.executemany(
            "UPDATE episodes SET consolidated_in = ? WHERE id = ? AND scope_key = ?"
            " AND consolidated_in IS NULL",
            [(changes.mark_cycle, e, changes.scope.key) for e in changes.marks],
        )
        if cur.rowcount != len(changes.marks):
            raise Conflict(
                f"{len(changes.marks) - cur.rowcount} episode(s) were already consolidated by"
                " another"
                " cycle; nothing was applied — dream again"
            )

    @staticmethod
    def _record_cycle(c: sqlite3.Connection, changes: Changeset) -> None:
        if changes.undone_cycle:
            cur = c.execute(
                "UPDATE cycles SET undone_at = ? WHERE id = ? AND undone_at IS NULL",
                (_iso(now_utc()), changes.undone_cycle),
            )
            if cur.rowcount != 1:
                raise Conflict(f"cycle {changes.undone_cycle} was already undone")
        cy = changes.cycle
        if cy is not None:
            c.execute(
                "INSERT INTO cycles (id, scope_key, status, started_at, finished_at,"
                " checkpoint_before,"
                " checkpoint_after, report, undone_at) VALUES (?,?,?,?,?,?,?,?,NULL)",
                (
                    cy.id,
                    cy.scope.key,
                    str(cy.status),
                    _iso(cy.started_at),
                    _iso(cy.finished_at),
                    cy.checkpoint_before,
                    cy.checkpoint_after,
                    cy.report.model_dump_json(),
                ),
            )

    @staticmethod
    def _record_memory(c: sqlite3.Connection, changes: Changeset) -> None:
        """Issue 5: reinforcement rows and the journal entry, in the commit's transaction."""
        cycle_id = changes.cycle.id if changes.cycle else changes.undone_cycle
        if changes.observations and cycle_id is not None:
            c.executemany(
                "INSERT INTO observations VALUES (?,?,?,?)",
                [
                    (cycle_id, o.page_id, o.episodes, _iso(o.last_seen))
                    for o in changes.observations
                ],
            )
        if changes.journal:
            when = changes.cycle.started_at if changes.cycle else now_utc()
            c.execute(
                "INSERT INTO journal (scope_key, cycle_id, created_at, text) VALUES (?,?,?,?)",
                (changes.scope.key, cycle_id, _iso(when), changes.journal),
            )

    def strengths(self, page_ids: Iterable[str]) -> dict[str, Strength]:
        found: dict[str, Strength] = {}
        for chunk in _chunks(list(dict.fromkeys(page_ids))):
            rows = self._read(
                "SELECT o.page_id, sum(o.episodes), count(*), max(o.last_seen) FROM observations o"
                " JOIN cycles c ON c.id = o.cycle_id WHERE c.undone_at IS NULL"
                f" AND o.page_id IN ({','.join('?' * len(chunk))}) GROUP BY o.page_id",
                chunk,
            )
            for page_id, episodes, cycles, last in rows:
                found[page_id] = Strength(page_id, episodes, cycles, datetime.fromisoformat(last))
        return found

    def journal(self, scope: Scope, limit: int = 50) -> list[JournalEntry]:
        rows = self._read(
            "SELECT cycle_id, created_at, text FROM journal WHERE scope_key = ?"
            " ORDER BY n DESC LIMIT ?",
            (scope.key, limit),
        )
        return [
            JournalEntry(scope, r[0], datetime.fromisoformat(r[1]), r[2]) for r in reversed(rows)
        ]

    _CYCLE_SELECT = (
        "SELECT id, scope_key, status, started_at, finished_at, checkpoint_before,"
        " checkpoint_after,"
        " report, undone_at FROM cycles"
    )

    def _cycle_from_row(self, r: Sequence[Any]) -> Cycle:
        return Cycle(
            id=r[0],
            scope=self._scope(r[1]),
            status=CycleStatus(r[2]),
            started_at=datetime.fromisoformat(r[3]),
            finished_at=_dt(r[4]),
            checkpoint_before=r[5],
            checkpoint_after=r[6],
            report=CycleReport.model_validate_json(r[7]),
            undone_at=_dt(r[8]),
        )

    def cycle(self, cycle_id: str) -> Cycle:
        rows = self._read(self._CYCLE_SELECT + " WHERE id = ?", (cycle_id,))
        if not rows:
            raise NotFound(f"no cycle {cycle_id}")
        return self._cycle_from_row(rows[0])

    def cycles(self, scope: Scope | None = None, limit: int = 50) -> list[Cycle]:
        if scope is None:
            rows = self._read(self._CYCLE_SELECT + " ORDER BY n DESC LIMIT ?", (limit,))
        else:
            rows = self._read(
                self._CYCLE_SELECT + " WHERE scope_key = ? ORDER BY n DESC LIMIT ?",
                (scope.key, limit),
            )
        return [self._cycle_from_row(r) for r in rows]

    def cycles_after(self, cycle_id: str) -> list[Cycle]:
        """Cycles of the same scope recorded after ``cycle_id``, oldest first."""
        rows = self._read(
            self._CYCLE_SELECT + " WHERE scope_key = (SELECT scope_key FROM cycles WHERE id = ?)"
            " AND n > (SELECT n FROM cycles WHERE id = ?) ORDER BY n",
            (cycle_id, cycle_id),
        )
        return [self._cycle_from_row(r) for r in rows]

    def scopes(self) -> list[Scope]:
        return [
            self._scope(r[0]) for r in self._read("SELECT scope_key FROM scopes ORDER BY scope_key")
        ]

    def pending_scopes(self) -> list[Scope]:
        """Scopes with episodes past their checkpoint that no cycle has consolidated."""
        rows = self._read(
            "SELECT s.scope_key FROM scopes s LEFT JOIN checkpoints c ON c.scope_key = s.scope_key"
            " WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.scope_key = s.scope_key"
            " AND e.seq > COALESCE(c.seq, 0) AND e.consolidated_in IS NULL) ORDER BY s.scope_key"
        )
        return [self._scope(r[0]) for r in rows]

    def stats(self, scope: Scope | None = None) -> StoreStats:
        where, params = ("WHERE scope_key = ?", [scope.key]) if scope else ("", [])
        ep = self._read(f"SELECT count(*), count(consolidated_in) FROM episodes {where}", params)[0]
        pg = self._read(
            f"SELECT count(*), coalesce(sum(status = 'active'), 0) FROM pages {where}", params
        )[0]
        rev_where = "WHERE page_id IN (SELECT id FROM pages WHERE scope_key = ?)" if scope else ""
        revs = self._read(f"SELECT count(*) FROM revisions {rev_where}", params)[0][0]
        cyc = self._read(f"SELECT count(*) FROM cycles {where}", params)[0][0]
        return StoreStats(
            episodes=ep[0],
            consolidated=ep[1],
            pages=pg[0],
            active_pages=pg[1],
            revisions=revs,
            cycles=cyc,
            checkpoint=self.checkpoint(scope) if scope else 0,
            **self._model_cost(where, params),
        )

    _COST_FIELDS = ("model_calls", "cache_hits", "input_tokens", "output_tokens", "model_latency_s")

    def _model_cost(self, where: str, params: list[str]) -> dict[str, Any]:
        """Model cost summed over the recorded cycles' reports (issue 4)."""
        sums = ", ".join(
            f"coalesce(sum(json_extract(report, '$.{f}')), 0)" for f in self._COST_FIELDS
        )
        row = self._read(f"SELECT {sums} FROM cycles {where}", params)[0]
        cost: dict[str, Any] = dict(zip(self._COST_FIELDS, row, strict=True))
        cost["model_latency_s"] = round(float(cost["model_latency_s"]), 6)
        return cost

    def integrity_check(self) -> str:
        return str(self._read("PRAGMA integrity_check")[0][0])

    # -- model response cache (not cycle state; see reverie.llm.cache) ---------------------

    def cache_get(self, key: str) -> dict[str, Any] | None:
        rows = self._read(
            "SELECT model, response, input_tokens, output_tokens, created_at FROM model_cache"
            " WHERE key = ?",
            (key,),
        )
        if not rows:
            return None
        model, response, tokens_in, tokens_out, created_at = rows[0]
        return {
            "model": model,
            "response": json.loads(response),
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "created_at": created_at,
        }

    def cache_put(self, key: str, value: dict[str, Any]) -> None:
        with self._write() as c:
            c.execute(
                "INSERT OR REPLACE INTO model_cache VALUES (?,?,?,?,?,?)",
                (
                    key,
                    str(value.get("model", "")),
                    json.dumps(value["response"], sort_keys=True, ensure_ascii=False),
                    int(value.get("input_tokens", 0)),
                    int(value.get("output_tokens", 0)),
                    _iso(now_utc()),
                ),
            )

    # -- API keys (issue 7): only salted hashes; see reverie.keys --------------------------------

    _KEY_COLUMNS = "id, name, tenant, agent, rights, salt, secret_hash, created_at, revoked_at"

    @staticmethod
    def _key_from_row(r: Sequence[Any]) -> ApiKey:
        return ApiKey(
            id=r[0],
            name=r[1],
            tenant=r[2],
            agent=r[3],
            rights=Rights(r[4]),
            salt=r[5],
            secret_hash=r[6],
            created_at=datetime.fromisoformat(r[7]),
            revoked_at=_dt(r[8]),
        )

    def put_api_key(self, key: ApiKey) -> None:
        with self._write() as c:
            c.execute(
                f"INSERT INTO api_keys ({self._KEY_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    key.id,
                    key.name,
                    key.tenant,
                    key.agent,
                    str(key.rights),
                    key.salt,
                    key.secret_hash,
                    _iso(key.created_at),
                    _iso(key.revoked_at),
                ),
            )

    def api_key(self, key_id: str) -> ApiKey:
        rows = self._read(f"SELECT {self._KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,))
        if not rows:
            raise NotFound(f"no API key {key_id}")
        return self._key_from_row(rows[0])

    def api_keys(self) -> list[ApiKey]:
        rows = self._read(f"SELECT {self._KEY_COLUMNS} FROM api_keys ORDER BY created_at, id")
        return [self._key_from_row(r) for r in rows]

    def revoke_api_key(self, key_id: str, at: datetime) -> ApiKey:
        with self._write() as c:
            c.execute(
                "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?",
                (_iso(at), key_id),
            )
        return self.api_key(key_id)


def _decode_revision(r: Sequence[Any]) -> Revision:
    claims = tuple(
        Claim.model_construct(
            text=c["text"],
            episode_ids=tuple(c["episode_ids"]),
            page_ids=tuple(c.get("page_ids", ())),
        )
        for c in json.loads(r[5])
    )
    return Revision.model_construct(
        page_id=r[0],
        number=r[1],
        hash=r[2],
        title=r[3],
        kind=PageKind(r[4]),
        claims=claims,
        confidence=r[6],
        status=PageStatus(r[7]),
        valid_from=_dt(r[8]),
        valid_until=_dt(r[9]),
        superseded_by=r[10],
        cycle_id=r[11],
        author=r[12],
        reason=r[13],
        created_at=datetime.fromisoformat(r[14]),
    )


def episode_search_text(e: Episode) -> str:
    """What full-text search sees of an episode: its text plus category, tools and entities."""
    extra = " ".join([e.category or "", *e.tools, *e.entities])
    return f"{e.text}\n{extra}".strip()
