"""How the SQLite store commits a cycle's :class:`~reverie.store.base.Changeset`: one
``BEGIN IMMEDIATE`` transaction that checks the lease and the checkpoint, writes pages and
revisions, marks episodes, moves the checkpoint and records the cycle, its memory rows, a
reviewed plan and the cumulative stats. ``on_step`` names each point inside the transaction
(the crash harness kills there, issue 9)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from reverie.errors import Conflict
from reverie.models import Episode, Revision, Scope, now_utc, revision_meta
from reverie.store.base import Changeset, PageWrite, StepHook
from reverie.store.sqlite_rows import REVISION_COLUMNS, iso, scope_token

__all__ = ["SQLiteCommitMixin"]


class _Host(Protocol):
    """What the mixin needs from :class:`reverie.store.sqlite.SQLiteStore` and its mixins."""

    def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def _ensure_scopes(self, c: sqlite3.Connection, scopes: Iterable[Scope]) -> None: ...

    def _check_lease(self, c: Any, changes: Changeset) -> None: ...

    def _existing(
        self, c: sqlite3.Connection, episodes: Sequence[Episode]
    ) -> dict[str, Episode]: ...

    def _insert_episodes(
        self, c: sqlite3.Connection, episodes: Sequence[Episode]
    ) -> list[Episode]: ...

    def _settle_applied(self, c: Any, changes: Changeset) -> None: ...

    def _record_dream(self, c: Any, changes: Changeset) -> None: ...

    def _check_checkpoint(self, c: sqlite3.Connection, changes: Changeset) -> None: ...

    def _write_page(self, c: sqlite3.Connection, w: PageWrite) -> None: ...

    def _insert_revision(self, c: sqlite3.Connection, rev: Revision) -> None: ...

    def _apply_marks(self, c: sqlite3.Connection, changes: Changeset) -> None: ...

    def _record_cycle(self, c: sqlite3.Connection, changes: Changeset) -> None: ...

    def _record_memory(self, c: sqlite3.Connection, changes: Changeset) -> None: ...


class SQLiteCommitMixin:
    """``Store.commit`` for :class:`reverie.store.sqlite.SQLiteStore`."""

    def commit(self: _Host, changes: Changeset, on_step: StepHook | None = None) -> None:
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
                (changes.scope.key, changes.checkpoint, iso(now_utc())),
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

    def _write_page(self: _Host, c: sqlite3.Connection, w: PageWrite) -> None:
        rev = w.revision
        row = c.execute(
            "SELECT rid, current_revision, scope_key FROM pages WHERE id = ?", (rev.page_id,)
        ).fetchone()
        current = row[1] if row else None
        if current != w.expected_revision or (row and row[2] != w.scope.key):
            raise Conflict(f"page {rev.page_id} changed since it was read (revision {current})")
        when = iso(rev.created_at)
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
        claims = json.dumps([cl.stored() for cl in rev.claims], ensure_ascii=False)
        c.execute(
            f"INSERT INTO revisions ({REVISION_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                rev.page_id,
                rev.number,
                rev.hash,
                rev.title,
                str(rev.kind),
                claims,
                rev.confidence,
                str(rev.status),
                iso(rev.valid_from),
                iso(rev.valid_until),
                rev.superseded_by,
                rev.cycle_id,
                rev.author,
                rev.reason,
                iso(rev.created_at),
                revision_meta(rev),
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
                (iso(now_utc()), changes.undone_cycle),
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
                    iso(cy.started_at),
                    iso(cy.finished_at),
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
                [(cycle_id, o.page_id, o.episodes, iso(o.last_seen)) for o in changes.observations],
            )
        if changes.journal:
            when = changes.cycle.started_at if changes.cycle else now_utc()
            c.execute(
                "INSERT INTO journal (scope_key, cycle_id, created_at, text) VALUES (?,?,?,?)",
                (changes.scope.key, cycle_id, iso(when), changes.journal),
            )
