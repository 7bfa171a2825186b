"""Who owns a memory: a :class:`Scope` is ``tenant/agent`` or ``tenant/agent/user``.

A brain is one scope. Names are 1-128 characters of letters, digits, ``_.:@-``, starting with a
letter or digit, so :data:`ORG_AGENT` (``_org``) is no real agent's: ``tenant/_org`` is the
tenant's org brain, written only by promotion (:mod:`reverie.dream.promote`), and it has no users.
A scope is frozen; its ``key`` is computed once and is what it hashes by.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from reverie.errors import InvalidScope
from reverie.models.base import first_error

__all__ = ["NAME", "ORG_AGENT", "Scope", "ScopeLike"]

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$")
"""What a scope part or an episode id may be: 1-128 of letters, digits and ``_.:@-``, the
first a letter or digit."""
ORG_AGENT = "_org"
"""Agent name of a tenant's org brain; no real agent can take it (names start alphanumeric)."""


class Scope(BaseModel):
    """Who owns a memory: ``tenant/agent`` or ``tenant/agent/user``. A brain is one scope."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant: str
    agent: str
    user: str | None = None

    @field_validator("tenant", "agent", "user")
    @classmethod
    def _check_name(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.field_name == "agent" and value == ORG_AGENT:  # the tenant's org brain
            return value
        if value is not None and not NAME.match(value):
            raise ValueError(
                "must be 1-128 characters of letters, digits, '_', '.', ':', '@' or '-',"
                " starting with a letter or digit"
            )
        return value

    @cached_property
    def key(self) -> str:
        return "/".join(filter(None, (self.tenant, self.agent, self.user)))

    def __hash__(self) -> int:  # equal scopes have equal keys; the key is computed once
        return hash(self.key)

    # the org (tenant) brain, written only by promotion (reverie.dream.promote)
    @model_validator(mode="after")
    def _org_has_no_user(self) -> Scope:
        if self.agent == ORG_AGENT and self.user is not None:
            raise ValueError(f"the org brain {self.tenant}/{ORG_AGENT} has no users")
        return self

    @property
    def is_org(self) -> bool:
        return self.agent == ORG_AGENT

    @property
    def org(self) -> Scope:
        """The org brain of this scope's tenant (``tenant/_org``)."""
        return Scope(tenant=self.tenant, agent=ORG_AGENT)

    def __str__(self) -> str:
        return self.key

    @classmethod
    def parse(cls, value: ScopeLike) -> Scope:
        """Accept a :class:`Scope`, ``"tenant/agent[/user]"`` or a mapping."""
        if isinstance(value, Scope):
            return value
        if isinstance(value, str):
            parts = value.strip().split("/")
            if len(parts) not in (2, 3) or not all(parts):
                raise InvalidScope(f"{value!r} is not 'tenant/agent' or 'tenant/agent/user'")
            value = dict(zip(("tenant", "agent", "user"), parts, strict=False))
        try:
            return cls.model_validate(value)
        except ValidationError as exc:
            raise InvalidScope(str(first_error(exc))) from None


ScopeLike = Scope | str | dict[str, Any]
