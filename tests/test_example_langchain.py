"""The LangChain example runs offline: recall lands in the prompt and turns become episodes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from reverie import Reverie

pytest.importorskip("langchain_core", reason="the example needs langchain-core (dev extra)")
ROOT = Path(__file__).resolve().parents[1]


def test_langchain_chain_recalls_and_remembers(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "langchain_agent", ROOT / "examples/langchain_agent.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["langchain_agent"] = module
    spec.loader.exec_module(module)
    answers = module.main(tmp_path / "brain.db")
    assert answers[-1] == "Refund it in the billing portal."

    with Reverie.open(tmp_path / "brain.db") as rv:
        assert rv.status("acme/support-bot").episodes == 3
        page = rv.pages("acme/support-bot")[0]
        assert any("billing portal" in c.text for c in page.revision.claims)
