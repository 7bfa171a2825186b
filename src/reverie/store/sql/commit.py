"""How a store commits a :class:`~reverie.store.base.Changeset`: one transaction that checks the
lease and the checkpoint, writes pages and revisions, marks episodes, moves the checkpoint and
records the cycle, its memory rows, a reviewed plan, the cumulative stats and org promotions.

Every check is a compare-and-set on what the changeset was built from (the checkpoint, each
page's revision, unmarked episodes), so a conflict anywhere rolls the whole change back.
``on_step`` names each point inside the transaction (the crash harness kills there). Times come
from the changeset (``at``, the cycle's own times), never from a clock read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import groupby
from typing import Any

from reverie.errors import Conflict, StoreError
from reverie.models import Episode, Revision
from reverie.store.base import Changeset, PageWrite, Promotion, StepHook
from reverie.store.records import no_step
from reverie.store.sql.cumulative import insert_tally
from reverie.store.sql.database import Database
from reverie.store.sql.leases import check_lease
from reverie.store.sql.plans import settle_applied
from reverie.store.sql.rows import (
    INSERT_CITATION,
    PROMOTION_COLUMNS,
    REVISION_COLUMNS,
    citation_rows,
    marks,
    revision_row,
)

__all__ = ["append", "commit", "dedupe_batch", "insert_episodes"]

EVIDENCE_CHUNK = 5000
"""How many cited ids the evidence check looks up, and holds the answer for, at a time."""

_PROMOTION_UPSERT = (
    " ON CONFLICT (org_page_id) DO UPDATE SET source_revision = excluded.source_revision,"
    " updated_at = excluded.updated_at, cycle_id = excluded.cycle_id"
)


def commit(db: Database, changes: Changeset, on_step: StepHook | None = None) -> None:
    step = on_step or no_step
    try:
        with db.write() as c:
            db.ensure_scopes(c, [changes.scope], changes.at)
            db.backend.lock_scope(c, changes.scope)
            check_lease(c, db.dialect, changes, db.lease_owner)
            _check_checkpoint(c, changes)
            if changes.episodes:  # e.g. a person's edit, recorded as evidence
                _record_episodes(db, c, changes.episodes, changes.at)
            _check_evidence(db, c, changes)
            step("checkpoint-checked")
            for write in changes.page_writes:
                _write_page(db, c, write)
            step("pages-written")
            _apply_marks(db, c, changes)
            step("episodes-marked")
            c.execute(
                "INSERT INTO checkpoints VALUES (?, ?, ?) ON CONFLICT (scope_key) DO UPDATE"
                " SET seq = excluded.seq, updated_at = excluded.updated_at",
                (changes.scope.key, changes.checkpoint, db.dialect.ts(changes.at)),
            )
            _record_cycle(db, c, changes)
            _record_memory(db, c, changes)
            settle_applied(c, db.dialect, changes)
            _record_dream(db, c, changes)
            step("cycle-recorded")
    except db.dialect.races as exc:
        raise Conflict(f"a concurrent change got there first: {exc}") from exc


def _check_evidence(db: Database, c: Any, changes: Changeset) -> None:
    """Every episode the new revisions cite is still stored: an erasure that committed
    while the cycle distilled is a race like another cycle's, answered by ``Conflict``
    (dream again), never by the database's foreign-key error."""
    recorded = {ep.id for ep in changes.episodes}
    citations = (e for w in changes.page_writes for e in w.revision.citations)
    cited = [e for e, _same in groupby(sorted(citations)) if e not in recorded]  # no set of all
    gone: list[str] = []
    for start in range(0, len(cited), EVIDENCE_CHUNK):  # what is found is held a part at a time
        part = cited[start : start + EVIDENCE_CHUNK]
        found: set[str] = set()
        for where, params in db.dialect.members("id", part):
            rows = c.execute(
                f"SELECT id FROM episodes WHERE tenant = ? AND {where}",
                [changes.scope.tenant, *params],
            ).fetchall()
            found.update(r[0] for r in rows)
        gone += [e for e in part if e not in found]
    if gone:
        raise Conflict(
            f"episodes {', '.join(gone[:5])} are not stored in tenant"
            f" {changes.scope.tenant} (erased while the cycle ran?); dream again"
        )


def dedupe_batch(episodes: Sequence[Episode]) -> list[Episode]:
    """``episodes`` with repeats of one id in one tenant dropped; the same id with other
    content in the same tenant conflicts. A later item is judged against the earlier as if
    the earlier were stored already, so one batch answers as two calls would (a dated retry
    of an undated episode conflicts either way)."""
    seen: dict[tuple[str, str], Episode] = {}
    for ep in episodes:
        prior = seen.get(key := (ep.scope.tenant, ep.id))
        if prior is None:
            seen[key] = ep
        elif not ep.same_as(prior.fingerprint(), prior.created_at):
            raise Conflict(f"episode id {ep.id} appears twice in one batch with different content")
    return list(seen.values())


def append(
    db: Database, episodes: Sequence[Episode], *, at: datetime | None = None
) -> list[Episode]:
    unique = dedupe_batch(episodes)
    if not unique:
        return []
    with db.write() as c:
        existing = _existing(db, c, unique)
        return insert_episodes(
            db, c, [e for e in unique if (e.scope.tenant, e.id) not in existing], at
        )


def _existing(db: Database, c: Any, episodes: Sequence[Episode]) -> set[tuple[str, str]]:
    """``(tenant, id)`` of those of ``episodes`` already stored; :class:`Conflict` if one's
    content differs (a date the episode did not bring is no difference:
    :meth:`Episode.same_as`). Only the episode's own tenant is asked: an id another tenant
    uses is no conflict, and the answer says nothing about it."""
    wanted = {(e.scope.tenant, e.id): e for e in episodes}
    rows: list[Any] = []
    for tenant in sorted({t for t, _id in wanted}):
        ids = [i for t, i in wanted if t == tenant]
        for where, params in db.dialect.members("id", ids):
            rows += c.execute(
                "SELECT tenant, id, fingerprint, created_at FROM episodes"
                f" WHERE tenant = ? AND {where}",
                [tenant, *params],
            ).fetchall()
    at = db.dialect.at
    conflicts = [r[1] for r in rows if not wanted[r[0], r[1]].same_as(r[2], at(r[3]))]
    if conflicts:
        raise Conflict(
            f"episode ids already stored with different content: {', '.join(conflicts[:10])}"
        )
    return {(r[0], r[1]) for r in rows}


def insert_episodes(
    db: Database, c: Any, episodes: Sequence[Episode], inserted_at: datetime | None = None
) -> list[Episode]:
    """Store new ``episodes``, received ``inserted_at`` (what ``first_stored`` reports;
    default: their newest ``created_at``, as :meth:`append` says); the stored ones."""
    if not episodes:
        return []
    at = inserted_at or max(e.created_at for e in episodes)
    db.ensure_scopes(c, {e.scope.key: e.scope for e in episodes}.values(), at)
    return db.backend.store_episodes(c, episodes, at)


def _record_episodes(db: Database, c: Any, episodes: Sequence[Episode], at: datetime) -> None:
    existing = _existing(db, c, episodes)
    insert_episodes(db, c, [e for e in episodes if (e.scope.tenant, e.id) not in existing], at)


def _check_checkpoint(c: Any, changes: Changeset) -> None:
    row = c.execute(
        "SELECT seq FROM checkpoints WHERE scope_key = ?", (changes.scope.key,)
    ).fetchone()
    current = row[0] if row else 0
    if current != changes.expected_checkpoint:
        raise Conflict(
            f"scope {changes.scope.key} moved on (checkpoint {current}, expected"
            f" {changes.expected_checkpoint}); another cycle ran — dream again"
        )


def _write_page(db: Database, c: Any, w: PageWrite) -> None:
    rev = w.revision
    row = c.execute(
        "SELECT rid, current_revision, scope_key FROM pages WHERE id = ?" + db.dialect.for_update,
        (rev.page_id,),
    ).fetchone()
    current = row[1] if row else None
    if current != w.expected_revision or (row and row[2] != w.scope.key):
        raise Conflict(f"page {rev.page_id} changed since it was read (revision {current})")
    when = db.dialect.ts(rev.created_at)
    if row is None:
        rid = c.execute(
            "INSERT INTO pages (id, scope_key, topic_key, current_revision, status,"
            " created_at, updated_at) VALUES (?,?,?,?,?,?,?) RETURNING rid",
            (rev.page_id, w.scope.key, w.topic_key, rev.number, str(rev.status), when, when),
        ).fetchall()[0][0]
    else:
        rid = row[0]
    _insert_revision(db, c, w.scope.tenant, rev)
    if row is not None:
        c.execute(
            "UPDATE pages SET current_revision = ?, status = ?, updated_at = ? WHERE id = ?",
            (rev.number, str(rev.status), when, rev.page_id),
        )
    db.backend.index_page(c, rid, w.scope, rev, row is None)


def _insert_revision(db: Database, c: Any, tenant: str, rev: Revision) -> None:
    """A new revision of a page of ``tenant``, whose citations name episodes of it."""
    c.execute(
        f"INSERT INTO revisions ({REVISION_COLUMNS}) VALUES ({marks(16)})",
        revision_row(rev, db.dialect),
    )
    c.executemany(INSERT_CITATION, citation_rows(tenant, rev))


def _apply_marks(db: Database, c: Any, changes: Changeset) -> None:
    if changes.unmark_cycle:
        c.execute(
            "UPDATE episodes SET consolidated_in = NULL WHERE consolidated_in = ?",
            (changes.unmark_cycle,),
        )
    if not changes.marks:
        return
    marked = 0
    # Each id once, as a cycle marks them: a repeated id would count as marked by another cycle.
    for where, params in db.dialect.members("id", changes.marks):
        # By seq, the key: handed ids and a scope, SQLite's planner would walk the scope's
        # index instead of looking each id up.
        marked += c.execute(
            "UPDATE episodes SET consolidated_in = ? WHERE seq IN"
            f" (SELECT seq FROM episodes WHERE tenant = ? AND {where}) AND scope_key = ?"
            " AND consolidated_in IS NULL",
            [changes.mark_cycle, changes.scope.tenant, *params, changes.scope.key],
        ).rowcount
    if marked != len(changes.marks):
        raise Conflict(
            f"{len(changes.marks) - marked} episode(s) were already consolidated by another"
            " cycle; nothing was applied — dream again"
        )


def _record_cycle(db: Database, c: Any, changes: Changeset) -> None:
    d = db.dialect
    if changes.undone_cycle:
        cur = c.execute(
            "UPDATE cycles SET undone_at = ? WHERE id = ? AND undone_at IS NULL",
            (d.ts(changes.at), changes.undone_cycle),
        )
        if cur.rowcount != 1:
            raise Conflict(f"cycle {changes.undone_cycle} was already undone")
    cy = changes.cycle
    if cy is not None:
        c.execute(
            "INSERT INTO cycles (id, scope_key, status, started_at, finished_at,"
            " checkpoint_before, checkpoint_after, report, undone_at)"
            " VALUES (?,?,?,?,?,?,?,?,NULL)",
            (
                cy.id,
                cy.scope.key,
                str(cy.status),
                d.ts(cy.started_at),
                d.ts(cy.finished_at),
                cy.checkpoint_before,
                cy.checkpoint_after,
                cy.report.model_dump_json(),
            ),
        )


def _record_memory(db: Database, c: Any, changes: Changeset) -> None:
    """Reinforcement rows and the journal entry."""
    d = db.dialect
    cycle_id = changes.cycle.id if changes.cycle else changes.undone_cycle
    if changes.observations and cycle_id is not None:
        c.executemany(
            "INSERT INTO observations VALUES (?,?,?,?)",
            [(cycle_id, o.page_id, o.episodes, d.ts(o.last_seen)) for o in changes.observations],
        )
    if changes.journal:
        when = changes.cycle.started_at if changes.cycle else changes.at
        c.execute(
            "INSERT INTO journal (scope_key, cycle_id, created_at, text) VALUES (?,?,?,?)",
            (changes.scope.key, cycle_id, d.ts(when), changes.journal),
        )


def _record_dream(db: Database, c: Any, changes: Changeset) -> None:
    """The cycle's tally and its org promotions; a write outside the scope is refused."""
    strays = [w.revision.page_id for w in changes.page_writes if w.scope != changes.scope]
    if strays:
        raise StoreError(
            f"refused: page writes outside {changes.scope}: {strays[:3]}; only an org"
            " promotion may leave a scope"
        )
    if changes.tally is not None:
        insert_tally(c, db.dialect, changes.tally)
    if not changes.promotions:
        return
    db.ensure_scopes(c, [changes.scope.org], changes.at)
    for p in changes.promotions:
        _check_promotion(changes, p)
        _write_page(db, c, p.write)
        when = db.dialect.ts(p.write.revision.created_at)
        c.execute(
            f"INSERT INTO promotions ({PROMOTION_COLUMNS}) VALUES ({marks(7)})" + _PROMOTION_UPSERT,
            (
                p.write.revision.page_id,
                p.source_page_id,
                p.source_scope.key,
                p.source_revision,
                when,
                when,
                changes.cycle.id if changes.cycle else "",
            ),
        )


def _check_promotion(changes: Changeset, p: Promotion) -> None:
    org = changes.scope.org
    if p.write.scope != org or p.source_scope != changes.scope or changes.cycle is None:
        raise StoreError(
            f"refused: a changeset of {changes.scope} may write only into {org} by promotion"
            f" (got a write into {p.write.scope} from {p.source_scope})"
        )
