"""LangGraph's long-term memory store (``BaseStore``) kept in Reverie scopes.

``ReverieStore(rv, tenant, agent)`` is a ``langgraph.store.base.BaseStore``: pass it as
``graph.compile(store=...)`` and every node's ``store.put/get/search/delete`` lands in Reverie.

Namespaces map to scopes: every item lives in the scope ``tenant/agent``, or, with
``user_label=i``, in ``tenant/agent/<namespace[i]>`` (one scope per user, so recall for one
user never sees another's items: invariant 7). The other namespace labels, then the key, make
the item's path inside its scope; each item is a note (:mod:`reverie.memory.notes`), a page
whose lines are the value's JSON. So a ``put`` is a revision authored ``langgraph`` (``undo``
and ``why`` work on it), a ``delete`` retires the page, and the items are recalled, mirrored
and dreamed over like any other page.

``search(query=...)`` ranks by Reverie's recall over the matching scopes (its scores, best
claim per item); without a query it returns the matching items by path. ``filter`` follows
LangGraph's own store: equality on value fields, nested objects, and ``$eq $ne $gt $gte $lt
$lte``. TTLs are not supported. ``abatch`` runs ``batch`` on a worker thread, one operation at
a time (a lock), so the event loop never waits on the database. Needs the ``langgraph`` extra.
"""

from __future__ import annotations

import asyncio
import json
import operator
import threading
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import quote, unquote

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from reverie.engine import Reverie
from reverie.errors import InvalidInput, InvalidScope
from reverie.memory.notes import NoteChange, commit_notes, note_text, notes
from reverie.models import Page, Scope, now_utc
from reverie.redaction import redact_value

__all__ = ["ReverieStore"]

RECALL_BUDGET = 100_000
"""Tokens recall may pack for one search: enough that the limit, not the budget, cuts."""


def _path(labels: Iterable[str]) -> str:
    return "/" + "/".join(quote(label, safe="") for label in labels)


def _labels(path: str) -> tuple[str, ...]:
    return tuple(unquote(part) for part in path[1:].split("/"))


def _value(page: Page) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(note_text(page))
    return value


def _compare(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics: operators, nested objects, lists element by element."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, dict) and all(_compare(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_compare(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


_ORDER = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}


def _operator(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if op not in _ORDER:
        raise ValueError(f"unsupported filter operator {op!r} (use $eq $ne $gt $gte $lt $lte)")
    return value is not None and bool(_ORDER[op](float(value), float(operand)))


def _matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[-len(path) :]
    return all(p in ("*", n) for n, p in zip(part, path, strict=True))


class ReverieStore(BaseStore):
    """A LangGraph store over the scopes of one Reverie agent."""

    supports_ttl = False

    def __init__(
        self,
        memory: Reverie,
        tenant: str,
        agent: str,
        *,
        user_label: int | None = None,
        author: str = "langgraph",
    ) -> None:
        self.memory = memory
        self.base = Scope.parse({"tenant": tenant, "agent": agent})
        self.user_label = user_label
        self.author = author
        self._lock = threading.Lock()

    # -- namespaces <-> scopes and paths -------------------------------------------------------

    def _place(self, namespace: tuple[str, ...], key: str | None = None) -> tuple[Scope, str]:
        """The scope and the path (of ``key``, or of the namespace itself) for ``namespace``."""
        labels = list(namespace)
        if not labels or any(not isinstance(x, str) or not x for x in labels):
            raise InvalidNamespaceError(f"namespace {namespace!r} needs non-empty string labels")
        scope = self.base
        if self.user_label is not None:
            if self.user_label >= len(labels):
                raise InvalidNamespaceError(
                    f"namespace {namespace!r} has no label {self.user_label} to name the user"
                )
            user = labels.pop(self.user_label)
            try:
                scope = Scope.parse({**self.base.model_dump(exclude_none=True), "user": user})
            except InvalidScope as exc:
                raise InvalidNamespaceError(f"label {user!r} cannot name a user: {exc}") from None
        return scope, _path([*labels, key] if key is not None else labels)

    def _namespace(self, scope: Scope, path: str) -> tuple[tuple[str, ...], str]:
        labels = list(_labels(path))
        key = labels.pop()
        if self.user_label is not None and scope.user is not None:
            labels.insert(self.user_label, scope.user)
        return tuple(labels), key

    def _scopes(self) -> list[Scope]:
        if self.user_label is None:
            return [self.base]
        return [
            s
            for s in self.memory.scopes()
            if (s.tenant, s.agent) == (self.base.tenant, self.base.agent) and s.user
        ]

    def _items(self) -> Iterator[tuple[Scope, str, Page]]:
        for scope in self._scopes():
            for path, page in notes(self.memory.store, scope).items():
                yield scope, path, page

    def _item(self, scope: Scope, path: str, page: Page, score: float | None = None) -> SearchItem:
        namespace, key = self._namespace(scope, path)
        return SearchItem(
            namespace, key, _value(page), page.created_at, page.updated_at, score=score
        )

    # -- operations ----------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        scope, path = self._place(op.namespace, op.key)
        page = notes(self.memory.store, scope).get(path)
        if page is None:
            return None
        item = self._item(scope, path, page)
        return Item(
            value=item.value,
            key=item.key,
            namespace=item.namespace,
            created_at=item.created_at,
            updated_at=item.updated_at,
        )

    def _put(self, op: PutOp) -> None:
        scope, path = self._place(op.namespace, op.key)
        page = notes(self.memory.store, scope).get(path)
        if op.value is None:
            if page is not None:
                change = NoteChange(path, None, page)
                self._commit(scope, change, f"delete {path}")
            return
        try:
            text = json.dumps(dict(op.value), ensure_ascii=False, indent=1)
        except (TypeError, ValueError) as exc:
            raise InvalidInput("value", f"must be JSON-serialisable: {exc}") from None
        clean = json.dumps(redact_value(json.loads(text)), ensure_ascii=False, indent=1)
        self._commit(scope, NoteChange(path, clean, page), f"put {path}\n{clean}")

    def _commit(self, scope: Scope, change: NoteChange, summary: str) -> None:
        """Commit one note; its text is redacted already, inside the parsed value."""
        commit_notes(
            self.memory.store,
            scope,
            [change],
            now=now_utc(),
            summary=summary,
            author=self.author,
            redacted=True,
        )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        found = [
            (scope, path, page)
            for scope, path, page in self._items()
            if self._namespace(scope, path)[0][: len(prefix)] == prefix
            and (not op.filter or _compare(_value(page), op.filter))
        ]
        if op.query:
            scores = self._scores(op.query, {scope for scope, _p, _pg in found})
            ranked = [(scores[pg.id], s, p, pg) for s, p, pg in found if pg.id in scores]
            ranked.sort(key=lambda r: (-r[0], r[2]))
            items = [self._item(s, p, pg, score) for score, s, p, pg in ranked]
        else:
            found.sort(key=lambda r: (r[0].key, r[1]))
            items = [self._item(s, p, pg) for s, p, pg in found]
        return items[op.offset : op.offset + op.limit]

    def _scores(self, query: str, scopes: set[Scope]) -> dict[str, float]:
        """The best recall score of each page recalled for ``query`` in ``scopes``."""
        best: dict[str, float] = {}
        for scope in scopes:
            for unit in self.memory.recall(query, scope, RECALL_BUDGET).items:
                if unit.kind == "page":
                    best[unit.id] = max(best.get(unit.id, 0.0), unit.score)
        return best

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces = {self._namespace(scope, path)[0] for scope, path, _page in self._items()}
        if op.max_depth is not None:
            spaces = {ns[: op.max_depth] for ns in spaces}
        conditions = op.match_conditions or ()
        kept = sorted(ns for ns in spaces if all(_matches(ns, c) for c in conditions))
        return kept[op.offset : op.offset + op.limit]

    def _one(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list(op)
        raise ValueError(f"unknown store operation {type(op).__name__}")

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order; each put or delete is its own revision cycle."""
        with self._lock:
            return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))
