"""The episode browser: a scope's raw evidence, searched by its words and filtered.

What a person supervising a brain asks of its evidence: "the failures with kubectl last week
that no cycle has consolidated yet". Text goes through the store's full-text index (ranked
best first), no text lists the newest first; the filters (outcome, a date range on the
episode's ``created_at``, consolidated or not, a tool) then apply to those candidates.

Candidates are bounded by ``window`` (:data:`BROWSE_WINDOW`): the ``window`` best text matches,
or the ``window`` newest episodes. :class:`EpisodeList` says how many matched and whether the
window held every candidate (``complete``), so a reader knows when to narrow the search.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from reverie.errors import InvalidInput
from reverie.models import Episode, Outcome, Scope, utc
from reverie.recall.query import query_terms
from reverie.store.base import BrainStore

__all__ = ["BROWSE_WINDOW", "EpisodeFilter", "EpisodeList", "browse"]

BROWSE_WINDOW = 5000


@dataclass(frozen=True)
class EpisodeFilter:
    """What an episode must be to be listed; ``None`` (or empty) asks nothing."""

    text: str = ""
    outcome: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    consolidated: bool | None = None
    tool: str | None = None

    def __post_init__(self) -> None:
        if self.outcome is not None and self.outcome not in {str(o) for o in Outcome}:
            names = ", ".join(str(o) for o in Outcome)
            raise InvalidInput("outcome", f"{self.outcome!r} is not an outcome ({names})")
        if self.since and self.until and utc(self.since) > utc(self.until):
            raise InvalidInput("since", "the range starts after it ends; swap since and until")

    def matches(self, episode: Episode) -> bool:
        when = utc(episode.created_at)
        return (
            (self.outcome is None or str(episode.outcome) == self.outcome)
            and (self.since is None or when >= utc(self.since))
            and (self.until is None or when <= utc(self.until))
            and (self.consolidated is None or self.consolidated == bool(episode.consolidated_in))
            and (self.tool is None or self.tool.casefold() in {t.casefold() for t in episode.tools})
        )


@dataclass(frozen=True)
class EpisodeList:
    """At most ``limit`` episodes that match, of ``matched`` among the candidates looked at;
    ``complete`` when those candidates were every episode (or every text match) of the scope."""

    episodes: list[Episode]
    matched: int
    complete: bool


def browse(
    store: BrainStore,
    scope: Scope,
    wanted: EpisodeFilter,
    *,
    limit: int = 50,
    window: int = BROWSE_WINDOW,
) -> EpisodeList:
    """The episodes of ``scope`` that ``wanted`` describes: best text matches first, or
    newest first without text."""
    if limit < 1:
        raise InvalidInput("limit", "must be 1 or more")
    if wanted.text.strip():
        terms = query_terms(wanted.text)
        if not terms:
            raise InvalidInput("q", "holds no searchable word (only stop words); add one")
        found = [e for e, _score in store.search_episodes(scope, terms, window)]
    else:
        found = store.recent_episodes(scope, window)
    kept = [e for e in found if wanted.matches(e)]
    return EpisodeList(kept[:limit], len(kept), len(found) < window)
