"""``reverie doctor`` against a real local server: ok, not configured, failing."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from reverie.cli.app import app
from reverie.llm.fake_server import FakeLLMServer, Reply, anthropic_reply, openai_reply

runner = CliRunner()


def configure(monkeypatch: pytest.MonkeyPatch, base_url: str, provider: str = "openai") -> None:
    monkeypatch.setenv("REVERIE_LLM_PROVIDER", provider)
    monkeypatch.setenv("REVERIE_LLM_BASE_URL", base_url)
    monkeypatch.setenv("REVERIE_LLM_MODEL", "doctor-model")
    monkeypatch.setenv("REVERIE_LLM_API_KEY", "sk-" + "d" * 40)


def test_doctor_ok(monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> None:
    configure(monkeypatch, server.openai_base_url)
    server.push(openai_reply({"ok": True}, input_tokens=9, output_tokens=2))
    result = runner.invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] and report["model"] == "doctor-model" and report["input_tokens"] == 9
    assert "d" * 40 not in result.output


def test_doctor_anthropic_text(monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> None:
    configure(monkeypatch, server.url, provider="anthropic")
    server.push(anthropic_reply({"ok": True}))
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0 and "model: ok" in result.output


def test_doctor_not_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REVERIE_LLM_MODEL", raising=False)
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 1 and "not configured" in result.output


def test_doctor_failing_model(monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> None:
    configure(monkeypatch, server.openai_base_url)
    server.push(openai_reply({"ok": False}), openai_reply("nope"))
    result = runner.invoke(app, ["doctor", "--timeout", "2"])
    assert result.exit_code == 2 and "FAILED" in result.output


def test_doctor_unreachable(monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> None:
    configure(monkeypatch, server.openai_base_url)
    server.push(Reply(status=401, body={"error": "bad key"}))
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 2 and "401" in result.output
