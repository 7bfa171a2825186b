"""API keys for the HTTP service: minted once, stored only as salted hashes, bound to a scope.

A token reads ``rvk_<key id>_<secret>``. The key id is public (it is how a key is listed and
revoked, and how a presented token finds its row); the secret is 32 random bytes shown once at
creation and never stored. The store keeps ``hmac-sha256:<hex>`` of the secret keyed by a
per-key random salt, so a leaked database yields no usable token and equal secrets never share a
hash. Verification compares in constant time.

A key is bound to a tenant and, optionally, to one agent of it; ``read`` keys may read that part
of the brain, ``write`` keys may also append episodes and start dreams, ``admin`` keys may also
erase (docs/privacy.md) — a right no ``write`` key has. :func:`allows` is the one rule every
HTTP route applies.

Episode ids are a tenant's own (docs/store.md), and an agent-bound key cannot see its sibling
agents' episodes. So the id such a key sends is stored in its agent's namespace,
``<id>@<agent>`` (:func:`episode_id_for`): its write never meets a sibling's episode, and its
answer — 201 with the namespaced id — is the same whether a sibling holds ``<id>`` or nobody
does. A read by id tries the namespaced id before the one sent.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from reverie.errors import InvalidInput, NotFound
from reverie.limits import NUL_REASON, has_nul
from reverie.models import Scope
from reverie.store.records import ApiKey, Rights

if TYPE_CHECKING:
    from reverie.store.base import BrainStore

__all__ = [
    "ApiKey",
    "KeyRing",
    "Rights",
    "allows",
    "episode_id_for",
    "hash_secret",
    "mint_key",
    "split_token",
    "verify",
]

PREFIX = "rvk"
HASH_ALGORITHM = "hmac-sha256"
_TOKEN = re.compile(rf"^{PREFIX}_([0-9a-f]{{16}})_([A-Za-z0-9_-]{{20,128}})$")


def hash_secret(salt: str, secret: str) -> str:
    """``hmac-sha256:<hex>`` of ``secret`` keyed by ``salt``."""
    digest = hmac.new(salt.encode("utf-8"), secret.encode("utf-8"), hashlib.sha256).hexdigest()
    return f"{HASH_ALGORITHM}:{digest}"


def mint_key(
    *,
    tenant: str,
    agent: str | None,
    rights: Rights | str,
    name: str,
    now: datetime,
) -> tuple[ApiKey, str]:
    """A new key record and its token; the token is the only copy of the secret."""
    checked = Scope.parse({"tenant": tenant, "agent": agent or "any"})
    if has_nul(name):
        raise InvalidInput("name", NUL_REASON)
    try:
        level = Rights(rights)
    except ValueError:
        raise InvalidInput("rights", f"{rights!r} is not 'read', 'write' or 'admin'") from None
    key_id, secret, salt = secrets.token_hex(8), secrets.token_urlsafe(32), secrets.token_hex(16)
    key = ApiKey(
        id=key_id,
        name=name,
        tenant=checked.tenant,
        agent=agent,
        rights=level,
        salt=salt,
        secret_hash=hash_secret(salt, secret),
        created_at=now,
    )
    return key, f"{PREFIX}_{key_id}_{secret}"


def split_token(token: str) -> tuple[str, str] | None:
    """``(key id, secret)`` of a well-formed token, else None."""
    match = _TOKEN.match(token.strip())
    return (match.group(1), match.group(2)) if match else None


def verify(key: ApiKey, secret: str) -> bool:
    """True when ``secret`` is this key's and the key is not revoked (constant-time compare)."""
    return key.active and hmac.compare_digest(hash_secret(key.salt, secret), key.secret_hash)


def allows(key: ApiKey, scope: Scope, *, write: bool = False, admin: bool = False) -> bool:
    """May ``key`` touch ``scope`` (and write to it, when ``write``; erase in it, when
    ``admin``)?"""
    needed = Rights.ADMIN if admin else Rights.WRITE if write else Rights.READ
    if not key.rights.includes(needed):
        return False
    if scope.tenant != key.tenant:
        return False
    return key.agent is None or scope.agent == key.agent


def episode_id_for(key: ApiKey, episode_id: str) -> str:
    """The id an episode ``key`` names ``episode_id`` is stored under: in an agent-bound key's
    namespace, ``<id>@<agent>`` (an id already in it stays as it is); else as sent."""
    suffix = f"@{key.agent}"
    if key.agent is None or episode_id.endswith(suffix):
        return episode_id
    return episode_id + suffix


class KeyRing:
    """Create, list, revoke and check API keys in a store that can keep them; ``clock`` is
    the facade's (:meth:`reverie.Reverie.now`), read when a call gives no ``now``."""

    def __init__(self, store: BrainStore, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock

    def create(
        self,
        tenant: str,
        *,
        agent: str | None = None,
        rights: Rights | str = Rights.READ,
        name: str = "",
        now: datetime | None = None,
    ) -> tuple[ApiKey, str]:
        """Store a new key; return it and its token (shown once, never stored)."""
        key, token = mint_key(
            tenant=tenant, agent=agent, rights=rights, name=name, now=now or self._clock()
        )
        self._store.put_api_key(key)
        return key, token

    def list(self) -> list[ApiKey]:
        return self._store.api_keys()

    def revoke(self, key_id: str, *, now: datetime | None = None) -> ApiKey:
        self._store.api_key(key_id)  # NotFound for an unknown id
        return self._store.revoke_api_key(key_id, now or self._clock())

    def authenticate(self, token: str) -> ApiKey | None:
        """The active key ``token`` belongs to, or None (malformed, unknown, wrong, revoked)."""
        parts = split_token(token)
        if parts is None:
            return None
        try:
            key = self._store.api_key(parts[0])
        except NotFound:
            return None
        return key if verify(key, parts[1]) else None
