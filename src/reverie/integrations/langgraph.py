"""LangGraph's long-term memory store (``BaseStore``) kept in Reverie scopes.

``ReverieStore(rv, tenant, agent)`` is a ``langgraph.store.base.BaseStore``: pass it as
``graph.compile(store=...)`` and every node's ``store.put/get/search/delete`` lands in Reverie.

Namespaces map to scopes, so one graph serves every user: every item lives in the scope
``tenant/agent``, or, with ``user_label=i``, in ``tenant/agent/<namespace[i]>`` (one scope per
user, so recall for one user never sees another's items: invariant 7). A label that is no scope
name (a space, an accent, a leading ``_``) is escaped, ``lg:`` then ``:XX`` per byte, and read
back as it was. The other labels, then the key, make the item's path inside its scope; each
item is a note (:mod:`reverie.memory.notes`) with one line per top-level field, each line the
JSON object ``{"field": value}``, so every claim is JSON and reads as one fact. A ``put`` is a
revision authored ``langgraph`` (``undo`` and ``why`` work on it), a ``delete`` retires the
page, and the items are recalled, mirrored and dreamed over like any other page.

``search(query=...)`` ranks semantically when the store has LangGraph's ``index`` config
(``{"embed": ..., "dims": ..., "fields": [...]}``): each indexed field's text is embedded at
``put`` (kept in the brain's vector cache, so nothing is embedded twice) and an item scores its
best field's cosine with the query, floored at 0. Without it, Reverie's recall over the matching
scopes ranks (its scores scaled as :meth:`reverie.Reverie.search` scales them). Either way a
``score`` lies in [0, 1], and a field ``put`` with ``index=False`` (or left out of ``index=[...]``
or the config's ``fields``) is kept as evidence: read back, never recalled or embedded. ``filter``
follows LangGraph's own store: equality on value fields, nested objects, and ``$eq $ne $gt $gte
$lt $lte``. A TTL (``ttl=`` minutes, or ``ttl={"default_ttl": ...}``) is the page's validity:
an expired item is never returned and stays in the page's history; a read with ``refresh_ttl``
renews it once a tenth of its TTL has passed. ``abatch`` runs ``batch`` on a worker thread, one
operation at a time (a lock), so the event loop never waits on the database. Needs the
``langgraph`` extra.
"""

from __future__ import annotations

import asyncio
import json
import operator
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, unquote

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from reverie.api.items import SCORE_CEILING
from reverie.engine import Reverie
from reverie.errors import InvalidInput, InvalidScope
from reverie.integrations.langgraph_index import FieldIndex
from reverie.memory.notes import NoteChange, commit_notes, note_text, notes
from reverie.models import ClaimRole, Page, Scope
from reverie.models.scope import NAME
from reverie.redaction import redact_value

__all__ = ["ReverieStore", "label_of", "user_name"]

RECALL_BUDGET = 100_000
"""Tokens recall may pack for one search: enough that the limit, not the budget, cuts."""
ESCAPED = "lg:"
"""The prefix of a user name that holds an escaped namespace label."""
REFRESH_SHARE = 0.1
"""A read renews an item's TTL once this share of it has passed (a write per read otherwise)."""
_BYTE = re.compile(r":([0-9A-F]{2})")


def user_name(label: str) -> str:
    """A namespace label as a scope's user name: itself when it is a scope name, else
    ``lg:`` and the label with each byte a name cannot hold written ``:XX``."""
    if NAME.match(label) and not label.startswith(ESCAPED):
        return label
    kept = "".join(
        c
        if c.isascii() and (c.isalnum() or c in "_.@-")
        else "".join(f":{b:02X}" for b in c.encode())
        for c in label
    )
    return ESCAPED + kept


def label_of(user: str) -> str:
    """The namespace label a user name holds (the inverse of :func:`user_name`)."""
    if not user.startswith(ESCAPED):
        return user
    text = user[len(ESCAPED) :]
    parts = _BYTE.split(text)  # text, byte, text, byte, ...
    raw = b"".join(
        bytes([int(part, 16)]) if n % 2 else part.encode() for n, part in enumerate(parts)
    )
    return raw.decode("utf-8", errors="replace")


def _path(labels: Iterable[str]) -> str:
    return "/" + "/".join(quote(label, safe="") for label in labels)


def _labels(path: str) -> tuple[str, ...]:
    return tuple(unquote(part) for part in path[1:].split("/"))


def _lines(value: dict[str, Any]) -> list[str]:
    """One JSON object per top-level field, so each claim is JSON and one fact."""
    if not value:
        return ["{}"]
    return [json.dumps({k: v}, ensure_ascii=False) for k, v in value.items()]


def _value(page: Page) -> dict[str, Any]:
    """The item's value: its lines merged (a note written as one JSON document reads too)."""
    text = note_text(page)
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        return whole
    value: dict[str, Any] = {}
    for line in text.split("\n"):
        try:
            part = json.loads(line)
        except ValueError:
            continue  # not one of this store's lines
        if isinstance(part, dict):
            value.update(part)
    return value


def _recalled(page: Page) -> list[str]:
    """The item's lines that recall and the index see (``index=False`` ones are evidence)."""
    return [c.text for c in page.revision.claims if c.role is not ClaimRole.EVIDENCE]


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


def _live(page: Page, now: datetime) -> bool:
    until = page.revision.valid_until
    return until is None or until > now


class ReverieStore(BaseStore):
    """A LangGraph store over the scopes of one Reverie agent."""

    supports_ttl = True

    def __init__(  # noqa: PLR0913 (keyword-only settings, as LangGraph's stores take them)
        self,
        memory: Reverie,
        tenant: str,
        agent: str,
        *,
        user_label: int | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        author: str = "langgraph",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.memory = memory
        self.base = Scope.parse({"tenant": tenant, "agent": agent})
        self.user_label = user_label
        self.index_config = index
        self.ttl_config = ttl
        self.author = author
        self.clock = clock or memory.clock  # the engine's, unless a test gives its own
        self._index = FieldIndex(memory.store, index) if index else None
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
                scope = Scope.parse(
                    {**self.base.model_dump(exclude_none=True), "user": user_name(user)}
                )
            except InvalidScope as exc:
                raise InvalidNamespaceError(f"label {user!r} cannot name a user: {exc}") from None
        return scope, _path([*labels, key] if key is not None else labels)

    def _namespace(self, scope: Scope, path: str) -> tuple[tuple[str, ...], str]:
        labels = list(_labels(path))
        key = labels.pop()
        if self.user_label is not None and scope.user is not None:
            labels.insert(self.user_label, label_of(scope.user))
        return tuple(labels), key

    def _scopes(self) -> list[Scope]:
        if self.user_label is None:
            return [self.base]
        return [
            s
            for s in self.memory.scopes()
            if (s.tenant, s.agent) == (self.base.tenant, self.base.agent) and s.user
        ]

    def _notes(self, scope: Scope) -> dict[str, Page]:
        now = self.clock()
        return {p: page for p, page in notes(self.memory.store, scope).items() if _live(page, now)}

    def _items(self) -> Iterator[tuple[Scope, str, Page]]:
        for scope in self._scopes():
            for path, page in self._notes(scope).items():
                yield scope, path, page

    def _item(self, scope: Scope, path: str, page: Page, score: float | None = None) -> SearchItem:
        namespace, key = self._namespace(scope, path)
        return SearchItem(
            namespace, key, _value(page), page.created_at, page.updated_at, score=score
        )

    # -- operations ----------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        scope, path = self._place(op.namespace, op.key)
        page = self._notes(scope).get(path)
        if page is None:
            return None
        if op.refresh_ttl:
            self._refresh(scope, path, page)
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
            value = redact_value(dict(op.value))
            lines = _lines(value)
        except (TypeError, ValueError) as exc:
            raise InvalidInput("value", f"must be JSON-serialisable: {exc}") from None
        shown = FieldIndex.fields(value, op.index, self.index_config)
        hidden = frozenset(line for k, line in zip(value, lines, strict=False) if k not in shown)
        until = self.clock() + timedelta(minutes=op.ttl) if op.ttl else None
        text = "\n".join(lines)
        change = NoteChange(path, text, page, valid_until=until, unrecalled=hidden)
        shown_text = "\n".join(line for line in lines if line not in hidden)
        self._commit(scope, change, f"put {path}\n{shown_text}".strip())
        if self._index is not None:
            self._index.embed_lines([line for line in lines if line not in hidden])

    def _refresh(self, scope: Scope, path: str, page: Page) -> None:
        """Renew a TTL item's validity from now, once a tenth of its TTL has passed."""
        rev, now = page.revision, self.clock()
        if rev.valid_until is None or rev.valid_from is None:
            return
        ttl = rev.valid_until - rev.valid_from
        if now - rev.valid_from < ttl * REFRESH_SHARE:
            return
        hidden = frozenset(c.text for c in rev.claims if c.role is ClaimRole.EVIDENCE)
        change = NoteChange(path, note_text(page), page, valid_until=now + ttl, unrecalled=hidden)
        self._commit(scope, change, f"refresh {path}")

    def _commit(self, scope: Scope, change: NoteChange, summary: str) -> None:
        """Commit one note; its text is redacted already, inside the parsed value."""
        commit_notes(
            self.memory.store,
            scope,
            [change],
            now=self.clock(),
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
        found.sort(key=lambda r: (r[0].key, r[1]))
        if not op.query:
            ranked: list[tuple[float | None, Scope, str, Page]] = [(None, *r) for r in found]
        elif self._index is not None:
            ranked = self._index.rank(op.query, found, _recalled)
        else:
            ranked = self._recall_rank(op.query, found)
        kept = ranked[op.offset : op.offset + op.limit]
        if op.refresh_ttl:
            for _score, scope, path, page in kept:
                self._refresh(scope, path, page)
        return [self._item(s, p, pg, score) for score, s, p, pg in kept]

    def _recall_rank(
        self, query: str, found: list[tuple[Scope, str, Page]]
    ) -> list[tuple[float | None, Scope, str, Page]]:
        """The items recall finds for ``query``, best first, scores scaled into [0, 1]."""
        best: dict[str, float] = {}
        for scope in {scope for scope, _p, _pg in found}:
            for unit in self.memory.recall(query, scope, RECALL_BUDGET).items:
                if unit.kind == "page":
                    best[unit.id] = max(best.get(unit.id, 0.0), unit.score)
        ranked = [
            (min(max(best[pg.id] / SCORE_CEILING, 0.0), 1.0), s, p, pg)
            for s, p, pg in found
            if pg.id in best
        ]
        ranked.sort(key=lambda r: -(r[0] or 0.0))
        return list(ranked)

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
