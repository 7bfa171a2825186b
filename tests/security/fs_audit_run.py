"""A full run under a write audit: ``python fs_audit_run.py DATA_DIR``; prints JSON.

It installs a :func:`sys.addaudithook` that records every path opened for writing, created,
renamed, removed or connected to by SQLite, then runs what a user runs — the demo, ingest and
dream through the CLI, the model path against the local fake model server, Markdown export, a
person's edit and import, archiving, the training export, and requests to the HTTP service — with
every output aimed at ``DATA_DIR``. The last line of output is the JSON list of paths written.
"""

from __future__ import annotations

import io
import json
import os
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

WRITES: set[str] = set()
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_PATH_EVENTS = {
    "os.rename", "os.replace", "os.remove", "os.mkdir", "os.rmdir", "os.symlink", "os.link",
    "os.truncate", "os.chmod", "os.utime", "shutil.rmtree", "shutil.move", "sqlite3.connect",
}  # fmt: skip


def _record(path: Any) -> None:
    if isinstance(path, int) or path is None:
        return
    WRITES.add(os.path.abspath(os.fsdecode(path)))


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event == "open":
        path, mode, flags = args
        if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS
        ):
            _record(path)
    elif event in _PATH_EVENTS and args:
        _record(args[0])
        if event in ("os.rename", "os.replace", "os.symlink", "os.link") and len(args) > 1:
            _record(args[1])


def _demo_and_cli(data: Path) -> None:
    from rich.console import Console
    from typer.testing import CliRunner

    from reverie.cli.app import app
    from reverie.cli.demo import load_sample, run_demo

    run_demo(data / "demo.db", Console(file=io.StringIO()))
    source = data / "in.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in load_sample()), encoding="utf-8")
    runner = CliRunner()
    for args in (["ingest", str(source)], ["dream", "--scope", "acme/coder"], ["status"]):
        result = runner.invoke(app, ["--db", str(data / "cli.db"), *args])
        assert result.exit_code == 0, result.output


def _model_path(data: Path) -> None:
    from reverie import Reverie
    from reverie.bench.crash_lanes import model_lane
    from reverie.cli.demo import load_sample
    from reverie.store.sqlite import SQLiteStore

    store = SQLiteStore(data / "model.db")
    store.migrate()
    with model_lane(store, lambda _p: None, lambda _l: None) as distiller:
        rv = Reverie(store, distiller=distiller)
        rv.ingest(load_sample())
        rv.dream("acme/coder", now=datetime(2026, 11, 20, tzinfo=UTC))
    store.close()


def _files(data: Path) -> None:
    from reverie import Reverie
    from reverie.dream.archive import Archive
    from reverie.memory.export import write_training

    with Reverie.open(data / "demo.db") as rv:
        scope = "acme/coder"
        rv.export_markdown(scope, data / "mirror", journal=True)
        page = sorted((data / "mirror" / "memories").glob("*.md"))[0]
        page.write_text(page.read_text(encoding="utf-8") + "- a person's note\n", encoding="utf-8")
        rv.import_markdown(scope, data / "mirror", now=datetime(2026, 12, 1, tzinfo=UTC))
        Archive(rv.store).run(timedelta(days=1), datetime(2027, 1, 1, tzinfo=UTC), apply=True)
        write_training(rv.store, data / "training.jsonl")


def _serve(data: Path) -> None:
    import httpx
    import uvicorn

    from reverie import Reverie
    from reverie.server import create_app

    rv = Reverie.open(data / "demo.db")
    token = rv.keys.create("acme", rights="write")[1]
    config = uvicorn.Config(create_app(rv), host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as client:
        episode = {"scope": "acme/coder", "situation": "served", "action": "POST"}
        assert client.post("/v1/episodes", json=episode).status_code == 201
        assert client.post("/v1/recall", json={"query": "deploy", "scope": "acme/coder"}).is_success
        assert client.post("/v1/dreams", json={"scope": "acme/coder"}).status_code == 202
        for path in (
            "/v1/pages?scope=acme/coder",
            "/v1/stats",
            "/v1/journal?scope=acme/coder",
            "/",
        ):
            assert client.get(path).status_code < 500
        time.sleep(0.5)
    server.should_exit = True
    thread.join(timeout=10)
    rv.close()


def main(data: Path) -> None:
    sys.addaudithook(_hook)
    for step in (_demo_and_cli, _model_path, _files, _serve):
        step(data)
    print(json.dumps(sorted(WRITES)))


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
