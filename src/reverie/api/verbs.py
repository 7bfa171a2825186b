"""The conventional memory verbs, mapped onto scopes, episodes and pages (table: docs/api.md).

Each verb is a few calls of the engine's native ones: ``add`` is ``ingest`` (messages through
the ``openai-chat`` adapter, one episode per user turn), ``search`` is ``recall`` with its units
grouped by page or episode, ``get`` / ``get_all`` / ``history`` read pages, revisions and
episodes, ``delete`` is erasure (``forget``) of one page or episode, and ``retire`` takes a page
out of recall while keeping it, undoably.

``user_id`` and ``agent_id`` name the scope ``tenant/agent_id/user_id`` (the tenant and the
default agent come from :class:`~reverie.config.IdentityConfig`); ``run_id`` is an episode's
``session_id``. ``add`` stores evidence: a page, the durable memory, appears once a dream
cycle has distilled it, and until then ``search`` and ``get_all`` return the episode itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from reverie.adapters import parse
from reverie.api.items import (
    Deletion,
    MemoryEvent,
    MemoryItem,
    Retirement,
    episode_memory,
    history_of_episode,
    history_of_page,
    page_memory,
    search_memories,
)
from reverie.config import IdentityConfig
from reverie.errors import InvalidInput, NotFound
from reverie.memory.revisions import plan_retire
from reverie.models import Episode, Page, Recall, Revision, Scope, ScopeLike

if TYPE_CHECKING:
    from reverie.intake import IngestResult
    from reverie.redaction import Redactor
    from reverie.store.base import BrainStore
    from reverie.store.records import Receipt

__all__ = [
    "SEARCH_BUDGET",
    "AddInput",
    "Engine",
    "Filters",
    "add",
    "delete",
    "get",
    "get_all",
    "history",
    "matches",
    "retire",
    "scope_for",
    "search",
]


class Engine(Protocol):
    """The native verbs the conventional ones are made of: :class:`reverie.Reverie`'s own."""

    store: BrainStore
    redactor: Redactor

    def ingest(self, items: Iterable[Episode], *, now: datetime | None = None) -> IngestResult: ...
    def recall(
        self, query: str, scope: ScopeLike, budget_tokens: int | None, *, now: datetime | None
    ) -> Recall: ...
    def episode(self, episode_id: str, *, tenant: str | None = None) -> Episode: ...
    def episodes(self, ids: Iterable[str], *, tenant: str | None = None) -> list[Episode]: ...
    def page(self, page_id: str) -> Page: ...
    def pages(self, scope: ScopeLike, status: str | None = "active") -> list[Page]: ...
    def revisions(self, page_id: str) -> list[Revision]: ...
    def forget(
        self, *, episodes: Iterable[str] = (), page: str | None = None,
        tenant: str | None = None, apply: bool = False, reason: str = "",
        now: datetime | None = None,
    ) -> Receipt: ...  # fmt: skip


AddInput = str | Sequence[Mapping[str, Any]] | Episode | Mapping[str, Any]
"""What ``add`` takes: a text, chat messages (``[{"role": ..., "content": ...}]``), or one
episode (an :class:`~reverie.models.Episode` or its mapping)."""
Filters = Mapping[str, Any]
"""``{field or metadata key: value or list of values}``; an item matches when every key holds
one of the values (:func:`matches`)."""

SEARCH_BUDGET = 20_000
"""Tokens recall may pack for a search: enough that ``limit`` cuts, not the budget."""


def scope_for(
    identity: IdentityConfig,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    scope: ScopeLike | None = None,
) -> Scope:
    """The scope a conventional call names: ``scope`` itself, or ``tenant/agent_id/user_id``."""
    if scope is None:
        return Scope.parse(
            {"tenant": identity.tenant, "agent": agent_id or identity.agent, "user": user_id}
        )
    target = Scope.parse(scope)
    for name, given, have in (
        ("user_id", user_id, target.user),
        ("agent_id", agent_id, target.agent),
    ):
        if given is not None and given != have:
            raise InvalidInput(name, f"{given!r} contradicts scope {target}; give one or the other")
    return target


def _messages(messages: Sequence[Mapping[str, Any]], scope: Scope) -> list[dict[str, Any]]:
    """Chat messages as episodes of ``scope``, through the ``openai-chat`` adapter; any
    unusable message stops the call before anything is stored."""
    try:
        line = json.dumps({"messages": list(messages)}, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput("messages", f"must be JSON values: {exc}") from None
    parsed = parse("openai-chat", [(1, line)], scope=scope)
    if parsed.failures:
        _, field, reason = parsed.failures[0]
        raise InvalidInput(field, reason)
    if not parsed.items:
        raise InvalidInput("messages", "no user message: nothing to remember")
    return parsed.items


def _items(data: AddInput, scope: Scope) -> list[dict[str, Any]]:
    if isinstance(data, str):
        return _messages([{"role": "user", "content": data}], scope)
    if isinstance(data, Episode):
        return [data.model_dump(exclude={"seq", "consolidated_in"})]
    if isinstance(data, Mapping):
        return [dict(data)]
    if isinstance(data, list | tuple):
        return _messages(data, scope)
    raise InvalidInput(
        "data", f"expected a text, messages or an episode, got {type(data).__name__}"
    )


def _fitted(
    item: dict[str, Any],
    scope: Scope,
    run_id: str | None,
    metadata: Mapping[str, Any] | None,
    now: datetime | None,
) -> dict[str, Any]:
    """``item`` in ``scope``, of run ``run_id``, with ``metadata`` added and dated ``now``
    unless it is dated."""
    given = item.get("scope")
    if given is not None and Scope.parse(given) != scope:
        raise InvalidInput("scope", f"the episode names {Scope.parse(given)}, the call {scope}")
    out = {**item, "scope": scope}
    if now is not None and out.get("created_at") is None:
        out["created_at"] = now
    if run_id is not None:
        if out.get("session_id") not in (None, run_id):
            raise InvalidInput("run_id", f"{run_id!r} contradicts session_id {out['session_id']!r}")
        out["session_id"] = run_id
    if metadata:
        out["metadata"] = {**(out.get("metadata") or {}), **metadata}
    return out


def add(
    rv: Engine,
    data: AddInput,
    scope: Scope,
    *,
    run_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> list[MemoryItem]:
    """Store ``data`` as episodes of ``scope`` (every item checked before any is stored).

    A text or messages' episode ids derive from their content (the chat adapter's), not from
    the time of the call: the same messages added again store nothing new.
    """
    episodes = [
        Episode.parse(_fitted(i, scope, run_id, metadata, now)) for i in _items(data, scope)
    ]
    ids = [e.id for e in episodes]
    tenant = scope.tenant  # ids are the tenant's own
    an_episode = isinstance(data, Episode | Mapping)
    known = set() if an_episode else {e.id for e in rv.episodes(ids, tenant=tenant)}
    result = rv.ingest([e for e in episodes if e.id not in known], now=now)
    if result.errors:
        bad = result.errors[0]
        raise InvalidInput(bad.field, f"{bad.reason} (item {bad.index}; the others were stored)")
    stored = {e.id: e for e in rv.episodes(ids, tenant=tenant)}
    return [episode_memory(stored[i]) for i in ids if i in stored]


def matches(item: MemoryItem, filters: Filters) -> bool:
    """Every key of ``filters`` — a field of the item, else a key of its metadata — holds the
    value given, or one of the values of a list. A key the item lacks does not match."""
    for key, wanted in filters.items():
        if key in MemoryItem.model_fields:
            have = getattr(item, key)
        elif key in item.metadata:
            have = item.metadata[key]
        else:
            return False
        if have not in (wanted if isinstance(wanted, list | tuple | set) else [wanted]):
            return False
    return True


def _checked(filters: Filters | None) -> Filters:
    if filters is None:
        return {}
    if not isinstance(filters, Mapping):
        raise InvalidInput("filters", "expected a mapping of field or metadata key to value(s)")
    return filters


def search(
    rv: Engine,
    query: str,
    scope: Scope,
    *,
    limit: int = 10,
    filters: Filters | None = None,
    now: datetime | None = None,
) -> list[MemoryItem]:
    """The memories of ``scope`` recall finds for ``query``, best first, at most ``limit``."""
    if limit < 1:
        raise InvalidInput("limit", "must be 1 or more")
    wanted = _checked(filters)
    found = rv.recall(query, scope, SEARCH_BUDGET, now=now)
    ids = {u.id for u in found.items}
    pages = rv.store.pages_by_id(scope, ids)
    episodes = {e.id: e for e in rv.episodes(ids - set(pages), tenant=scope.tenant)}
    items = [m for m in search_memories(found.items, pages, episodes) if matches(m, wanted)]
    return items[:limit]


def _page_or_none(rv: Engine, memory_id: str) -> Page | None:
    try:
        return rv.page(memory_id)
    except NotFound:
        return None


def _episode(rv: Engine, memory_id: str, tenant: str | None) -> Episode:
    try:
        return rv.episode(memory_id, tenant=tenant)
    except NotFound:
        raise NotFound(f"no memory {memory_id}: neither a page nor an episode") from None


def get(rv: Engine, memory_id: str, tenant: str | None = None) -> MemoryItem:
    """The page ``memory_id`` as it stands (any status), or the episode of that id."""
    page = _page_or_none(rv, memory_id)
    if page is not None:
        return page_memory(page)
    return episode_memory(_episode(rv, memory_id, tenant))


def get_all(
    rv: Engine, scope: Scope, *, limit: int = 100, filters: Filters | None = None
) -> list[MemoryItem]:
    """The pages of ``scope`` (active ones unless ``filters`` names a status), then the episodes
    no cycle has consolidated yet, oldest first; at most ``limit``."""
    if limit < 1:
        raise InvalidInput("limit", "must be 1 or more")
    wanted = _checked(filters)
    pages = rv.pages(scope, None if "status" in wanted else "active")
    items = [m for m in map(page_memory, pages) if matches(m, wanted)]
    if len(items) < limit:
        pending = rv.store.scan(scope, 0, limit)
        shown = [rv.redactor.episode(e) for e in pending]
        items += [m for m in map(episode_memory, shown) if matches(m, wanted)]
    return items[:limit]


def history(rv: Engine, memory_id: str, tenant: str | None = None) -> list[MemoryEvent]:
    """Every revision of the page ``memory_id`` as an event, oldest first; an episode's one."""
    if _page_or_none(rv, memory_id) is not None:
        return history_of_page(rv.revisions(memory_id))
    return history_of_episode(_episode(rv, memory_id, tenant))


def delete(rv: Engine, memory_id: str, now: datetime, tenant: str | None = None) -> Deletion:
    """Erase the page or the episode ``memory_id`` (``forget``, applied: docs/privacy.md).

    The caller's explicit call is the request, so it is applied at once, as ``delete`` means in
    every memory library: the memory is gone, not hidden. A page loses every revision (its
    episodes stay, as evidence); an episode goes with every claim that stood on it alone, and
    the pages citing it are re-derived without it. The receipt (``erasure(erasure_id)``) and its
    tombstones are what is left. To take a page out of recall and keep it, use :func:`retire`.
    """
    page = _page_or_none(rv, memory_id)
    if page is None:
        episode = _episode(rv, memory_id, tenant)  # NotFound for an unknown id
        target: dict[str, Any] = {"episodes": [memory_id], "tenant": episode.scope.tenant}
    else:
        target = {"page": memory_id}
    receipt = rv.forget(**target, apply=True, reason="deleted through the API", now=now)
    details = receipt.details
    return Deletion(
        id=memory_id,
        kind="page" if page is not None else "episode",
        erasure_id=receipt.id,
        episodes=list(details.get("episodes") or []),
        pages_deleted=list(details.get("pages_deleted") or []),
        pages_rederived=list(details.get("pages_rederived") or []),
    )


def retire(rv: Engine, memory_id: str, now: datetime, tenant: str | None = None) -> Retirement:
    """Retire the page ``memory_id``: a new revision with status ``retired``, recorded as a
    one-page cycle, so the page leaves recall and ``get_all`` but stays readable in ``why`` and
    ``history``, and ``undo(cycle_id)`` brings it back. Episodes are evidence and are never
    retired: erase one with :func:`delete`."""
    page = _page_or_none(rv, memory_id)
    if page is None:
        _episode(rv, memory_id, tenant)  # NotFound for an unknown id
        raise InvalidInput("id", f"{memory_id} is an episode; only pages retire (delete erases)")
    changes = plan_retire(rv.store, memory_id, now, author="api", reason="retired through the API")
    rv.store.commit(changes)
    retired = rv.page(memory_id)
    return Retirement(
        id=memory_id,
        status=str(retired.status),
        revision=retired.revision.number,
        cycle_id=changes.cycle.id if changes.cycle else "",
    )
