"""``reverie keys create/list/revoke`` and ``reverie serve`` (127.0.0.1 unless --host)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from typer.testing import CliRunner

from reverie.cli.app import app


def cli(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--db", str(db), *args])
    return result.exit_code, result.stdout, result.stderr


def test_keys_create_list_revoke(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    code, out, err = cli(db, "keys", "create", "--tenant", "acme", "--rights", "write", "-n", "ci")
    token = out.strip()
    assert code == 0 and token.startswith("rvk_") and "not shown again" in err
    code, out, _ = cli(db, "keys", "list", "--json")
    (listed,) = json.loads(out)
    assert listed["bound_to"] == "acme" and listed["rights"] == "write" and listed["name"] == "ci"
    assert "salt" not in listed and "secret_hash" not in listed and token not in out
    assert cli(db, "keys", "revoke", listed["id"])[1].startswith(f"revoked key {listed['id']}")
    assert json.loads(cli(db, "keys", "list", "--json")[1])[0]["revoked_at"]
    code, _, err = cli(db, "keys", "create", "--tenant", "acme", "--rights", "root")
    assert code == 2 and "'root' is not 'read', 'write' or 'admin'" in err
    assert cli(db, "keys", "revoke", "0000")[0] == 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_serve_binds_to_localhost_by_default(tmp_path: Path) -> None:
    port = free_port()
    code = "from reverie.cli.app import main; main()"
    args = ["--db", str(tmp_path / "b.db"), "serve", "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, "server did not start"
                time.sleep(0.1)
        assert health.json()["status"] == "ok"
        listening = subprocess.run(
            ["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=False
        ).stdout
        if listening:  # ss is there: the socket is on loopback only
            assert listening.split()[3] == f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=10)
    assert b"/dashboard/" in err


def test_serve_refuses_a_bad_rate_limit_before_listening(tmp_path: Path) -> None:
    code, _, err = cli(tmp_path / "b.db", "serve", "--rate-limit", "reads=5/10")
    assert code == 2
    assert "--rate-limit" in err and "read=10/20" in err
