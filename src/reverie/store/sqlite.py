"""The embedded default store: one SQLite file, WAL, FTS5.

Writes run in ``BEGIN IMMEDIATE`` transactions (the write lock is taken up front, so two writers
queue on ``busy_timeout`` instead of deadlocking on a lock upgrade). ``seq`` comes from an
AUTOINCREMENT key, so it is strictly increasing even across deletes, and is assigned inside the
write transaction from ``sqlite_sequence``. Timestamps are stored as ISO-8601 UTC strings, which
sort as they compare.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from reverie.errors import Conflict, MigrationError, NotFound, StoreError
from reverie.models import (
    Cycle,
    CycleReport,
    CycleStatus,
    Episode,
    Outcome,
    Page,
    Revision,
    Scope,
    now_utc,
)
from reverie.store.archive import SQLiteArchiveMixin  # issue 6
from reverie.store.base import (
    JournalEntry,
    StoreStats,
    Strength,
)
from reverie.store.cumulative import SQLiteCumulativeMixin  # issue 5/6: stats, org
from reverie.store.keys_cache import SQLiteKeysCacheMixin
from reverie.store.leases import SQLiteLeasesMixin
from reverie.store.migrations import load_migrations, split_statements
from reverie.store.plans import SQLitePlansMixin  # issue 4 (8): review mode
from reverie.store.schedule import SQLiteScheduleMixin  # issue 6
from reverie.store.sqlite_commit import SQLiteCommitMixin
from reverie.store.sqlite_rows import (
    CLAIMS_AT,
    EPISODE_COLUMNS,
    LEAN_REVISION_COLUMNS,
    REVISION_COLUMNS,
    chunks,
    decode_revision,
    episode_search_text,
    fts_phrase,
    iso,
    parse_dt,
    scope_token,
)
from reverie.store.vectors import SQLiteVectorsMixin

__all__ = ["EPISODE_COLUMNS", "SQLiteStore", "episode_search_text", "fts_phrase", "scope_token"]

_DECODED_REVISIONS = 1024


class SQLiteStore(
    SQLiteCommitMixin,  # the one transaction of a cycle
    SQLiteKeysCacheMixin,  # model response cache, API keys
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
                c.execute("INSERT INTO _migrations VALUES (?, ?)", (name, iso(now_utc())))
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
        for chunk in chunks(list(wanted)):
            marks = ",".join("?" * len(chunk))
            rows = c.execute(
                f"SELECT {EPISODE_COLUMNS}, fingerprint FROM episodes WHERE id IN ({marks})", chunk
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
        inserted_at = iso(now_utc())
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
        now = iso(now_utc())
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
            iso(e.created_at),
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
        rows = self._read(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?", (episode_id,))
        if not rows:
            raise NotFound(f"no episode {episode_id}")
        return self._episode_from_row(rows[0])

    def episodes(self, episode_ids: Iterable[str]) -> list[Episode]:
        ids = list(dict.fromkeys(episode_ids))
        found: list[Episode] = []
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows = self._read(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id IN ({marks})", chunk
            )
            found += [self._episode_from_row(r) for r in rows]
        return sorted(found, key=lambda e: e.seq or 0)

    def first_stored(self, episode_ids: Iterable[str]) -> datetime | None:
        ids = list(dict.fromkeys(episode_ids))
        firsts = [
            row[0]
            for chunk in chunks(ids)
            for row in self._read(
                f"SELECT min(inserted_at) FROM episodes WHERE id IN ({','.join('?' * len(chunk))})",
                chunk,
            )
            if row[0] is not None
        ]
        return min(map(datetime.fromisoformat, firsts)) if firsts else None

    def scan(self, scope: Scope, after_seq: int, limit: int) -> list[Episode]:
        rows = self._read(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE scope_key = ? AND seq > ?"
            " AND consolidated_in IS NULL ORDER BY seq LIMIT ?",
            (scope.key, after_seq, limit),
        )
        return [self._episode_from_row(r) for r in rows]

    def recent_episodes(self, scope: Scope, limit: int) -> list[Episode]:
        rows = self._read(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE scope_key = ? ORDER BY seq DESC LIMIT ?",
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
        + ", ".join("r." + c.strip() for c in REVISION_COLUMNS.split(","))
        + " FROM pages p JOIN revisions r ON r.page_id = p.id AND r.number = p.current_revision"
    )

    def _page_from_row(self, r: Sequence[Any]) -> Page:
        return self._page(r, self._revision_from_row(r[5:]))

    def _page(self, r: Sequence[Any], revision: Revision) -> Page:
        return Page.model_construct(
            id=r[0],
            scope=self._scope(r[1]),
            topic_key=r[2],
            created_at=datetime.fromisoformat(r[3]),
            updated_at=datetime.fromisoformat(r[4]),
            revision=revision,
        )

    _LEAN_PAGE_SELECT = (
        "SELECT p.rid, r.rowid, p.id, p.scope_key, p.topic_key, p.created_at, p.updated_at, "
        + ", ".join("r." + c for c in LEAN_REVISION_COLUMNS)
        + " FROM pages p JOIN revisions r ON r.page_id = p.id AND r.number = p.current_revision"
    )

    def _lean_pages(self, where: str, params: Sequence[Any]) -> dict[int, Page]:
        """Recall's page read (by ``pages.rid``): every column but the claims first, then the
        claims of only the revisions not decoded before. Revision rows are never updated (a
        change is a new row), so the other columns, the hash among them, name the claims; a
        page's claims cite every episode they stand on and reach tens of kilobytes, which
        recall would otherwise copy and hash on every query. ``verify`` reads full rows."""
        rows = self._read(self._LEAN_PAGE_SELECT + where, params)
        keys = {r[1]: ("lean", *r[7:]) for r in rows}
        # Taken from the cache once, up front: decoding a missing one may clear the cache
        # (it is bounded), and another thread may clear it too, mid-read.
        known = {rowid: self._decoded.get(key) for rowid, key in keys.items()}
        claims: dict[int, str] = {}
        for chunk in chunks([rowid for rowid, rev in known.items() if rev is None]):
            sql = (
                f"SELECT rowid, claims FROM revisions WHERE rowid IN ({','.join('?' * len(chunk))})"
            )
            claims.update(self._read(sql, chunk))
        pages: dict[int, Page] = {}
        for r in rows:
            revision = known[r[1]]
            if revision is None:
                lean = r[7:]
                full = (*lean[:CLAIMS_AT], claims[r[1]], *lean[CLAIMS_AT:])
                revision = self._remember(keys[r[1]], decode_revision(full))
            pages[r[0]] = self._page(r[2:], revision)
        return pages

    def _revision_from_row(self, r: Sequence[Any]) -> Revision:
        """Decode a revision row; decoded revisions are cached by the row's full content.

        Revisions are immutable, so a row read again decodes to the same object; keying on every
        column (not just the id) means a row changed behind our back is decoded afresh, so
        ``verify`` still sees the bytes on disk. Bounded: the cache is cleared when full.
        """
        key = tuple(r)
        cached = self._decoded.get(key)
        return self._remember(key, decode_revision(r)) if cached is None else cached

    def _remember(self, key: tuple[Any, ...], revision: Revision) -> Revision:
        if len(self._decoded) >= _DECODED_REVISIONS:
            self._decoded.clear()
        self._decoded[key] = revision
        return revision

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
        for chunk in chunks(list(dict.fromkeys(topic_keys))):
            sql = (
                self._PAGE_SELECT
                + f" WHERE p.scope_key = ? AND p.topic_key IN ({','.join('?' * len(chunk))})"
            )
            for row in self._read(sql, [scope.key, *chunk]):
                page = self._page_from_row(row)
                found[page.topic_key] = page
        return found

    def pages_citing(self, scope: Scope, episode_ids: Iterable[str]) -> dict[str, list[str]]:
        """Per episode of ``episode_ids``: the active pages of ``scope`` whose current revision
        cites it (recall answers an episode's situation with its page's lesson)."""
        found: dict[str, list[str]] = {}
        for chunk in chunks(list(dict.fromkeys(episode_ids))):
            sql = (
                "SELECT c.episode_id, p.id FROM citations c JOIN pages p ON p.id = c.page_id"
                " AND c.revision = p.current_revision WHERE p.scope_key = ?"
                f" AND p.status = 'active' AND c.episode_id IN ({','.join('?' * len(chunk))})"
                " ORDER BY c.episode_id, p.id"
            )
            for episode_id, page_id in self._read(sql, [scope.key, *chunk]):
                found.setdefault(episode_id, []).append(page_id)
        return found

    def pages_by_id(self, scope: Scope, page_ids: Iterable[str]) -> dict[str, Page]:
        """Issue 3: the pages of ``scope`` among ``page_ids``, in one read per 500 ids."""
        found: dict[str, Page] = {}
        for chunk in chunks(list(dict.fromkeys(page_ids))):
            where = f" WHERE p.scope_key = ? AND p.id IN ({','.join('?' * len(chunk))})"
            found.update((p.id, p) for p in self._lean_pages(where, [scope.key, *chunk]).values())
        return found

    def revisions(self, page_id: str) -> list[Revision]:
        rows = self._read(
            f"SELECT {REVISION_COLUMNS} FROM revisions WHERE page_id = ? ORDER BY number",
            (page_id,),
        )
        if not rows:
            raise NotFound(f"no page {page_id}")
        return [self._revision_from_row(r) for r in rows]

    def revision(self, page_id: str, number: int) -> Revision:
        """One revision of a page, decoded alone (``revisions`` decodes them all)."""
        rows = self._read(
            f"SELECT {REVISION_COLUMNS} FROM revisions WHERE page_id = ? AND number = ?",
            (page_id, number),
        )
        if not rows:
            raise NotFound(f"no revision {number} of page {page_id}")
        return self._revision_from_row(rows[0])

    def revision_keys(self, scope: Scope) -> list[tuple[str, int, str, str, str | None]]:
        """``(page_id, number, hash, author, cycle_id)`` of every revision of ``scope``'s pages,
        nothing decoded: what an integrity check compares across time."""
        rows = self._read(
            "SELECT r.page_id, r.number, r.hash, r.author, r.cycle_id FROM revisions r"
            " JOIN pages p ON p.id = r.page_id WHERE p.scope_key = ? ORDER BY r.page_id, r.number",
            (scope.key,),
        )
        return [(r[0], int(r[1]), r[2], r[3], r[4]) for r in rows]

    # -- search -----------------------------------------------------------------------------

    @staticmethod
    def _match(scope: Scope, column: str, terms: Sequence[str]) -> str:
        return f"scope : {scope_token(scope.key)} AND {SQLiteStore._any_of(column, terms)}"

    @staticmethod
    def _any_of(column: str, terms: Sequence[str]) -> str:
        """An FTS5 expression: any of ``terms`` in ``column``."""
        return f"{column} : ({' OR '.join(fts_phrase(t) for t in terms)})"

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
        # Only the pages that make the cut are read, and their claims only when not decoded yet.
        pages = self._lean_pages(f" WHERE p.rid IN ({','.join('?' * len(top))})", top)
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
        # Rank inside the FTS table first, then read only the top rows: joining every match
        # before sorting costs a row lookup per match (tens of thousands for common terms).
        # With a window, only the newest `window` matches are scored: FTS5 walks the doclists
        # newest first and stops, so a term matching most of the brain costs the window, not
        # the brain. Older evidence reaches recall through the pages it was distilled into.
        ranked = self._ranked_alone(scope, terms, limit, window) if window is not None else None
        if ranked is None:
            ranked = self._ranked_scoped(scope, terms, limit, window)
        if not ranked:
            return []
        marks = ",".join("?" * len(ranked))
        rows = self._read(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE seq IN ({marks}) AND scope_key = ?",
            [*(seq for seq, _ in ranked), scope.key],
        )
        found = {r[0]: self._episode_from_row(r) for r in rows}
        return [(found[seq], -rank) for seq, rank in ranked if seq in found]

    def _ranked_scoped(
        self, scope: Scope, terms: Sequence[str], limit: int, window: int | None
    ) -> list[tuple[int, float]]:
        """The ``limit`` best (rowid, bm25) of ``scope`` for ``terms``, best first."""
        candidates = "SELECT rowid, bm25(episodes_fts, 0, 1.0) AS rank FROM episodes_fts"
        candidates += " WHERE episodes_fts MATCH ?"
        params: list[Any] = [self._match(scope, "body", terms)]
        if window is not None:
            candidates += " ORDER BY rowid DESC LIMIT ?"
            params.append(window)
        return self._read(
            f"SELECT rowid, rank FROM ({candidates}) ORDER BY rank, rowid DESC LIMIT ?",
            (*params, limit),
        )

    def _ranked_alone(
        self, scope: Scope, terms: Sequence[str], limit: int, window: int
    ) -> list[tuple[int, float]] | None:
        """What :meth:`_ranked_scoped` returns, faster when ``scope`` is the only one with
        episodes (an agent's own brain); None when other scopes share the brain.

        bm25 first counts the documents holding each phrase of the query by walking its whole
        doclist, the scope token's too, which every episode of the scope carries (about 5 ms
        at 100,000 episodes). Here the scope token only finds the window's bounds (rowids, no
        ranking), and bm25 ranks the body terms between them: the same rows (no other scope
        has any) and the same scores (the scope column weighs 0). Checked after the bounds are
        read, and rowids only grow (AUTOINCREMENT), so an episode of another scope stored
        meanwhile lies past the window."""
        bounds = self._read(
            "SELECT min(rowid), max(rowid) FROM (SELECT rowid FROM episodes_fts"
            " WHERE episodes_fts MATCH ? ORDER BY rowid DESC LIMIT ?)",
            (self._match(scope, "body", terms), window),
        )
        low, high = bounds[0]
        if low is None:
            return []
        others = self._read(
            "SELECT EXISTS(SELECT 1 FROM episodes WHERE scope_key < ?)"
            " OR EXISTS(SELECT 1 FROM episodes WHERE scope_key > ?)",
            (scope.key, scope.key),
        )
        if others[0][0]:
            return None
        return self._read(
            "SELECT rowid, bm25(episodes_fts, 0, 1.0) AS rank FROM episodes_fts"
            " WHERE episodes_fts MATCH ? AND rowid BETWEEN ? AND ?"
            " ORDER BY rank, rowid DESC LIMIT ?",
            (self._any_of("body", terms), low, high, limit),
        )

    # -- cycles -----------------------------------------------------------------------------

    def checkpoint(self, scope: Scope) -> int:
        rows = self._read("SELECT seq FROM checkpoints WHERE scope_key = ?", (scope.key,))
        return int(rows[0][0]) if rows else 0

    def strengths(self, page_ids: Iterable[str]) -> dict[str, Strength]:
        found: dict[str, Strength] = {}
        for chunk in chunks(list(dict.fromkeys(page_ids))):
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
            finished_at=parse_dt(r[4]),
            checkpoint_before=r[5],
            checkpoint_after=r[6],
            report=CycleReport.model_validate_json(r[7]),
            undone_at=parse_dt(r[8]),
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
