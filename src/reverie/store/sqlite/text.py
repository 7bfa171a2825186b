"""SQLite's episode full-text index, kept in parts by ``seq`` so a search costs a part, not
the brain.

FTS5's ``bm25`` starts every query by counting the documents that hold each phrase, walking
the phrase's whole doclist; a window (recall's newest ``window`` matches) bounds which rows are
ranked but not that walk. In one table the walk grows with the brain: at a million episodes it
is most of an episode search. So the index is a run of contentless FTS5 tables, each holding
the episodes of one range of seqs: ``episodes_fts`` those from seq 1, ``episodes_fts_<low>``
those from ``low`` until the next part's low. ``episodes_fts_parts`` lists the lows. Appends go
to the newest part until it spans :data:`PART_ROWS` seqs, when a new part starts at the next
seq; an episode written back (the cold tier's restore) goes to the part of its seq. A brain
indexed before parts existed keeps its one table as the first part, however large.

A search walks the parts newest first and stops when the window is full, so its cost is that
of the parts the window reaches: one or two at most for a common term. Each part ranks with its
own statistics (a phrase's document count within the part); results of several parts are
merged by score. Below :data:`PART_ROWS` episodes there is one part and the ranking is exactly
one table's.
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from reverie.models import Episode, Scope
from reverie.store.sql.rows import episode_search_text, fts_phrase, scope_token

__all__ = ["PART_ROWS", "EpisodeText", "part_table"]

PART_ROWS = 1 << 16
"""How many seqs a part spans before the next begins: a part's doclists bound a query's cost."""

Read = Callable[[str, Sequence[Any]], list[Any]]
Ranked = list[tuple[int, float]]


def part_table(low: int) -> str:
    """The FTS5 table of the part whose first seq is ``low``."""
    return "episodes_fts" if low == 1 else f"episodes_fts_{int(low)}"


def any_of(column: str, terms: Sequence[str]) -> str:
    """An FTS5 expression: any of ``terms`` in ``column``."""
    return f"{column} : ({' OR '.join(fts_phrase(t) for t in terms)})"


def scoped(scope: Scope, column: str, terms: Sequence[str]) -> str:
    """An FTS5 expression: any of ``terms`` in ``column``, in ``scope`` only."""
    return f"scope : {scope_token(scope.key)} AND {any_of(column, terms)}"


def _lows(c: sqlite3.Connection | Read) -> list[int]:
    sql = "SELECT low FROM episodes_fts_parts ORDER BY low"
    rows = c.execute(sql).fetchall() if isinstance(c, sqlite3.Connection) else c(sql, ())
    return [r[0] for r in rows]


def _by_part(lows: Sequence[int], episodes: Iterable[Episode]) -> dict[int, list[Episode]]:
    parts: dict[int, list[Episode]] = defaultdict(list)
    for e in episodes:
        parts[lows[bisect_right(lows, e.seq or 0) - 1]].append(e)
    return parts


def _rows(episodes: Sequence[Episode]) -> list[tuple[int | None, str, str]]:
    tokens = {key: scope_token(key) for key in {e.scope.key for e in episodes}}
    return [(e.seq, tokens[e.scope.key], episode_search_text(e)) for e in episodes]


class EpisodeText:
    """The parts, written inside the caller's transaction and searched through ``read``."""

    def __init__(self, read: Read, part_rows: int = PART_ROWS) -> None:
        self.read = read
        self.part_rows = part_rows

    # -- writing ----------------------------------------------------------------------------

    def index(self, c: sqlite3.Connection, episodes: Sequence[Episode]) -> None:
        """Index ``episodes`` (seqs assigned), each in the part of its seq, starting parts as
        the newest fills."""
        lows = _lows(c)
        for e in sorted(episodes, key=lambda e: e.seq or 0):
            if (e.seq or 0) >= lows[-1] + self.part_rows:
                lows.append(self._start_part(c, e.seq or 0))
        for low, members in _by_part(lows, episodes).items():
            c.executemany(
                f"INSERT INTO {part_table(low)}(rowid, scope, body) VALUES (?,?,?)",
                _rows(members),
            )

    @staticmethod
    def _start_part(c: sqlite3.Connection, low: int) -> int:
        c.execute(
            f"CREATE VIRTUAL TABLE {part_table(low)} USING fts5(scope, body, content='',"
            " tokenize='porter unicode61')"
        )
        c.execute("INSERT INTO episodes_fts_parts(low) VALUES (?)", (low,))
        return low

    @staticmethod
    def unindex(c: sqlite3.Connection, live: Sequence[Episode]) -> None:
        """FTS5 ``delete`` of ``live`` episodes with the values they were indexed with."""
        for low, members in _by_part(_lows(c), live).items():
            table = part_table(low)
            c.executemany(
                f"INSERT INTO {table}({table}, rowid, scope, body) VALUES ('delete', ?, ?, ?)",
                _rows(members),
            )

    @staticmethod
    def tables(c: sqlite3.Connection) -> list[str]:
        """Every part's table, oldest first."""
        return [part_table(low) for low in _lows(c)]

    # -- searching --------------------------------------------------------------------------

    def ranked(self, scope: Scope, terms: Sequence[str], limit: int, window: int | None) -> Ranked:
        """The ``limit`` best (seq, bm25) of ``scope`` for ``terms``, best first: among its
        newest ``window`` matches, or all of them (None)."""
        found: Ranked = []
        left = window
        alone: bool | None = None
        for low in reversed(_lows(self.read)):
            table = part_table(low)
            if left is None:
                found += self._rank(table, scoped(scope, "body", terms), None, limit)
                continue
            bounds, count = self._bounds(table, scope, terms, left)
            if not count:
                continue
            if alone is None:  # after the newest bounds are read (see _alone)
                alone = self._alone(scope)
            match = any_of("body", terms) if alone else scoped(scope, "body", terms)
            found += self._rank(table, match, bounds, limit)
            left -= count
            if left <= 0:
                break
        return sorted(found, key=lambda hit: (hit[1], -hit[0]))[:limit]

    def _bounds(
        self, table: str, scope: Scope, terms: Sequence[str], window: int
    ) -> tuple[tuple[int, int], int]:
        """The lowest and highest seq of the newest ``window`` matches of ``scope`` in
        ``table``, and how many there are (no ranking: FTS5 walks newest first and stops)."""
        row = self.read(
            f"SELECT min(rowid), max(rowid), count(*) FROM (SELECT rowid FROM {table}"
            f" WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?)",
            (scoped(scope, "body", terms), window),
        )[0]
        return (row[0], row[1]), row[2]

    def _rank(self, table: str, match: str, bounds: tuple[int, int] | None, limit: int) -> Ranked:
        sql = f"SELECT rowid, bm25({table}, 0, 1.0) AS rank FROM {table} WHERE {table} MATCH ?"
        params: list[Any] = [match]
        if bounds is not None:
            sql += " AND rowid BETWEEN ? AND ?"
            params += bounds
        return self.read(sql + " ORDER BY rank, rowid DESC LIMIT ?", (*params, limit))

    def _alone(self, scope: Scope) -> bool:
        """Whether ``scope`` is the only one with episodes (an agent's own brain): then the
        ranking query leaves the scope token out, and bm25 does not walk its doclist, which
        holds every episode of the part. The same rows (no other scope has any) and the same
        scores (the scope column weighs 0). Asked after the newest bounds are read, and seqs
        only grow, so an episode of another scope stored meanwhile lies past the window."""
        rows = self.read(
            "SELECT EXISTS(SELECT 1 FROM episodes WHERE scope_key < ?)"
            " OR EXISTS(SELECT 1 FROM episodes WHERE scope_key > ?)",
            (scope.key, scope.key),
        )
        return not rows[0][0]
