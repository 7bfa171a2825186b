"""Settings, with defaults that are safe for an embedded, single-user brain.

Where the data lives: ``--db``, then ``REVERIE_DB``, then a per-user data directory.
Which embedder recall uses (:func:`configured_embedder`): ``--embedder`` (or the ``embedder=``
argument), then ``REVERIE_EMBEDDER``, then ``embedder = "…"`` in the config file
(``REVERIE_CONFIG``, else ``<user config dir>/reverie/config.toml``), then the one the brain
recorded, then ``auto`` (docs/recall.md, "Which embedder").
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Literal

from platformdirs import user_config_dir, user_data_dir

from reverie.errors import InvalidInput

PIIPolicy = Literal["off", "tag", "redact"]

__all__ = [
    "Config",
    "DreamConfig",
    "IdentityConfig",
    "MemoryConfig",
    "PIIPolicy",
    "RecallConfig",
    "RedactionConfig",
    "config_file",
    "configured_embedder",
    "default_db_path",
    "parse_duration",
    "resolve_db",
]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)?\s*$", re.I)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


MAX_DURATION = timedelta(days=36525)
"""A hundred years: the longest duration any option means (a longer one is a typo)."""


def parse_duration(value: str | float | timedelta, field_name: str = "duration") -> timedelta:
    """``"90s"``, ``"15m"``, ``"6h"``, ``"30d"``, ``"2w"`` or a number of seconds, at most
    :data:`MAX_DURATION`."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, int | float):
        seconds = float(value)
    else:
        found = _DURATION.match(value)
        if not found:
            raise InvalidInput(field_name, f"{value!r} is not a duration like 90s, 15m, 6h or 30d")
        seconds = float(found.group(1)) * _UNITS[(found.group(2) or "s").lower()]
    if not seconds <= MAX_DURATION.total_seconds():  # also refuses NaN and infinity
        raise InvalidInput(field_name, f"{value!r} is longer than a hundred years")
    return timedelta(seconds=seconds)


@dataclass(frozen=True)
class MemoryConfig:
    """How knowledge ages and what time an episode may claim (the rules are in docs/memory.md).

    Forgetting follows evidence, not the calendar. Disuse is measured on the scope's own
    *activity clock* (the newest ``created_at`` of its experience, never the cycle's ``now``), so
    a brain that has seen nothing new forgets nothing. A page's confidence decays with the
    activity-clock days since its pattern was last observed,
    ``confidence * 0.5 ** (days / (half_life_days * (1 + log2(cycles))))``; preferences and facts
    age slower (``stable_half_life_days``). Only a weakly supported page (fewer than
    ``well_supported_episodes`` episodes and fewer than ``well_supported_cycles`` distinct cycles)
    is retired by disuse, once its decayed confidence falls below ``retire_below``; a well
    supported one ends only by contradiction, or by the explicit wall-clock policy
    ``retire_after_days`` (off by default). ``decay=False`` turns disuse retirement off.

    ``future_skew_s``: an episode dated more than this after the ingest clock is refused, and a
    cycle ignores fact assertions dated more than this after its ``now``.
    """

    decay: bool = True
    half_life_days: float = 60.0
    stable_half_life_days: float = 365.0
    retire_below: float = 0.1
    well_supported_episodes: int = 5
    well_supported_cycles: int = 3
    retire_after_days: float | None = None
    future_skew_s: float = 300.0

    @property
    def future_skew(self) -> timedelta:
        return timedelta(seconds=self.future_skew_s)


@dataclass(frozen=True)
class DreamConfig:
    """How a cycle chooses and groups episodes.

    An episode is eligible when its importance reaches ``importance_threshold``, when it carries a
    real lesson (not boilerplate of its brain, reverie.dream.boilerplate), or when at least
    ``min_pattern`` episodes of the scanned window share its pattern key (a recurring pattern).
    """

    importance_threshold: int = 6
    min_pattern: int = 3
    max_episodes_per_cycle: int = 2000
    scan_limit: int = 200_000
    max_groups_per_cycle: int = 500
    similarity_threshold: float = 0.72
    lesson_min_confidence: float = 0.5
    history_limit: int = 500
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    # duplicate pressure: one lesson, one page (reverie.dream.dedupe)
    duplicate_overlap: float = 0.75
    """Two lessons are one when this share of the shorter one's words is in the other..."""
    duplicate_overlap_related: float = 0.5
    """...or this share, when they were learnt in the same category or with a shared tool."""
    duplicate_cosine: float = 0.85
    """With an embedder: lessons at least this similar are one, whatever their words."""
    # org promotion: a page reinforced in this many distinct cycles is copied to the org brain
    # (0: off)
    promote_after_cycles: int = 3
    # a page is one problem (reverie.dream.problems, reverie.dream.lessons)
    problem_similarity: float = 0.6
    """With an embedder: an episode joins the nearest problem (page or new group) at least this
    similar by cosine, else it starts a new one."""
    problem_similarity_lexical: float = 0.3
    """Without one: the same, by cosine of the field-weighted tf-idf vectors."""
    task_similarity: float = 0.8
    """With an embedder: a whole run (a task episode) joins the nearest kind of request at
    least this similar, else it starts a new one. Requests are short texts of one domain that
    share most of their words, so runs of different kinds meet far above
    ``problem_similarity``."""
    task_similarity_lexical: float = 0.6
    """Without one: the same, by cosine of the requests' tf-idf vectors."""
    problem_merge_similarity: float = 0.85
    """With an embedder: two problem pages whose centres (their text plus this cycle's new
    evidence) are at least this similar have converged and merge."""
    problem_merge_similarity_lexical: float = 0.5
    """Without one: the same, by cosine of the tf-idf centres."""
    split_min_episodes: int = 12
    """A page is checked for unrelated problems when its evidence reaches this many episodes,
    then each time it doubles (reverie.dream.split; 0: never)."""
    split_min_part: int = 4
    """...and a problem found on it moves to a page of its own when it has this many."""
    model_refresh_growth: float | None = 3.0
    """With a model distiller: a known problem's page is rewritten by the model once its evidence
    has grown this many times since the model last wrote it; in between, new episodes reinforce
    it without a call (reverie.dream.budget; None: a call for every group)."""
    model_min_support: int = 4
    """With a model distiller: a problem is first written by the model once it has this many
    episodes; before, its page is written extractively."""
    lesson_cosine: float = 0.75
    """With an embedder: two stated lessons of one problem at least this similar are one claim."""
    boilerplate_spread: float = 3.25
    """A lesson, outcome or action text whose episodes' contexts are this many unrelated ones
    (their effective number, reverie.dream.boilerplate) is a stop phrase of the brain."""
    boilerplate_lift: float = 1.6
    """A lesson or outcome text met at most this many times as often near its episodes as
    among all episodes of their outcome (reverie.dream.boilerplate, chosen on `reverie bench
    agent`'s ops and support worlds) is a stop phrase of the brain."""
    boilerplate_window: int = 1000
    """Stop phrases are learnt from the scope's newest this-many episodes each cycle (0: off,
    only the universal prior)."""
    fallback_after_days: float | None = 7.0
    """With a model distiller: a group whose plan is rejected, and whose first episode was stored
    at least this long ago, is distilled extractively instead (reverie.dream.fallback; None:
    never)."""


@dataclass(frozen=True)
class RecallConfig:
    """How recall searches and packs."""

    budget_tokens: int = 400
    page_candidates: int = 40
    episode_candidates: int = 40
    episode_window: int | None = 2000
    """Raw-episode search scores only the newest this-many matches (None: all of them)."""
    vector_window: int | None = 20_000
    """With an embedder, raw episodes are compared with the query among the newest this-many
    embedded (None: all). Like ``episode_window`` it bounds recall's cost as a brain grows:
    older evidence reaches recall through the pages it was distilled into."""
    vector_indexes: int = 16
    """Scopes whose vectors an engine keeps in memory (SQLite; PostgreSQL searches in the
    database): the least recently recalled is dropped, and loaded again when asked."""
    min_term_coverage: float = 0.1
    """Floor on the idf-weighted share of the query's terms a unit holds (reverie.recall.search)."""
    min_matched_terms: int = 2
    """A question of three or more content terms must share this many with a unit (the unit's
    own words; a claim's with its page title) to be recalled."""
    unknown_names: bool = True
    """A question naming something the scope's pages and episodes never mention ("Tableau",
    "v2") must share one term more with a unit (reverie.recall.search.question_names)."""
    include_episodes: bool = True
    include_pages: bool = True
    """Search page claims (off only for the episodes-only ablation of ``bench locomo``)."""
    include_org: bool = False
    """Also search the tenant's org brain (``tenant/_org``); its claims are labelled."""


_PII_POLICIES = ("off", "tag", "redact")


@dataclass(frozen=True)
class RedactionConfig:
    """What happens to personal data that is not a credential (docs/security.md).

    Credentials are always redacted; these classes each get a policy: ``off`` keeps them,
    ``tag`` replaces them with their class (``[EMAIL]``, ``[PHONE]``, ``[CARD]``) so a page still
    says that an address was there, ``redact`` replaces them with ``[REDACTED]``. The policy
    applies wherever Reverie redacts: pages a cycle writes, text sent to a model, recall's
    episode excerpts, Markdown import and the training export.
    """

    email: PIIPolicy = "off"
    phone: PIIPolicy = "off"
    card: PIIPolicy = "off"

    def __post_init__(self) -> None:
        for name in ("email", "phone", "card"):
            if getattr(self, name) not in _PII_POLICIES:
                raise InvalidInput(f"redaction.{name}", "must be 'off', 'tag' or 'redact'")


@dataclass(frozen=True)
class IdentityConfig:
    """The scope the conventional verbs (``add``, ``search``, ``get_all``; docs/api.md) use when
    a call names only some of ``user_id`` / ``agent_id``: ``tenant/agent_id/user_id``, with
    ``agent_id`` defaulting to ``agent`` and the tenant always ``tenant``."""

    tenant: str = "default"
    agent: str = "default"


@dataclass(frozen=True)
class Config:
    dream: DreamConfig = field(default_factory=DreamConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)
    redaction: RedactionConfig = field(default_factory=RedactionConfig)
    identity: IdentityConfig = field(default_factory=IdentityConfig)


def default_db_path() -> Path:
    """``<user data dir>/reverie/reverie.db`` (platformdirs)."""
    return Path(user_data_dir("reverie", appauthor=False)) / "reverie.db"


def resolve_db(explicit: str | None) -> str:
    """``--db`` wins, then ``REVERIE_DB``, then the per-user default."""
    if explicit:
        return explicit
    env = os.environ.get("REVERIE_DB")
    if env:
        return env
    return str(default_db_path())


def config_file() -> Path:
    """``REVERIE_CONFIG``, else ``<user config dir>/reverie/config.toml`` (platformdirs)."""
    env = os.environ.get("REVERIE_CONFIG")
    return Path(env) if env else Path(user_config_dir("reverie", appauthor=False)) / "config.toml"


def configured_embedder() -> str | None:
    """The embedder the environment names: ``REVERIE_EMBEDDER``, else the config file's
    ``embedder`` key; None when neither does (a missing file is no error, a broken one is)."""
    env = os.environ.get("REVERIE_EMBEDDER", "").strip()
    if env:
        return env
    path = config_file()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput("config", f"cannot read {path}: {exc}") from None
    value = data.get("embedder")
    if value is not None and not isinstance(value, str):
        raise InvalidInput("config", f"{path}: embedder must be a string such as 'minilm'")
    return value.strip() or None if value else None
