"""Two small side tables every store keeps: the model response cache and API keys.

*Cache* (migration 0002): an answer stored under a hash of (model, prompt version,
input), so a cycle re-run after a crash or an undo pays for nothing twice. It is not cycle state
(see :mod:`reverie.llm.cache`): written outside any cycle's transaction, never undone, and a
second answer under the same key replaces the first.

*API keys* (migration 0006): only a salted hash of each secret is stored (see
:mod:`reverie.keys`). A revoked key keeps its row for the audit; revoking it again keeps the
first ``revoked_at``.

One implementation serves both backends: what differs — times (SQLite ISO-8601 text,
PostgreSQL ``timestamptz``), the cached response (SQLite JSON text, PostgreSQL ``jsonb``) —
comes from :mod:`reverie.store.sql.dialect`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from reverie.errors import InvalidInput, NotFound
from reverie.models import utc
from reverie.store.records import ApiKey, Rights
from reverie.store.sql.database import Database

__all__ = ["api_key", "api_keys", "cache_get", "cache_put", "put_api_key", "revoke_api_key"]

_CACHE_COLUMNS = "key, model, response, input_tokens, output_tokens, created_at"
_CACHE_UPSERT = (
    " ON CONFLICT (key) DO UPDATE SET model = excluded.model, response = excluded.response,"
    " input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,"
    " created_at = excluded.created_at"
)
_KEY_COLUMNS = "id, name, tenant, agent, rights, salt, secret_hash, created_at, revoked_at"


# -- model response cache ------------------------------------------------------------------


def cache_get(db: Database, key: str) -> dict[str, Any] | None:
    rows = db.read(
        "SELECT model, response, input_tokens, output_tokens, created_at FROM model_cache"
        " WHERE key = ?",
        (key,),
    )
    if not rows:
        return None
    model, response, tokens_in, tokens_out, created_at = rows[0]
    return {
        "model": model,
        "response": db.dialect.json(response),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "created_at": db.dialect.at(created_at).isoformat(),
    }


def cache_put(db: Database, key: str, value: dict[str, Any]) -> None:
    with db.write() as c:
        c.execute(
            f"INSERT INTO model_cache ({_CACHE_COLUMNS}) VALUES (?,?,?,?,?,?)" + _CACHE_UPSERT,
            (
                key,
                str(value.get("model", "")),
                json.dumps(value["response"], sort_keys=True, ensure_ascii=False),
                int(value.get("input_tokens", 0)),
                int(value.get("output_tokens", 0)),
                db.dialect.ts(_stored_at(value)),
            ),
        )


# -- API keys ------------------------------------------------------------------------------


def _key_from_row(db: Database, r: Sequence[Any]) -> ApiKey:
    return ApiKey(
        id=r[0],
        name=r[1],
        tenant=r[2],
        agent=r[3],
        rights=Rights(r[4]),
        salt=r[5],
        secret_hash=r[6],
        created_at=db.dialect.at(r[7]),
        revoked_at=db.dialect.when(r[8]),
    )


def put_api_key(db: Database, key: ApiKey) -> None:
    d = db.dialect
    with db.write() as c:
        c.execute(
            f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                key.id,
                key.name,
                key.tenant,
                key.agent,
                str(key.rights),
                key.salt,
                key.secret_hash,
                d.ts(key.created_at),
                d.ts(key.revoked_at),
            ),
        )


def api_key(db: Database, key_id: str) -> ApiKey:
    rows = db.read(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,))
    if not rows:
        raise NotFound(f"no API key {key_id}")
    return _key_from_row(db, rows[0])


def api_keys(db: Database) -> list[ApiKey]:
    rows = db.read(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id")
    return [_key_from_row(db, r) for r in rows]


def revoke_api_key(db: Database, key_id: str, at: datetime) -> ApiKey:
    with db.write() as c:
        c.execute(
            "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?",
            (db.dialect.ts(at), key_id),
        )
    return api_key(db, key_id)


def _stored_at(value: dict[str, Any]) -> datetime:
    """When an answer was stored: the ``created_at`` its writer gives (a distiller gives its
    cycle's ``now``); the store reads no clock of its own."""
    given = value.get("created_at")
    if isinstance(given, str):
        return utc(datetime.fromisoformat(given))
    if not isinstance(given, datetime):
        raise InvalidInput("created_at", "a cached answer needs the time its writer stored it")
    return utc(given)
