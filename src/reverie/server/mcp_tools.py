"""The MCP tools as plain Python: typed parameters a model reads, typed results it gets back.

Every parameter is ``Annotated`` with a description; closed sets (an episode's outcome, a page's
status) are ``Literal`` so the schema lists them as an enum; every result is a pydantic model,
so the tool publishes an output schema and returns structured content. Each tool calls the
facade and nothing else. :class:`Tools` checks the scope: bound to one, it refuses another
scope and answers "no such page" for another scope's pages (and the server hides the
``scope`` parameter altogether, :mod:`reverie.server.mcp`).

Episode text is evidence and may hold secrets: ``why`` and ``search_episodes`` show episodes
as the engine hands them out, redacted.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from reverie.api.items import MemoryEvent
from reverie.engine import Reverie
from reverie.errors import InvalidInput, NotFound
from reverie.models import Episode, Scope

__all__ = [
    "OUTCOMES",
    "STATUSES",
    "Dreamed",
    "EpisodeView",
    "Episodes",
    "Forgotten",
    "History",
    "Lineage",
    "PageList",
    "PageRead",
    "Recalled",
    "Remembered",
    "Tools",
]

OutcomeName = Literal["success", "failure", "partial", "timeout", "unknown"]
StatusName = Literal["active", "superseded", "retired", "all"]
OUTCOMES: tuple[str, ...] = get_args(OutcomeName)
STATUSES: tuple[str, ...] = get_args(StatusName)
"""The values of :class:`~reverie.models.Outcome` and of :class:`~reverie.models.PageStatus`
(plus ``all``), spelled out so the schema carries them as enums (tests/test_mcp.py checks)."""

ScopeArg = Annotated[
    str | None,
    Field(description="The brain: 'tenant/agent' or 'tenant/agent/user'. Required."),
]
PageId = Annotated[str, Field(description="A page id (pg_…), from recall, list_pages or search.")]
Text = Annotated[str, Field(description="Plain text; secrets are redacted before storage.")]


class Remembered(BaseModel):
    id: str = Field(description="The episode id (the same content twice is one episode).")
    seq: int | None = Field(description="The store's sequence number for it.")
    scope: str


class RecallHit(BaseModel):
    kind: str = Field(description="'page' (distilled knowledge) or 'episode' (raw evidence).")
    id: str
    title: str
    score: float
    citations: list[str] = Field(description="Episode ids the unit stands on.")


class Recalled(BaseModel):
    text: str = Field(description="The section to put in the prompt; empty when nothing fits.")
    used_tokens: int
    items: list[RecallHit]


class Dreamed(BaseModel):
    cycle_id: str
    status: str = Field(description="committed, empty, rejected, dry_run, held, …")
    collected: int
    created: int
    revised: int
    merged: int
    retired: int
    episodes_marked: int
    message: str


class PageSummary(BaseModel):
    id: str
    title: str
    kind: str
    status: str
    confidence: float
    revision: int


class PageList(BaseModel):
    pages: list[PageSummary]


class PageRead(BaseModel):
    id: str
    markdown: str
    citations: list[str] = Field(description="The episode ids its claims cite.")


class EpisodeView(BaseModel):
    id: str
    created_at: datetime
    situation: str
    action: str
    outcome: str
    error: str | None
    lesson: str | None
    tools: list[str]


class RevisionView(BaseModel):
    model_config = ConfigDict(from_attributes=True)  # read from a Revision, less its content

    number: int
    status: str
    author: str
    reason: str | None
    cycle_id: str | None
    created_at: datetime


class Lineage(BaseModel):
    page: PageRead
    revisions: list[RevisionView]
    episodes: list[EpisodeView] = Field(description="Every raw episode any revision cites.")


class History(BaseModel):
    events: list[MemoryEvent]


class Episodes(BaseModel):
    episodes: list[EpisodeView]


class Forgotten(BaseModel):
    id: str = Field(description="The erasure's receipt id.")
    applied: bool = Field(description="False for a dry run: nothing was erased yet.")
    episodes: list[str] = Field(description="The episodes erased (or that would be).")
    not_found: list[str] = Field(description="Episode ids asked for that this brain lacks.")
    counts: dict[str, int] = Field(description="What was (or would be) erased, per store area.")
    receipt: dict[str, Any] = Field(description="The whole receipt (docs/privacy.md).")


class Tools:
    """The tool functions, bound to one facade and (optionally) one scope."""

    def __init__(self, rv: Reverie, scope: Scope | None = None) -> None:
        self.rv = rv
        self.bound = scope

    def _scope(self, scope: str | None) -> Scope:
        if scope is None:
            if self.bound is None:
                raise InvalidInput("scope", "this server has no default scope; pass tenant/agent")
            return self.bound
        wanted = Scope.parse(scope)
        if self.bound is not None and wanted != self.bound:
            raise InvalidInput("scope", f"this server is bound to {self.bound}; got {wanted}")
        return wanted

    def _visible(self, scope: Scope, what: str) -> None:
        if self.bound is not None and scope != self.bound:
            raise NotFound(f"no {what}")

    @staticmethod
    def _episode(ep: Episode) -> EpisodeView:
        """An episode as the engine handed it out: already redacted (``Reverie.episode``)."""
        return EpisodeView(
            id=ep.id,
            created_at=ep.created_at,
            situation=ep.situation,
            action=ep.action,
            outcome=str(ep.outcome),
            error=ep.error,
            lesson=ep.lesson,
            tools=list(ep.tools),
        )

    def remember(  # noqa: PLR0913 (MCP tool: one parameter per episode field)
        self,
        situation: Annotated[str, Field(description="What the task or problem was.")],
        action: Annotated[str, Field(description="What was done about it.")],
        outcome: Annotated[OutcomeName, Field(description="How it ended.")] = "unknown",
        error: Annotated[str | None, Field(description="The error message, if any.")] = None,
        lesson: Annotated[
            str | None, Field(description="What to do differently next time, in one sentence.")
        ] = None,
        tools: Annotated[
            list[str] | None, Field(description="Names of the tools used, e.g. ['kubectl'].")
        ] = None,
        category: Annotated[
            str | None, Field(description="A short label grouping similar work, e.g. 'deploy'.")
        ] = None,
        importance: Annotated[
            int | None, Field(ge=1, le=10, description="1-10; derived from outcome if omitted.")
        ] = None,
        entities: Annotated[
            list[str] | None,
            Field(description="Names involved; 'attribute=value' states a fact about them."),
        ] = None,
        metadata: Annotated[
            dict[str, Any] | None, Field(description="Free JSON kept with the episode.")
        ] = None,
        speaker: Annotated[
            str | None,
            Field(
                description="Who said the situation, for a turn of a conversation (e.g. 'user'):"
                " what they state about themselves is kept as a fact or preference."
            ),
        ] = None,
        scope: ScopeArg = None,
    ) -> Remembered:
        if speaker is not None and speaker.strip():
            metadata = {"speaker": speaker.strip(), **(metadata or {})}
        fields: dict[str, Any] = {
            "situation": situation,
            "action": action,
            "outcome": outcome,
            "error": error,
            "lesson": lesson,
            "tools": tools,
            "category": category,
            "importance": importance,
            "entities": entities,
            "metadata": metadata,
        }
        given = {k: v for k, v in fields.items() if v is not None}
        episode = self.rv.remember(given, scope=self._scope(scope))
        return Remembered(id=episode.id, seq=episode.seq, scope=episode.scope.key)

    def assert_fact(
        self,
        attribute: Annotated[str, Field(description="What the fact is about, e.g. 'editor'.")],
        value: Annotated[str, Field(description="Its value now, e.g. 'vim'.")],
        subject: Annotated[
            str, Field(description="Whose attribute: 'user', a project, a service, …")
        ] = "user",
        entities: Annotated[
            list[str] | None, Field(description="Other names the fact involves.")
        ] = None,
        metadata: Annotated[
            dict[str, Any] | None, Field(description="Free JSON kept with the statement.")
        ] = None,
        scope: ScopeArg = None,
    ) -> Remembered:
        """A fact as an episode that asserts it (``metadata.fact``, :mod:`reverie.dream.facts`):
        the newest assertion of a subject's attribute wins, older values are superseded."""
        fact = {"subject": subject, "attribute": attribute, "value": value}
        episode = self.rv.remember(
            {
                "situation": f"{subject} {attribute}: {value}",
                "action": "stated as a fact",
                "outcome": "success",
                "category": "fact",
                "entities": [subject, *(entities or [])],
                "metadata": {**(metadata or {}), "fact": fact},
            },
            scope=self._scope(scope),
        )
        return Remembered(id=episode.id, seq=episode.seq, scope=episode.scope.key)

    def recall(
        self,
        query: Annotated[str, Field(description="The task at hand or the question, in words.")],
        budget_tokens: Annotated[
            int | None, Field(ge=1, description="Most tokens the section may take.")
        ] = None,
        scope: ScopeArg = None,
    ) -> Recalled:
        found = self.rv.recall(query, self._scope(scope), budget_tokens)
        items = [
            RecallHit(
                kind=i.kind, id=i.id, title=i.title, score=round(i.score, 4), citations=i.citations
            )
            for i in found.items
        ]
        return Recalled(text=found.text, used_tokens=found.used_tokens, items=items)

    def search_episodes(
        self,
        query: Annotated[str, Field(description="Words the episodes should contain.")],
        limit: Annotated[int, Field(ge=1, le=100, description="How many, best first.")] = 10,
        scope: ScopeArg = None,
    ) -> Episodes:
        found = self.rv.search_episodes(query, self._scope(scope), limit=limit)
        return Episodes(episodes=[self._episode(e) for e in found])

    def dream_now(
        self,
        dry_run: Annotated[bool, Field(description="Plan and report; change nothing.")] = False,
        scope: ScopeArg = None,
    ) -> Dreamed:
        report = self.rv.dream(self._scope(scope), dry_run=dry_run)
        keep = ("cycle_id", "collected", "created", "revised", "merged", "retired", "message")
        summary = {k: getattr(report, k) for k in keep}
        return Dreamed(**summary, status=str(report.status), episodes_marked=report.episodes_marked)

    def list_pages(
        self,
        status: Annotated[StatusName, Field(description="Which pages; 'all' for every one.")] = (
            "active"
        ),
        scope: ScopeArg = None,
    ) -> PageList:
        found = self.rv.pages(self._scope(scope), None if status == "all" else status)
        return PageList(
            pages=[
                PageSummary(
                    id=p.id,
                    title=p.title,
                    kind=str(p.kind),
                    status=str(p.status),
                    confidence=round(p.confidence, 3),
                    revision=p.revision.number,
                )
                for p in found
            ]
        )

    def read_page(self, page_id: PageId) -> PageRead:
        page = self.rv.page(page_id)
        self._visible(page.scope, f"page {page_id}")
        return PageRead(id=page.id, markdown=page.to_markdown(), citations=page.citations)

    def why(self, page_id: PageId) -> Lineage:
        lineage = self.rv.why(page_id)
        self._visible(lineage.page.scope, f"page {page_id}")
        page = lineage.page
        return Lineage(
            page=PageRead(id=page.id, markdown=page.to_markdown(), citations=page.citations),
            revisions=[RevisionView.model_validate(r) for r in lineage.revisions],
            episodes=[self._episode(e) for e in lineage.episodes],
        )

    def history(
        self,
        memory_id: Annotated[str, Field(description="A page id (pg_…) or an episode id.")],
    ) -> History:
        tenant = self.bound.tenant if self.bound is not None else None
        self._visible(
            Scope.parse(self.rv.get(memory_id, tenant=tenant).scope), f"memory {memory_id}"
        )
        return History(events=self.rv.history(memory_id, tenant=tenant))

    def forget(
        self,
        episode_ids: Annotated[
            list[str] | None, Field(description="Episode ids to erase, with what cites them.")
        ] = None,
        page_id: Annotated[
            str | None, Field(description="A page (pg_…) to erase, with its revisions.")
        ] = None,
        subject: Annotated[
            str | None,
            Field(description="Erase every episode mentioning this text (any letter case)."),
        ] = None,
        older_than: Annotated[
            str | None, Field(description="Erase episodes older than this, e.g. '400d'.")
        ] = None,
        apply: Annotated[
            bool, Field(description="False (the default) only reports what would be erased.")
        ] = False,
        reason: Annotated[str, Field(description="Why, for the receipt.")] = "",
    ) -> Forgotten:
        if self.bound is None:
            raise InvalidInput("scope", "forget needs a server bound to a scope (--scope)")
        if page_id is not None:
            self.read_page(page_id)  # another scope's page: not found
        receipt = self.rv.forget(
            episodes=episode_ids or (),
            page=page_id,
            subject=subject,
            older_than=older_than,
            scope=self.bound,
            apply=apply,
            reason=reason,
        )
        body = receipt.to_json()
        return Forgotten(
            id=receipt.id,
            applied=receipt.applied,
            episodes=list(body.get("episodes", [])),
            not_found=list(body.get("not_found", [])),
            counts=dict(receipt.counts),
            receipt=body,
        )
