"""The SQLite store's small side tables: the model response cache (not cycle state; see
:mod:`reverie.llm.cache`) and API keys (issue 7: only salted hashes; see :mod:`reverie.keys`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

from reverie.errors import NotFound
from reverie.keys import ApiKey, Rights
from reverie.models import now_utc
from reverie.store.sqlite_rows import iso, parse_dt

__all__ = ["SQLiteKeysMixin"]


_KEY_COLUMNS = "id, name, tenant, agent, rights, salt, secret_hash, created_at, revoked_at"


def _key_from_row(r: Sequence[Any]) -> ApiKey:
    return ApiKey(
        id=r[0],
        name=r[1],
        tenant=r[2],
        agent=r[3],
        rights=Rights(r[4]),
        salt=r[5],
        secret_hash=r[6],
        created_at=datetime.fromisoformat(r[7]),
        revoked_at=parse_dt(r[8]),
    )


class _Host(Protocol):
    def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def api_key(self, key_id: str) -> ApiKey: ...


class SQLiteKeysMixin:
    """The response cache and API key tables of :class:`reverie.store.sqlite.SQLiteStore`."""

    # -- model response cache (not cycle state; see reverie.llm.cache) ---------------------

    def cache_get(self: _Host, key: str) -> dict[str, Any] | None:
        rows = self._read(
            "SELECT model, response, input_tokens, output_tokens, created_at FROM model_cache"
            " WHERE key = ?",
            (key,),
        )
        if not rows:
            return None
        model, response, tokens_in, tokens_out, created_at = rows[0]
        return {
            "model": model,
            "response": json.loads(response),
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "created_at": created_at,
        }

    def cache_put(self: _Host, key: str, value: dict[str, Any]) -> None:
        with self._write() as c:
            c.execute(
                "INSERT OR REPLACE INTO model_cache VALUES (?,?,?,?,?,?)",
                (
                    key,
                    str(value.get("model", "")),
                    json.dumps(value["response"], sort_keys=True, ensure_ascii=False),
                    int(value.get("input_tokens", 0)),
                    int(value.get("output_tokens", 0)),
                    iso(now_utc()),
                ),
            )

    # -- API keys (issue 7): only salted hashes; see reverie.keys --------------------------------

    def put_api_key(self: _Host, key: ApiKey) -> None:
        with self._write() as c:
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
                    iso(key.created_at),
                    iso(key.revoked_at),
                ),
            )

    def api_key(self: _Host, key_id: str) -> ApiKey:
        rows = self._read(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,))
        if not rows:
            raise NotFound(f"no API key {key_id}")
        return _key_from_row(rows[0])

    def api_keys(self: _Host) -> list[ApiKey]:
        rows = self._read(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id")
        return [_key_from_row(r) for r in rows]

    def revoke_api_key(self: _Host, key_id: str, at: datetime) -> ApiKey:
        with self._write() as c:
            c.execute(
                "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?",
                (iso(at), key_id),
            )
        return self.api_key(key_id)
