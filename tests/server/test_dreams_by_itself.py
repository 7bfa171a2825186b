"""``reverie serve`` and ``reverie mcp`` dream by themselves: episodes added to a running service
become pages without anyone calling dream, and ``--no-dream`` leaves dreaming to workers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from reverie import Reverie
from reverie.models import Scope

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters

CLI = "from reverie.cli.app import main; main()"
SCOPE = Scope.parse("acme/coder")


def _deploy(n: int) -> dict[str, Any]:
    return {
        "id": f"d-{n}",
        "scope": SCOPE.key,
        "situation": "deploying the api service to the staging cluster",
        "action": "kubectl rollout status deploy/api",
        "outcome": "failure",
        "error": "ImagePullBackOff: registry credentials expired",
        "lesson": "refresh the registry pull secret before deploying to staging",
        "tools": ["kubectl"],
    }


def _pages(db: Path | str) -> int:
    with Reverie.open(db) as rv:
        return len(rv.pages(SCOPE))


def _wait_for_pages(db: Path | str, proc: subprocess.Popen[bytes] | None, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc is None or proc.poll() is None, "the service died"
        if found := _pages(db):
            return found
        time.sleep(0.2)
    return 0


@contextmanager
def _serve(db: Path | str, port: int, *extra: str) -> Iterator[subprocess.Popen[bytes]]:
    args = ["--db", str(db), "serve", "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *args, "--max-sleep", "0.2", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, "server did not start"
                time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def _free_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _token(db: Path | str) -> str:
    with Reverie.open(db) as rv:
        return rv.keys.create("acme", rights="write")[1]


@pytest.mark.parametrize("dream", [True, False], ids=["scheduled", "no-dream"])
def test_serve_dreams_episodes_posted_to_it(tmp_path: Path, dream: bool) -> None:
    db, port = tmp_path / "brain.db", _free_port()
    headers = {"Authorization": f"Bearer {_token(db)}"}
    with _serve(db, port, *([] if dream else ["--no-dream"])) as proc:
        posted = httpx.post(
            f"http://127.0.0.1:{port}/v1/episodes/batch",
            json={"episodes": [_deploy(n) for n in range(3)]},
            headers=headers,
            timeout=10,
        )
        assert posted.status_code == 200 and posted.json()["stored"] == 3
        found = _wait_for_pages(db, proc, 30 if dream else 3)
    assert (found > 0) is dream


def test_serve_on_postgres_dreams_by_itself() -> None:
    """The schedule lives in PostgreSQL too, so the service's scheduler runs there."""
    from tests.pg import schema_url  # noqa: PLC0415

    with schema_url() as url:
        port = _free_port()
        headers = {"Authorization": f"Bearer {_token(url)}"}
        with _serve(url, port) as proc:
            posted = httpx.post(
                f"http://127.0.0.1:{port}/v1/episodes/batch",
                json={"episodes": [_deploy(n) for n in range(3)]},
                headers=headers,
                timeout=10,
            )
            assert posted.status_code == 200 and posted.json()["stored"] == 3
            assert _wait_for_pages(url, proc, 30) > 0


def test_mcp_dreams_what_it_was_told_to_remember(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", CLI, "--db", str(db), "mcp", "--scope", SCOPE.key, "--max-sleep", "0.2"],
        env=dict(os.environ),
    )

    async def session() -> int:
        async with Client(params) as client:
            for n in range(3):
                fields = {k: v for k, v in _deploy(n).items() if k not in ("id", "scope")}
                result = await client.call_tool("remember", fields)
                assert not result.is_error, result.content
            return await anyio.to_thread.run_sync(_wait_for_pages, db, None, 30.0)

    assert anyio.run(session) > 0
