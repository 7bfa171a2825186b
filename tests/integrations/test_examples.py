"""Every framework example under examples/ runs offline and does what its docstring says."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _main(name: str, needs: str) -> Any:
    pytest.importorskip(needs, reason=f"examples/{name}.py needs {needs} (dev extra)")
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.main


def test_langgraph_example(tmp_path: Path) -> None:
    replies = _main("langgraph_store", "langgraph")(tmp_path / "b.db")
    assert replies == ["Noted.", "Your cat is Miso."]


def test_anthropic_memory_tool_example(tmp_path: Path) -> None:
    assert _main("anthropic_memory_tool", "anthropic")(tmp_path / "b.db") == "I'll remember that."


def test_openai_agents_example(tmp_path: Path) -> None:
    assert _main("openai_agents_hooks", "agents")(tmp_path / "b.db") == "The queue is back."


def test_llama_index_example(tmp_path: Path) -> None:
    system = _main("llama_index_memory", "llama_index.core")(tmp_path / "b.db")
    assert "badge number" in system


def test_pydantic_ai_example(tmp_path: Path) -> None:
    assert _main("pydantic_ai_memory", "pydantic_ai")(tmp_path / "b.db") == "It is 14°C in Lyon."


def test_claude_code_settings_example_is_what_install_writes(tmp_path: Path) -> None:
    from reverie.integrations.claude_settings import install  # noqa: PLC0415

    settings = json.loads((ROOT / "examples/claude_code/settings.json").read_text())
    assert install(tmp_path / "settings.json", python="/path/to/venv/bin/python") == settings
