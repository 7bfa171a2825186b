"""A NUL character (U+0000) in any field is one item's problem on every backend: that item is
refused with a reason naming the field, and the good items around it are stored.

PostgreSQL's ``text`` and ``jsonb`` cannot hold U+0000 at all, so no store takes one: SQLite
would otherwise keep what PostgreSQL refuses, and a brain copied from one to the other would
fail halfway.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from reverie import InvalidInput, Reverie
from reverie.cli.app import app
from tests.pg import schema_url

SCOPE = "acme/coder"
NUL_FIELDS: list[tuple[str, Any]] = [
    ("situation", "deploy \x00 staging"),
    ("lesson", "\x00"),
    ("session_id", "s\x001"),
    ("tools", ["kubectl", "k\x00"]),
    ("entities", ["\x00"]),
    ("metadata", {"note": "a\x00b"}),
    ("metadata", {"k\x00": 1}),
    ("metadata", {"deep": [{"x": "\x00"}]}),
]


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "brain.db")
        return
    with schema_url() as url:
        yield url


def _item(n: int, **fields: Any) -> dict[str, Any]:
    return {"id": f"e{n}", "scope": SCOPE, "situation": f"good episode {n}", **fields}


@pytest.mark.parametrize(("field", "value"), NUL_FIELDS)
def test_ingest_stores_the_good_items_around_one_with_nul(
    target: str, field: str, value: Any
) -> None:
    with Reverie.open(target) as rv:
        result = rv.ingest([_item(1), _item(2, **{field: value}), _item(3)])
        assert (result.stored, result.duplicates) == (2, 0)
        [error] = result.errors
        assert error.index == 1 and "NUL" in error.reason, error
        assert rv.status().episodes == 2


def test_remember_refuses_nul_as_input(target: str) -> None:
    with Reverie.open(target) as rv:
        with pytest.raises(InvalidInput, match="NUL"):
            rv.remember(_item(1, error="boom\x00"))
        assert rv.status().episodes == 0


def test_http_batch_keeps_its_good_items(target: str) -> None:
    from reverie.server import create_app  # noqa: PLC0415 (extra: server)
    from tests.server.conftest import start_server, stop_server  # noqa: PLC0415

    with Reverie.open(target) as rv:
        key = rv.keys.create("acme", rights="write")[1]
        server = start_server(create_app(rv))
        try:
            with httpx.Client(
                base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=20
            ) as client:
                body = {"episodes": [_item(1), _item(2, action="a\x00"), _item(3)]}
                answer = client.post("/v1/episodes/batch", json=body)
        finally:
            stop_server(server)
        assert answer.status_code == 200, answer.text
        got = answer.json()
        assert got["stored"] == 2 and [e["index"] for e in got["errors"]] == [1]
        assert rv.status().episodes == 2


def test_cli_ingest_reports_the_line_and_stores_the_rest(target: str, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    lines = [_item(1), _item(2, situation="bad\x00line"), _item(3)]
    source.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["--db", target, "ingest", str(source)])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "line 2" in result.output and "NUL" in result.output, result.output
    with Reverie.open(target) as rv:
        assert rv.status().episodes == 2


def test_other_stored_text_refuses_nul_alike(target: str) -> None:
    """Key names, an erasure's reason and id, and a note's text are stored too."""
    from reverie.memory.notes import NoteChange, commit_notes  # noqa: PLC0415
    from reverie.models import Scope, now_utc  # noqa: PLC0415

    with Reverie.open(target) as rv:
        rv.ingest([_item(1)])
        with pytest.raises(InvalidInput, match="NUL") as named:
            rv.keys.create("acme", rights="read", name="ci\x00")
        assert named.value.field == "name"
        for field in ("reason", "request_id"):
            with pytest.raises(InvalidInput, match="NUL") as erased:
                rv.forget(scope=SCOPE, apply=True, **{field: "r\x00"})
            assert erased.value.field == field
        change = NoteChange("/memories/a.md", "line one\x00")
        with pytest.raises(InvalidInput, match="NUL"):
            commit_notes(rv.store, Scope.parse(SCOPE), [change], now=now_utc(), summary="create")
        assert rv.status().episodes == 1 and rv.pages(SCOPE) == []
