"""The response cache: the store's two methods (contract, every backend), the key, the fake."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reverie.llm.cache import MemoryCache, ResponseCache, cache_key
from reverie.store.sqlite import SQLiteStore

VALUE = {
    "model": "m",
    "response": {"operations": []},
    "input_tokens": 3,
    "output_tokens": 1,
    "created_at": datetime(2026, 1, 2, tzinfo=UTC).isoformat(),
}


@pytest.mark.parametrize("kind", ["store", "memory"])
def test_cache_round_trip(kind: str, store: SQLiteStore) -> None:
    cache: ResponseCache = store if kind == "store" else MemoryCache()
    assert cache.cache_get("k") is None
    cache.cache_put("k", VALUE)
    got = cache.cache_get("k")
    assert got is not None and {k: got[k] for k in VALUE} == VALUE
    cache.cache_put("k", {**VALUE, "response": {"operations": [], "x": 1}})
    again = cache.cache_get("k")
    assert again is not None and again["response"] == {"operations": [], "x": 1}


def test_a_cached_answer_keeps_the_time_its_writer_gives(store: SQLiteStore) -> None:
    when = datetime(2026, 3, 4, 5, 6, tzinfo=UTC)  # a distiller gives its cycle's now
    store.cache_put("k", {**VALUE, "created_at": when})
    got = store.cache_get("k")
    assert got is not None and datetime.fromisoformat(got["created_at"]) == when


def test_cache_survives_reopen_and_is_not_cycle_state(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "c.db")
    store.migrate()
    store.cache_put("k", VALUE)
    stats = store.stats()
    store.close()
    reopened = SQLiteStore(tmp_path / "c.db")
    assert reopened.cache_get("k") is not None and reopened.stats() == stats
    reopened.close()


def test_key_changes_with_model_version_and_input() -> None:
    base = cache_key("m", "v1", user="u", system="s")
    assert base == cache_key("m", "v1", system="s", user="u")
    assert base.startswith("sha256:")
    others = {
        cache_key("m2", "v1", user="u", system="s"),
        cache_key("m", "v2", user="u", system="s"),
        cache_key("m", "v1", user="u!", system="s"),
    }
    assert base not in others and len(others) == 3


def test_missing_httpx_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['httpx'] = None\n"
        "import reverie.llm.openai_compat as o\n"
        "from reverie.errors import MissingExtra\n"
        "try:\n    o.OpenAICompatLLM('http://x', 'm')\n"
        "except MissingExtra as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'reverie[llm]'" in out.stdout


def test_importing_reverie_does_not_import_httpx() -> None:
    modules = "reverie, reverie.cli.app, reverie.dream.cycle"
    code = f"import sys, {modules}; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
