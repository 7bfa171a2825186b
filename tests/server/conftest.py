"""A real server over real HTTP: uvicorn on 127.0.0.1 with an OS-chosen port, in a thread.

The brain is seeded once per module with the bundled sample week for ``acme/coder`` (dreamt
night by night, so the journal has several cycles) and a copy of it for ``globex/bot``.
The console's tests drive Debian's headless Chromium (``browser``, ``page``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import uvicorn

from reverie import Reverie
from reverie.cli.demo import load_sample
from reverie.server import create_app


@dataclass
class Live:
    url: str
    rv: Reverie
    tokens: dict[str, str]
    app: Any

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=10)


@dataclass
class Running:
    server: uvicorn.Server
    thread: threading.Thread
    url: str


def start_server(app: Any) -> Running:
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", ws="none", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return Running(server, thread, f"http://127.0.0.1:{port}")


def stop_server(running: Running) -> None:
    running.server.should_exit = True
    running.thread.join(timeout=10)


def as_scope(items: list[dict[str, Any]], scope: str, prefix: str) -> list[dict[str, Any]]:
    return [{**item, "scope": scope, "id": f"{prefix}-{item['id']}"} for item in items]


def seed(rv: Reverie) -> None:
    """The sample week for acme/coder, dreamt each night; the same week for globex/bot."""
    sample = load_sample()
    days: dict[str, list[dict[str, Any]]] = {}
    for item in sample:
        days.setdefault(item["created_at"][:10], []).append(item)
    for day, items in sorted(days.items()):
        rv.ingest(items)
        night = datetime.fromisoformat(day + "T23:30:00+00:00")
        rv.dream("acme/coder", now=night)
    rv.ingest(as_scope(sample, "globex/bot", "gx"))
    rv.dream("globex/bot", now=datetime.fromisoformat("2026-11-20T00:00:00+00:00"))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    db = tmp_path_factory.mktemp("server") / "brain.db"
    rv = Reverie.open(db)
    seed(rv)
    tokens = {
        "acme-write": rv.keys.create("acme", rights="write", name="acme writer")[1],
        "acme-read": rv.keys.create("acme", rights="read")[1],
        "acme-coder": rv.keys.create("acme", agent="coder", rights="write")[1],
        "acme-other-agent": rv.keys.create("acme", agent="tester", rights="write")[1],
        "globex": rv.keys.create("globex", rights="write")[1],
        "globex-admin": rv.keys.create("globex", rights="admin")[1],
        "acme-admin": rv.keys.create("acme", rights="admin")[1],
    }
    app = create_app(rv, max_body_bytes=256 * 1024)
    running = start_server(app)
    try:
        yield Live(running.url, rv, tokens, app)
    finally:
        stop_server(running)
        rv.close()


def wait_dream(client: httpx.Client, cycle_id: str, timeout: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = client.get(f"/v1/dreams/{cycle_id}").json()
        if body["state"] != "running" or time.monotonic() > deadline:
            return body
        time.sleep(0.05)


# -- a real browser for the console's tests (Debian's chromium driven by Playwright) -----------

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDE = {"width": 1280, "height": 800}
NARROW = {"width": 400, "height": 800}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per module; skipped where Playwright is not installed."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=FLAGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context at 1280×800 for each test."""
    context = browser.new_context(viewport=WIDE)
    try:
        tab = context.new_page()
        tab.set_default_timeout(15_000)
        yield tab
    finally:
        context.close()


__all__ = [
    "CHROMIUM",
    "NARROW",
    "WIDE",
    "Live",
    "Running",
    "seed",
    "start_server",
    "stop_server",
    "timedelta",
    "wait_dream",
]
