"""A mem0-compatible client: switching from mem0 is a change of import.

:class:`Memory` and :class:`AsyncMemory` take mem0's calls (``add``, ``search``, ``get``,
``get_all``, ``update``, ``delete``, ``delete_all``, ``history``, ``reset``) with mem0's
arguments (``user_id``, ``agent_id``, ``run_id``, ``metadata``, ``infer``, ``filters``,
``threshold``, ``limit`` / ``top_k``) and return mem0's shapes: ``{"results": [dict, …]}``,
``get`` of a missing id ``None``, scores in [0, 1], ``{"message": …}`` for the writes.

Where Reverie's meaning differs, it says so (docs/api.md, "mem0"):

* ``add(infer=True)`` stores the messages as episodes, evidence a dream cycle later distils into
  cited pages; until then search answers from the episodes themselves. ``add(infer=False)``
  stores each message's text as it is, as a note page (pinned, cited by the edit that wrote it).
* ``update`` is a person's pinned revision of a page: later dreams revise around it, and undo
  takes it back. An episode is raw evidence and is never edited: update the page it became.
* ``delete``, ``delete_all`` and ``reset`` erase (``forget``, applied): every derived byte goes,
  and a receipt with tombstones stays. They are not undoable, as in mem0.
* The scope is ``tenant/agent_id/user_id``; the tenant and the default agent come from the
  brain's identity (:class:`~reverie.config.IdentityConfig`), and ``run_id`` is an episode's
  session. A call naming a brain that holds nothing while another tenant holds that agent and
  user is an error that says so, never a silent empty answer.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from reverie.api import verbs
from reverie.api.items import MemoryEvent, MemoryItem
from reverie.compat.filters import matches
from reverie.config import Config, resolve_db
from reverie.embed import EmbedderLike
from reverie.engine import Reverie
from reverie.errors import InvalidInput, NotFound
from reverie.memory.notes import NoteChange, commit_notes, notes
from reverie.models import Scope

__all__ = ["AsyncMemory", "Memory"]

_NEED_ID = "At least one of 'user_id', 'agent_id', or 'run_id' must be provided."
_WIDE = 1000  # how many memories a search reads before filters and the threshold cut


def _record(item: MemoryItem) -> dict[str, Any]:
    """A memory as mem0 returns it, with Reverie's kind and citations beside."""
    return {
        "id": item.id,
        "memory": item.memory,
        "hash": hashlib.md5(item.memory.encode(), usedforsecurity=False).hexdigest(),
        "metadata": dict(item.metadata),
        "score": item.score,
        "created_at": item.created_at.isoformat(),
        "updated_at": item.updated_at.isoformat() if item.updated_at else None,
        "user_id": item.user_id,
        "agent_id": item.agent_id,
        "run_id": item.run_id,
        "kind": item.kind,
        "citations": list(item.citations),
    }


def _event(memory_id: str, n: int, event: MemoryEvent) -> dict[str, Any]:
    return {
        "id": f"{memory_id}:{n}",
        "memory_id": memory_id,
        "old_memory": event.old_memory,
        "new_memory": event.new_memory,
        "event": event.event,
        "created_at": event.created_at.isoformat(),
        "updated_at": None,
        "is_deleted": event.event == "RETIRE",
        "actor_id": event.author,
        "role": None,
    }


def _texts(messages: str | Sequence[Mapping[str, Any]]) -> list[str]:
    if isinstance(messages, str):
        return [messages]
    said = [m.get("content") for m in messages if m.get("role") != "system"]
    return [t for t in said if isinstance(t, str) and t.strip()]


class Memory:
    """mem0's ``Memory`` over a Reverie brain (a path, a URL, or an open :class:`Reverie`;
    default ``REVERIE_DB``, then the per-user brain)."""

    def __init__(
        self,
        brain: Reverie | str | Path | None = None,
        *,
        config: Config | None = None,
        embedder: EmbedderLike = "auto",
    ) -> None:
        if isinstance(brain, Reverie):
            self.rv, self._owned = brain, False
        else:
            target = str(brain) if brain is not None else resolve_db(None)
            self.rv = Reverie.open(target, config=config, embedder=embedder)
            self._owned = True

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """``{"db": PATH}`` (or mem0's ``history_db_path``); mem0's provider sections, which name
        its vector stores and models, have no meaning here and are ignored."""
        db = config_dict.get("db") or config_dict.get("history_db_path")
        return cls(str(db) if db else None)

    def close(self) -> None:
        if self._owned:
            self.rv.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- scopes -----------------------------------------------------------------------------

    def _scope(self, user_id: str | None, agent_id: str | None, run_id: str | None) -> Scope:
        if user_id is None and agent_id is None and run_id is None:
            raise InvalidInput("user_id", _NEED_ID)
        return verbs.scope_for(self.rv.config.identity, user_id=user_id, agent_id=agent_id)

    def _known(self, scope: Scope) -> Scope:
        """``scope`` when it holds memories or no other tenant has it; else a clear error."""
        scopes = self.rv.scopes()
        if scope in scopes:
            return scope
        elsewhere = sorted(
            s.tenant for s in scopes if (s.agent, s.user) == (scope.agent, scope.user)
        )
        if elsewhere:
            raise InvalidInput(
                "tenant",
                f"no memories in {scope}, but tenant(s) {', '.join(elsewhere)} hold"
                f" {scope.agent}/{scope.user or ''}: open the brain with that tenant"
                " (IdentityConfig(tenant=…))",
            )
        return scope

    # -- mem0's calls ---------------------------------------------------------------------

    def add(  # noqa: PLR0913 (mem0's signature)
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """Store ``messages``: as episodes to dream from, or with ``infer=False`` as they are."""
        del memory_type, prompt  # mem0's extraction knobs; the dream cycle distils instead
        scope = self._scope(user_id, agent_id, run_id)
        if not infer:
            return {"results": self._add_verbatim(_texts(messages), scope, self.rv.now(now))}
        meta = dict(metadata or {})
        data: Any = messages if isinstance(messages, str) else list(messages)
        stored = verbs.add(self.rv, data, scope, run_id=run_id, metadata=meta, now=now)
        return {"results": [{"id": m.id, "memory": m.memory, "event": "ADD"} for m in stored]}

    def _add_verbatim(self, texts: list[str], scope: Scope, now: datetime) -> list[dict[str, Any]]:
        paths = {f"mem0/{hashlib.sha256(t.encode()).hexdigest()[:16]}": t for t in texts}
        have = notes(self.rv.store, scope)
        changes = [NoteChange(p, t, have.get(p)) for p, t in paths.items() if p not in have]
        if changes:
            summary = "mem0 add(infer=False)"
            commit_notes(self.rv.store, scope, changes, now=now, summary=summary, author="api")
        have = notes(self.rv.store, scope)
        return [{"id": have[p].id, "memory": t, "event": "ADD"} for p, t in paths.items()]

    def search(  # noqa: PLR0913 (mem0's signature)
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int = 100,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        threshold: float | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """The memories for ``query``, best first, each with a ``score`` in [0, 1]."""
        scope = self._known(self._scope(user_id, agent_id, run_id))
        found = verbs.search(self.rv, query, scope, limit=_WIDE, now=now)
        records = [_record(m) for m in found if run_id is None or m.run_id == run_id]
        if threshold is not None:
            records = [r for r in records if (r["score"] or 0.0) >= threshold]
        kept = [r for r in records if matches(r, filters)]
        return {"results": kept[: top_k or limit]}

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """The memory ``memory_id``, or None when there is none."""
        try:
            return _record(verbs.get(self.rv, memory_id, self.rv.config.identity.tenant))
        except NotFound:
            return None

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
    ) -> dict[str, Any]:
        """Every memory of the scope: its active pages, then its episodes not yet distilled."""
        scope = self._known(self._scope(user_id, agent_id, run_id))
        items = verbs.get_all(self.rv, scope, limit=max(limit, _WIDE))
        records = [_record(m) for m in items if run_id is None or m.run_id == run_id]
        return {"results": [r for r in records if matches(r, filters)][:limit]}

    def update(self, memory_id: str, data: str, *, now: datetime | None = None) -> dict[str, str]:
        """Replace a page's text: a person's pinned revision (undoable), one claim per line."""
        page = self.rv.page(memory_id) if memory_id.startswith("pg_") else None
        if page is None:
            raise InvalidInput(
                "memory_id",
                f"{memory_id} is an episode, raw evidence that is never edited: update the page"
                " it became, or add the corrected text",
            )
        lines = [(line.strip(), ()) for line in data.splitlines() if line.strip()]
        if not lines:
            raise InvalidInput("data", "is empty: delete the memory instead")
        self.rv.edit_page(memory_id, revision=page.revision.number, claims=lines, now=now)
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str, *, now: datetime | None = None) -> dict[str, str]:
        """Erase the memory (applied: a receipt and tombstones stay)."""
        verbs.delete(self.rv, memory_id, self.rv.now(now), self.rv.config.identity.tenant)
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        now: datetime | None = None,
    ) -> dict[str, str]:
        """Erase every memory of the scope, or with ``run_id`` only that run's episodes."""
        scope = self._scope(user_id, agent_id, run_id)
        when = self.rv.now(now)
        if run_id is None:
            self.rv.forget(scope=scope, apply=True, reason="mem0 delete_all", now=when)
        else:
            items = verbs.get_all(self.rv, scope, limit=100_000)
            ids = [m.id for m in items if m.kind == "episode" and m.run_id == run_id]
            if ids:
                reason = f"mem0 delete_all(run_id={run_id!r})"
                self.rv.forget(
                    episodes=ids, tenant=scope.tenant, apply=True, reason=reason, now=when
                )
        return {"message": "Memories deleted successfully!"}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """How the memory changed, oldest first; an unknown id has no history."""
        try:
            events = verbs.history(self.rv, memory_id, self.rv.config.identity.tenant)
        except NotFound:
            return []
        return [_event(memory_id, n, e) for n, e in enumerate(events, 1)]

    def reset(self, *, now: datetime | None = None) -> None:
        """Erase every memory of every tenant in this brain (applied, receipted)."""
        for tenant in sorted({s.tenant for s in self.rv.scopes()}):
            self.rv.forget(tenant=tenant, apply=True, reason="mem0 reset", now=self.rv.now(now))


class AsyncMemory:
    """mem0's ``AsyncMemory``: :class:`Memory`'s calls awaited, each on a worker thread."""

    def __init__(self, brain: Reverie | str | Path | None = None, **options: Any) -> None:
        self.sync = Memory(brain, **options)

    async def _run(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self.sync, name), *args, **kwargs)

    async def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = await self._run("add", messages, **kwargs)
        return result

    async def search(self, query: str, **kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = await self._run("search", query, **kwargs)
        return result

    async def get(self, memory_id: str) -> dict[str, Any] | None:
        result: dict[str, Any] | None = await self._run("get", memory_id)
        return result

    async def get_all(self, **kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = await self._run("get_all", **kwargs)
        return result

    async def update(self, memory_id: str, data: str) -> dict[str, str]:
        result: dict[str, str] = await self._run("update", memory_id, data)
        return result

    async def delete(self, memory_id: str) -> dict[str, str]:
        result: dict[str, str] = await self._run("delete", memory_id)
        return result

    async def delete_all(self, **kwargs: Any) -> dict[str, str]:
        result: dict[str, str] = await self._run("delete_all", **kwargs)
        return result

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = await self._run("history", memory_id)
        return result

    async def reset(self) -> None:
        await self._run("reset")

    def close(self) -> None:
        self.sync.close()
