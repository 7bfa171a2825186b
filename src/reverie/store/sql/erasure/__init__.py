"""Erasure, the store's side (migration 0013, docs/privacy.md): one transaction that removes
what an erasure reaches, its receipt and tombstones, and the record of exports.

Erasure is the one exception to "revisions are never updated". :func:`erase` applies
an :class:`Erasure` — pure data the planner (:mod:`reverie.memory.erasure`) computed by reading —
in ONE transaction, in this order: revisions rewritten (a tombstone each), pages deleted
(a tombstone per revision), archive bundles re-addressed, episodes deleted with their full-text
rows, citations, vector units and archive index rows, whole scopes removed, then the derived
text (embeddings no unit uses, model answers, plans, cycle reports, the journal, error
messages) scrubbed (:mod:`reverie.store.sql.erasure.scrub`), and the receipt written. Every
write checks what the plan read (compare-and-set: a revision's hash, a page's revisions, the
episodes still there, no new citation of an erased episode), so an erasure planned on state that
moved is refused whole.

A dry run runs the same transaction and rolls it back: its counts are exactly what applying
would do. Files (bundles, the mirror) and the physical scrub happen outside, in the planner,
and a receipt records what is still due after the commit (``pending``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from datetime import datetime
from typing import Any

from reverie.errors import Conflict, NotFound
from reverie.models import Episode, Scope, revision_meta
from reverie.store.base import StepHook
from reverie.store.records import (
    Erased,
    Erasure,
    ExportRecord,
    Receipt,
    RevisionRewrite,
    Tombstone,
    no_step,
)
from reverie.store.sql.database import Database
from reverie.store.sql.erasure.scrub import (
    Needles,
    episode_mentions,
    ids_per_tenant,
    scrub_derived,
)
from reverie.store.sql.rows import (
    BUNDLE_COLUMNS,
    EPISODE_COLUMNS,
    INSERT_CITATION,
    bundle_row,
    citation_rows,
)

__all__ = [
    "erase",
    "erasure_episodes",
    "erasure_receipt",
    "erasure_receipts",
    "exports",
    "finish_erasure",
    "pages_citing_any",
    "pages_containing",
    "record_export",
    "tombstones",
]  # the records live in reverie.store.records

_TOMBSTONE_COLUMNS = (
    "erasure_id, page_id, revision, scope_key, hash_before, hash_after, created_at, reason,"
    " request_id"
)
_RECEIPT_COLUMNS = "id, request_id, created_at, finished_at, request, counts, details"
_EPISODE_TEXT = (
    "situation", "action", "outcome_details", "error", "lesson", "category", "tools",
    "entities", "metadata", "session_id", "id",
)  # fmt: skip
"""Every free-form column of an episode, where a subject is looked for."""


class _RolledBack(Exception):
    """Raised inside a dry run's transaction so that it rolls back."""


def erasure_episodes(
    db: Database,
    scopes: Sequence[Scope],
    *,
    before: datetime | None = None,
    containing: str | None = None,
) -> list[Episode]:
    """The episodes of ``scopes`` (created before ``before``; with ``containing`` in any
    free-form field, case-insensitively, metadata included), by seq. Archived stubs are
    included unless ``containing`` is given (their text is in the cold tier, which the
    caller searches)."""
    found: list[Episode] = []
    for scope in scopes:
        where, params = "scope_key = ?", [scope.key]
        if before is not None:
            where += " AND created_at < ?"
            params.append(db.dialect.ts(before))
        like = db.dialect.contains(containing) if containing else None
        if like is not None:
            where += " AND (" + " OR ".join(like[0].format(c) for c in _EPISODE_TEXT) + ")"
            params += [like[1]] * len(_EPISODE_TEXT)
        rows = db.read(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {where} ORDER BY seq", params)
        found += map(db.decode.episode, rows)
    if containing:  # the database's test may be a superset (see Dialect.contains)
        needles = Needles([containing])
        found = [ep for ep in found if episode_mentions(ep, needles)]
    return found


def pages_citing_any(db: Database, episode_ids: Iterable[str], *, tenant: str) -> list[str]:
    """Pages of any scope of ``tenant`` with a revision (current or not) citing one of
    ``tenant``'s episodes ``episode_ids``."""
    found: set[str] = set()
    for where, params in db.dialect.members("episode_id", list(dict.fromkeys(episode_ids))):
        rows = db.read(
            f"SELECT DISTINCT page_id FROM citations WHERE tenant = ? AND {where}",
            [tenant, *params],
        )
        found.update(r[0] for r in rows)
    return sorted(found)


def pages_containing(db: Database, scopes: Sequence[Scope], text: str) -> list[str]:
    """Pages of ``scopes`` whose topic key or any revision's title, claims, reason or
    metadata may contain ``text`` (a superset where the database cannot match case-
    insensitively; the caller checks)."""
    like = db.dialect.contains(text)
    cond, params = ("", []) if like is None else (like[0], [like[1]])
    where = " AND (" + " OR ".join(cond.format(c) for c in _PAGE_TEXT) + ")" if cond else ""
    found: set[str] = set()
    for scope in scopes:
        rows = db.read(
            "SELECT DISTINCT r.page_id FROM revisions r JOIN pages p ON p.id = r.page_id"
            f" WHERE p.scope_key = ?{where}",
            [scope.key, *(params * len(_PAGE_TEXT) if cond else [])],
        )
        found.update(r[0] for r in rows)
    return sorted(found)


# -- the transaction -----------------------------------------------------------------------


def erase(
    db: Database, erasure: Erasure, *, apply: bool = True, on_step: StepHook | None = None
) -> Erased:
    """Apply ``erasure`` in one transaction (``apply=False``: run it and roll it back);
    the rows it removes or rewrites, per store area, and the tables left holding old
    versions of them (the receipt's ``residue``)."""
    step = on_step or no_step
    counts: Counter[str] = Counter(erasure.counted)
    residue: list[str] = []
    try:
        with db.backend.secure() if apply else nullcontext(), db.write() as c:
            for scope in sorted({*erasure.touched, *erasure.scopes}, key=str):
                db.backend.lock_scope(c, scope)  # no cycle of these scopes lands meanwhile
            _insert_receipt(db, c, erasure)  # first: the tombstones name it
            _erase_in(db, c, erasure, counts, step if apply else no_step)
            residue = db.backend.residue(c)
            if not apply:
                raise _RolledBack
            db.backend.compact_text_index(c)
            _count_receipt(db, c, erasure, counts, residue)
            step("erase-receipt")
    except _RolledBack:
        pass
    except db.dialect.races as exc:
        raise Conflict(f"a concurrent change got there first: {exc}") from exc
    counts["tombstones"] = len(erasure.tombstones())
    counted = dict(sorted((k, v) for k, v in counts.items() if v))
    return Erased(counted, residue, bool(residue) and db.backend.keeps_wal())


def _erase_in(db: Database, c: Any, e: Erasure, n: Counter[str], step: StepHook) -> None:
    _rewrite_revisions(db, c, e, n)
    step("erase-revisions")
    _drop_pages(db, c, e, n)
    _insert_tombstones(db, c, e)
    step("erase-pages")
    _swap_bundles(db, c, e, n)
    _delete_episodes(db, c, e, n)
    step("erase-episodes")
    _delete_scopes(db, c, e, n)
    scrub_derived(c, db.dialect, e, n)
    step("erase-derived")


def _insert_tombstones(db: Database, c: Any, e: Erasure) -> None:
    when = db.dialect.ts(e.at)
    c.executemany(
        f"INSERT INTO tombstones ({_TOMBSTONE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
        [
            (t.erasure_id, t.page_id, t.revision, t.scope.key, t.hash_before, t.hash_after, when,
             t.reason, t.request_id)
            for t in e.tombstones()
        ],
    )  # fmt: skip


def _rewrite_revisions(db: Database, c: Any, e: Erasure, n: Counter[str]) -> None:
    for w in e.rewrites:
        rev = w.revision
        cur = c.execute(
            "UPDATE revisions SET hash = ?, title = ?, claims = ?, status = ?, reason = ?,"
            " meta = ? WHERE page_id = ? AND number = ? AND hash = ?",
            (
                rev.hash,
                rev.title,
                json.dumps([cl.stored() for cl in rev.claims], ensure_ascii=False),
                str(rev.status),
                rev.reason,
                revision_meta(rev),
                rev.page_id,
                rev.number,
                w.hash_before,
            ),
        )
        if cur.rowcount != 1:
            raise _moved(f"revision {rev.number} of page {rev.page_id} changed")
        n["citations"] += c.execute(
            "DELETE FROM citations WHERE page_id = ? AND revision = ?",
            (rev.page_id, rev.number),
        ).rowcount - len(rev.citations)
        c.executemany(INSERT_CITATION, citation_rows(w.scope.tenant, rev))
        if w.current:
            _reindex(db, c, w)
        n["revisions_rewritten"] += 1
    for page_id, topic_key in e.topic_keys.items():
        c.execute("UPDATE pages SET topic_key = ? WHERE id = ?", (topic_key, page_id))
    for page_id in sorted({w.revision.page_id for w in e.rewrites}):
        n["vector_units"] += _drop_claim_units(c, page_id)
    n["pages_rewritten"] += len({w.revision.page_id for w in e.rewrites})


def _reindex(db: Database, c: Any, w: RevisionRewrite) -> None:
    row = c.execute(
        "SELECT rid FROM pages WHERE id = ? AND current_revision = ?",
        (w.revision.page_id, w.revision.number),
    ).fetchone()
    if row is None:
        raise _moved(f"page {w.revision.page_id} has a newer revision")
    c.execute("UPDATE pages SET status = ? WHERE rid = ?", (str(w.revision.status), row[0]))
    db.backend.index_page(c, row[0], w.scope, w.revision, False)


def _drop_pages(db: Database, c: Any, e: Erasure, n: Counter[str]) -> None:
    for d in e.drops:
        rows = c.execute(
            "SELECT number, hash FROM revisions WHERE page_id = ? ORDER BY number", (d.page_id,)
        ).fetchall()
        page = c.execute(
            "SELECT rid FROM pages WHERE id = ?" + db.dialect.for_update, (d.page_id,)
        ).fetchone()
        if page is None or [tuple(r) for r in rows] != list(d.revisions):
            raise _moved(f"page {d.page_id} changed")
        n["vector_units"] += _drop_claim_units(c, d.page_id)
        c.execute("DELETE FROM observations WHERE page_id = ?", (d.page_id,))
        c.execute(
            "DELETE FROM promotions WHERE org_page_id = ? OR source_page_id = ?",
            (d.page_id, d.page_id),
        )
        n["citations"] += c.execute(
            "DELETE FROM citations WHERE page_id = ?", (d.page_id,)
        ).rowcount
        n["revisions_deleted"] += c.execute(
            "DELETE FROM revisions WHERE page_id = ?", (d.page_id,)
        ).rowcount
        db.backend.unindex_page(c, page[0])
        c.execute("DELETE FROM pages WHERE id = ?", (d.page_id,))
        n["pages_deleted"] += 1


def _swap_bundles(db: Database, c: Any, e: Erasure, n: Counter[str]) -> None:
    for tenant, ids in ids_per_tenant(e.episodes).items():
        for where, params in db.dialect.members("episode_id", sorted(ids)):
            n["archived_episodes"] += c.execute(
                f"DELETE FROM archived_episodes WHERE tenant = ? AND {where}",
                [tenant, *params],
            ).rowcount
    for swap in e.bundles:
        old, new = swap.old, swap.new
        left = c.execute(
            "SELECT count(*) FROM archived_episodes WHERE bundle = ?", (old.hash,)
        ).fetchone()[0]
        if left != (new.episodes if new else 0):
            raise _moved(f"archive bundle {old.hash} changed")
        if new is not None:
            c.execute(
                f"INSERT INTO archive_bundles ({BUNDLE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)"
                " ON CONFLICT DO NOTHING",
                bundle_row(db.dialect, new),
            )
            c.execute(
                "UPDATE archived_episodes SET bundle = ? WHERE bundle = ?", (new.hash, old.hash)
            )
        c.execute("DELETE FROM archive_bundles WHERE hash = ?", (old.hash,))
        n["bundles_rewritten" if new else "bundles_removed"] += 1


def _delete_episodes(db: Database, c: Any, e: Erasure, n: Counter[str]) -> None:
    for tenant, ids in ids_per_tenant(e.episodes).items():
        for where, params in db.dialect.members("episode_id", sorted(ids)):
            if c.execute(
                f"DELETE FROM citations WHERE tenant = ? AND {where}", [tenant, *params]
            ).rowcount:
                raise _moved("a revision written since the plan cites an erased episode")
    for scope, refs in _by_scope(e.episodes):
        for where, params in db.dialect.members("ref", refs):
            n["vector_units"] += c.execute(
                f"DELETE FROM vector_units WHERE kind = 'episode' AND scope_key = ? AND {where}",
                [scope, *params],
            ).rowcount
    seqs = sorted(ep.seq or 0 for ep in e.episodes)
    db.backend.unindex_episodes(c, seqs)
    deleted = 0
    for where, params in db.dialect.members("seq", seqs):
        deleted += c.execute(f"DELETE FROM episodes WHERE {where}", params).rowcount
    if deleted != len(seqs):
        raise _moved(f"{len(seqs) - deleted} episode(s) to erase are no longer stored")
    n["episodes"] += deleted


def _delete_scopes(db: Database, c: Any, e: Erasure, n: Counter[str]) -> None:
    for scope in e.scopes:
        key = (scope.key,)
        left = c.execute(
            "SELECT (SELECT count(*) FROM episodes WHERE scope_key = ?)"
            " + (SELECT count(*) FROM pages WHERE scope_key = ?)",
            (scope.key, scope.key),
        ).fetchone()[0]
        if left:
            raise _moved(f"scope {scope.key} gained episodes or pages")
        c.execute(
            "DELETE FROM observations WHERE cycle_id IN"
            " (SELECT id FROM cycles WHERE scope_key = ?)",
            key,
        )
        n["vector_units"] += c.execute("DELETE FROM vector_units WHERE scope_key = ?", key).rowcount
        c.execute("DELETE FROM promotions WHERE source_scope = ?", key)
        for table, area in _SCOPE_TABLES.items():
            n[area] += c.execute(f"DELETE FROM {table} WHERE scope_key = ?", key).rowcount
        c.execute("DELETE FROM scopes WHERE scope_key = ?", key)
        n["scopes"] += 1


def _insert_receipt(db: Database, c: Any, e: Erasure) -> None:
    details = {**e.details, "pending": dict(e.pending)}
    c.execute(
        f"INSERT INTO erasures ({_RECEIPT_COLUMNS}) VALUES (?,?,?,NULL,?,?,?)",
        (
            e.id,
            e.request_id,
            db.dialect.ts(e.at),
            json.dumps(dict(e.request), ensure_ascii=False),
            "{}",
            json.dumps(details, ensure_ascii=False),
        ),
    )


def _count_receipt(
    db: Database, c: Any, e: Erasure, n: Counter[str], residue: Sequence[str]
) -> None:
    n["tombstones"] = len(e.rewrites) + sum(len(d.revisions) for d in e.drops)
    counts = dict(sorted((k, v) for k, v in n.items() if v))
    wal = bool(residue) and db.backend.keeps_wal()
    details = {**e.details, "pending": dict(e.pending), **Erased(counts, residue, wal).recorded()}
    c.execute(
        "UPDATE erasures SET counts = ?, details = ? WHERE id = ?",
        (json.dumps(counts), json.dumps(details, ensure_ascii=False), e.id),
    )


# -- receipts and tombstones ---------------------------------------------------------------


def _receipt_from_row(db: Database, r: Sequence[Any], tombstones: Sequence[Tombstone]) -> Receipt:
    d = db.dialect
    return Receipt(
        id=r[0],
        request_id=r[1],
        created_at=d.at(r[2]),
        finished_at=d.when(r[3]),
        request=d.json(r[4]),
        counts=d.json(r[5]),
        details=d.json(r[6]),
        tombstones=tombstones,
    )


def erasure_receipt(db: Database, erasure_id: str) -> Receipt:
    """The receipt of ``erasure_id`` with its tombstones; NotFound if there is none."""
    rows = db.read(f"SELECT {_RECEIPT_COLUMNS} FROM erasures WHERE id = ?", (erasure_id,))
    if not rows:
        raise NotFound(f"no erasure receipt {erasure_id}")
    return _receipt_from_row(db, rows[0], _tombstones(db, "erasure_id", [erasure_id]))


def erasure_receipts(db: Database, *, unfinished: bool = False, limit: int = 50) -> list[Receipt]:
    """The newest ``limit`` receipts (only those whose file work is still due), newest
    first, without their tombstones."""
    where = " WHERE finished_at IS NULL" if unfinished else ""
    rows = db.read(
        f"SELECT {_RECEIPT_COLUMNS} FROM erasures{where} ORDER BY created_at DESC, id DESC LIMIT ?",
        (limit,),
    )
    return [_receipt_from_row(db, r, ()) for r in rows]


def finish_erasure(db: Database, erasure_id: str, at: datetime) -> None:
    """Record that the file work after the commit of ``erasure_id`` is done."""
    with db.write() as c:
        c.execute(
            "UPDATE erasures SET finished_at = coalesce(finished_at, ?) WHERE id = ?",
            (db.dialect.ts(at), erasure_id),
        )


def tombstones(db: Database, page_ids: Iterable[str]) -> list[Tombstone]:
    """The tombstones of these pages, oldest first."""
    return _tombstones(db, "page_id", list(dict.fromkeys(page_ids)))


def _tombstones(db: Database, column: str, values: Sequence[str]) -> list[Tombstone]:
    found: list[Tombstone] = []
    for where, params in db.dialect.members(column, list(values)):
        rows = db.read(f"SELECT {_TOMBSTONE_COLUMNS} FROM tombstones WHERE {where}", params)
        found += [
            Tombstone(r[0], r[1], int(r[2]), db.decode.scope(r[3]), r[4], r[5],
                      db.dialect.at(r[6]), r[7], r[8])
            for r in rows
        ]  # fmt: skip
    return sorted(found, key=lambda t: (t.at, t.page_id, t.revision))


# -- exports -------------------------------------------------------------------------------


def record_export(
    db: Database, path: str, kind: str, scopes: Sequence[Scope], at: datetime
) -> None:
    """Remember that ``scopes`` were exported to ``path`` (``markdown`` or ``training``)."""
    when = db.dialect.ts(at)
    with db.write() as c:
        c.executemany(
            "INSERT INTO exports VALUES (?,?,?,?,?) ON CONFLICT (path, kind, scope_key)"
            " DO UPDATE SET last_at = excluded.last_at",
            [(path, kind, s.key, when, when) for s in sorted(set(scopes), key=str)],
        )


def exports(db: Database, scopes: Sequence[Scope]) -> list[ExportRecord]:
    """Where ``scopes`` were exported, by path."""
    found: list[ExportRecord] = []
    for where, params in db.dialect.members("scope_key", [s.key for s in scopes]):
        rows = db.read(
            f"SELECT path, kind, scope_key, first_at, last_at FROM exports WHERE {where}",
            params,
        )
        at = db.dialect.at
        found += [ExportRecord(r[0], r[1], db.decode.scope(r[2]), at(r[3]), at(r[4])) for r in rows]
    return sorted(found, key=lambda x: (x.path, x.kind, x.scope.key))


_PAGE_TEXT = ("r.title", "r.claims", "r.reason", "r.meta", "p.topic_key")
_SCOPE_TABLES = {
    "pending_plans": "plans",
    "leases": "leases",
    "schedule_state": "schedule",
    "checkpoints": "checkpoints",
    "dream_stats": "stats",
    "recall_stats": "recall_stats",
    "journal": "journal",
    "cycles": "cycle_reports",
    "exports": "exports",
    "archive_bundles": "bundles_removed",
}
"""What an erased scope leaves behind in each table, and the receipt's name for it."""


def _by_scope(episodes: Iterable[Episode]) -> list[tuple[str, list[str]]]:
    """The ids of ``episodes`` per scope key (what an episode's vector unit is keyed by)."""
    found: dict[str, list[str]] = {}
    for ep in episodes:
        found.setdefault(ep.scope.key, []).append(ep.id)
    return [(key, sorted(ids)) for key, ids in sorted(found.items())]


def _drop_claim_units(c: Any, page_id: str) -> int:
    prefix = page_id + "#"
    return int(
        c.execute(
            "DELETE FROM vector_units WHERE kind = 'claim' AND substr(ref, 1, ?) = ?",
            (len(prefix), prefix),
        ).rowcount
    )


def _moved(what: str) -> Conflict:
    return Conflict(f"{what} since the erasure was planned; nothing was erased — run it again")
