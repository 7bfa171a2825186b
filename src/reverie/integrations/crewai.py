"""A CrewAI memory backed by one Reverie scope: ``Crew(memory=ReverieMemory(rv, "acme/crew"))``.

CrewAI 1.x has one memory class, ``crewai.Memory``, that crews, agents, flows and the memory
tools all call through text verbs: ``extract_memories`` and ``remember_many`` after a task,
``recall(task description)`` before one, ``remember`` / ``recall`` in its tools. Its storage
protocol (``StorageBackend``) sits below that and is a vector store: ``search`` receives CrewAI's
query embedding, never the question. So the integration is a ``Memory`` whose text verbs are
Reverie's, not a storage backend:

* what CrewAI saves after a task (``Task: … Agent: … Expected result: … Result: …``) is one
  episode: the task its situation, the result its action, the agent's role its category, the
  outcome ``failure`` when the result reads as an error. There is no model call at save time:
  ``extract_memories`` hands the whole record on, and the dream cycle distils it later, with
  citations. Text an agent or a flow remembers on its own is one episode, as ``add(text)``;
* ``recall`` is Reverie's ``search``: pages (episodes before a cycle has distilled any) as
  ``MemoryMatch`` es, with recall's score in [0, 1] and the page's kind, title and citations;
* ``forget(record_ids=[…])`` erases those memories (``delete``: docs/api.md).

CrewAI's own user field is its scope path: an application gives each user a view of one
memory, ``memory.scope(f"/user/{user_id}")`` (a ``crewai.MemoryScope``), and passes it as the
crew's or agent's memory. A path's ``/user/<id>`` segment (``user_segment``) names the Reverie
scope's user, over ``scope`` (:mod:`reverie.integrations.scoping`), so one ``ReverieMemory`` and
one agent serve every user and recall for one never sees another's memories (invariant 7); a
path without that segment is ``scope`` itself. The rest of a path, categories and sources are
kept on each episode as metadata; a Reverie scope is the boundary, so recall searches all of it.
What has no honest meaning here is refused with a :class:`~reverie.errors.InvalidInput` that
says what to do: private records (give that source its own scope), ``update`` (episodes are
immutable), ``reset`` (erasing a scope is ``reverie forget --scope``, a dry run first). A recall
that fails returns no memories and logs a warning, so the crew's task goes on. Needs the
``crewai`` extra, which cannot share a venv with the ``dev`` extra (docs/integrations.md).
"""

from __future__ import annotations

import itertools
import logging
import re
from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from crewai.memory.types import MemoryMatch, MemoryRecord, ScopeInfo
from crewai.memory.unified_memory import Memory
from pydantic import Field, PrivateAttr

from reverie.adapters.base import looks_failed
from reverie.api.items import MemoryItem
from reverie.errors import InvalidInput
from reverie.integrations.scoping import call_scope
from reverie.models import Episode, Scope, ScopeLike

if TYPE_CHECKING:
    from reverie.engine import Reverie

__all__ = ["ReverieMemory", "task_episode"]

log = logging.getLogger("reverie.integrations.crewai")
SOURCE = "crewai"

# The records CrewAI writes after an agent's work (BaseAgentExecutor._save_to_memory and
# Agent.kickoff): fields on lines of their own, the last one running to the end.
_TASK = re.compile(
    r"Task: (?P<task>.*?)\nAgent: (?P<role>.*?)\nExpected result: (?P<expected>.*?)"
    r"\nResult: (?P<result>.*)",
    re.DOTALL,
)
_KICKOFF = re.compile(
    r"Input: (?P<task>.*?)\nAgent: (?P<role>.*?)\nResult: (?P<result>.*)", re.DOTALL
)


def task_episode(content: str, role: str | None = None) -> dict[str, Any] | None:
    """The episode for a record CrewAI writes after a task or a kickoff, or ``None`` when
    ``content`` is not one: situation the task, action the result, category the agent."""
    found = _TASK.fullmatch(content) or _KICKOFF.fullmatch(content)
    if found is None:
        return None
    fields = found.groupdict()
    result = fields["result"].strip()
    failed = looks_failed(result)
    episode: dict[str, Any] = {
        "situation": fields["task"].strip(),
        "action": result,
        "outcome": "failure" if failed else "success",
        "category": (fields["role"].strip() or role or "")[:256] or None,
    }
    if failed:
        episode["error"] = result
    if fields.get("expected"):
        episode["metadata"] = {"expected_output": fields["expected"].strip()}
    return episode


def _importance(value: float | None) -> int | None:
    """CrewAI's importance in [0, 1] as Reverie's 1 to 10."""
    return None if value is None else min(10, max(1, round(value * 10)))


def _record(item: MemoryItem, crew_scope: str) -> MemoryRecord:
    meta: dict[str, Any] = {"kind": item.kind, "title": item.title}
    if item.citations:
        meta["citations"] = ", ".join(item.citations)
    return MemoryRecord(
        id=item.id,
        content=item.memory,
        scope=crew_scope,
        categories=[item.kind],
        metadata=meta,
        created_at=item.updated_at or item.created_at,
        last_accessed=item.updated_at or item.created_at,
    )


class ReverieMemory(Memory):
    """CrewAI's ``Memory``, remembering into and recalling from one Reverie scope."""

    reverie_scope: str = Field(description="The Reverie scope: tenant/agent or tenant/agent/user")
    user_segment: str | None = Field(
        default="user", description="The CrewAI path segment whose next label names the user"
    )
    storage: Any = Field(default=None, exclude=True, description="Unused: Reverie is the store")
    _engine: Any = PrivateAttr()

    def __init__(self, reverie: Any, scope: ScopeLike, **fields: Any) -> None:
        super().__init__(reverie_scope=Scope.parse(scope).key, **fields)
        self._engine = reverie

    @property
    def engine(self) -> Reverie:
        """The Reverie engine."""
        engine: Reverie = self._engine
        return engine

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> ReverieMemory:
        """CrewAI copies crews and agents with their memory; a copy shares this one's engine
        (its connections cannot be copied) and settings."""
        kept = set(type(self).model_fields) - {"memory_kind", "reverie_scope", "storage"}
        return type(self)(self.engine, self.reverie_scope, **{n: getattr(self, n) for n in kept})

    def _crew_scope(self, scope: str | None, root_scope: str | None) -> str:
        parts = [p.strip("/") for p in (root_scope or self.root_scope, scope) if p]
        return "/" + "/".join(p for p in parts if p)

    def _scope_for(self, crew_scope: str) -> str:
        """The Reverie scope a CrewAI path names: its ``/user/<id>`` makes the user."""
        labels = [p for p in crew_scope.split("/") if p]
        user = next((b for a, b in itertools.pairwise(labels) if a == self.user_segment), None)
        return call_scope(self.reverie_scope, {"user_id": user}).scope.key

    # -- saving ------------------------------------------------------------------------------

    def extract_memories(self, content: str) -> list[str]:
        """The whole record, unchanged: Reverie distils episodes in its dream cycle, with
        citations, instead of asking a model to split them at save time."""
        return [content] if content.strip() else []

    def remember(  # noqa: PLR0913 (crewai.Memory.remember's signature)
        self,
        content: str,
        scope: str | None = None,
        categories: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        importance: float | None = None,
        source: str | None = None,
        private: bool = False,
        agent_role: str | None = None,
        root_scope: str | None = None,
    ) -> MemoryRecord | None:
        """Store ``content`` as one episode of the Reverie scope; ``None`` when read-only."""
        if self.read_only:
            return None
        if private:
            raise InvalidInput(
                "private",
                "a Reverie scope is the privacy boundary: give this source a ReverieMemory of "
                "its own scope (tenant/agent/user)",
            )
        crew_scope = self._crew_scope(scope, root_scope)
        meta = {"source": SOURCE, "crewai_scope": crew_scope, **(metadata or {})}
        if categories:
            meta["crewai_categories"] = list(categories)
        if source:
            meta["crewai_source"] = source
        where = self._scope_for(crew_scope)
        stored = self._store(where, content, meta, _importance(importance), agent_role)
        return MemoryRecord(
            id=stored.id,
            content=content,
            scope=crew_scope,
            categories=list(categories or []),
            metadata=meta,
            importance=importance if importance is not None else self.default_importance,
            created_at=stored.created_at,
            source=source,
        )

    def _store(
        self,
        where: str,
        content: str,
        meta: dict[str, Any],
        importance: int | None,
        role: str | None,
    ) -> Episode | MemoryItem:
        episode = task_episode(content, role)
        if episode is None:
            [item] = self.engine.add(content, scope=where, metadata=meta)
            return item
        episode["metadata"] = {**meta, **episode.get("metadata", {})}
        if importance is not None:
            episode["importance"] = importance
        return self.engine.remember(episode, scope=where)

    def remember_many(  # noqa: PLR0913 (crewai.Memory.remember_many's signature)
        self,
        contents: list[str],
        scope: str | None = None,
        categories: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        importance: float | None = None,
        source: str | None = None,
        private: bool = False,
        agent_role: str | None = None,
        root_scope: str | None = None,
    ) -> list[MemoryRecord]:
        """Store each of ``contents`` (at once: an append is quick, no model is called)."""
        records = [
            self.remember(
                c, scope, categories, metadata, importance, source, private, agent_role, root_scope
            )
            for c in contents
        ]
        return [r for r in records if r is not None]

    # -- recalling ---------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        scope: str | None = None,
        categories: list[str] | None = None,
        limit: int = 10,
        depth: Literal["shallow", "deep"] = "deep",
        source: str | None = None,
        include_private: bool = False,
    ) -> list[MemoryMatch]:
        """What Reverie's ``search`` finds for ``query``, best first, at most ``limit``; no
        memories (and a logged warning) when it fails."""
        crew_scope = self._crew_scope(scope, None)
        try:
            found = self.engine.search(query, scope=self._scope_for(crew_scope), limit=limit)
        except Exception as exc:
            log.warning("reverie recall skipped: %s: %s", type(exc).__name__, exc)
            return []
        return [
            MemoryMatch(
                record=_record(m, crew_scope), score=m.score or 0.0, match_reasons=["reverie"]
            )
            for m in found
        ]

    def list_records(
        self, scope: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[MemoryRecord]:
        """The scope's pages, then its episodes no cycle has consolidated yet."""
        crew_scope = self._crew_scope(scope, None)
        where = self._scope_for(crew_scope)
        items = self.engine.get_all(scope=where, limit=max(1, limit + offset))
        return [_record(m, crew_scope) for m in items[offset:]]

    def list_categories(self, path: str | None = None) -> dict[str, int]:
        """Memories by kind (lesson, fact, …, episode)."""
        where = self._scope_for(self._crew_scope(path, None))
        items = self.engine.get_all(scope=where, limit=10_000)
        return dict(Counter(m.kind for m in items))

    def info(self, path: str | None = None) -> ScopeInfo:
        crew_scope = self._crew_scope(path, None)
        items = self.engine.get_all(scope=self._scope_for(crew_scope), limit=10_000)
        times = [m.created_at for m in items]
        return ScopeInfo(
            path=crew_scope,
            record_count=len(items),
            categories=sorted({m.kind for m in items}),
            oldest_record=min(times, default=None),
            newest_record=max(times, default=None),
        )

    def list_scopes(self, path: str | None = None) -> list[str]:
        """None below: a Reverie scope has no sub-scopes (CrewAI's paths are metadata)."""
        return []

    def tree(self, path: str | None = None, max_depth: int = 3) -> str:
        info = self.info(path)
        return f"{info.path} ({info.record_count} records)"

    # -- changing and erasing ----------------------------------------------------------------

    def forget(
        self,
        scope: str | None = None,
        categories: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
        record_ids: list[str] | None = None,
    ) -> int:
        """Erase the memories ``record_ids`` (Reverie's ``delete``: the page or episode and
        what derives from it, receipted). Returns how many were erased. ``scope`` (a
        ``MemoryScope`` always passes its root) only names the user whose records they are."""
        if categories or older_than or metadata_filter or not record_ids:
            raise InvalidInput(
                "record_ids",
                "ReverieMemory erases by record id only; for a scope, a subject or an age use "
                "Reverie.forget (a dry run first: docs/privacy.md)",
            )
        tenant = Scope.parse(self._scope_for(scope or "/")).tenant  # ids are a tenant's own
        for record_id in record_ids:
            self.engine.delete(record_id, tenant=tenant)
        return len(record_ids)

    def update(self, record_id: str, *args: Any, **changes: Any) -> MemoryRecord:
        raise InvalidInput(
            "record_id",
            "episodes are immutable evidence and pages change by dream cycles or a person's "
            "edit (reverie edit); remember the correction instead",
        )

    def reset(self, scope: str | None = None) -> None:
        raise InvalidInput(
            "scope",
            f"erasing a whole scope is explicit: reverie forget --scope {self.reverie_scope} "
            "(a dry run; --apply erases)",
        )

    def reset_all(self) -> None:
        self.reset()
