"""The HTTP clients against a real local server: formats, retries, timeouts, repair, fallback."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

import reverie.llm
from reverie.errors import InvalidInput, LLMBadOutput, LLMError
from reverie.llm import llm_from_env
from reverie.llm._http import HTTPSettings, retry_after_seconds
from reverie.llm.anthropic import AnthropicLLM
from reverie.llm.fake_server import FakeLLMServer, Reply, anthropic_reply, openai_reply
from reverie.llm.openai_compat import OpenAICompatLLM

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
}
FAST = HTTPSettings(timeout_s=2.0, connect_timeout_s=1.0, max_retries=2, backoff_s=0.01)


def needs_answer(data: dict[str, Any]) -> list[str]:
    return [] if isinstance(data.get("answer"), int) else ["'answer' must be an integer"]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as s:
        yield s


@pytest.fixture
def openai(server: FakeLLMServer) -> Iterator[OpenAICompatLLM]:
    client = OpenAICompatLLM(server.openai_base_url, "fake-model", "sk-test", settings=FAST)
    yield client
    client.close()


@pytest.fixture
def claude(server: FakeLLMServer) -> Iterator[AnthropicLLM]:
    client = AnthropicLLM(server.url, "fake-claude", "key-test", settings=FAST)
    yield client
    client.close()


def ask(client: OpenAICompatLLM | AnthropicLLM) -> Any:
    return client.complete_json("sys", "what is 6*7?", SCHEMA, max_tokens=50, check=needs_answer)


def test_openai_valid_answer_uses_json_schema_and_reports_usage(
    server: FakeLLMServer, openai: OpenAICompatLLM
) -> None:
    server.push(openai_reply({"answer": 42}, input_tokens=11, output_tokens=3))
    response = ask(openai)
    assert response.data == {"answer": 42} and response.model == "fake-model"
    assert (response.input_tokens, response.output_tokens) == (11, 3)
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.body["response_format"]["type"] == "json_schema"
    assert request.body["response_format"]["json_schema"]["schema"] == SCHEMA
    assert request.body["messages"][1] == {"role": "user", "content": "what is 6*7?"}


def test_openai_code_fenced_json_is_accepted(
    server: FakeLLMServer, openai: OpenAICompatLLM
) -> None:
    server.push(openai_reply('```json\n{"answer": 1}\n```'))
    assert ask(openai).data == {"answer": 1}


def test_invalid_json_gets_one_repair_turn(server: FakeLLMServer, openai: OpenAICompatLLM) -> None:
    server.push(openai_reply("{not json", output_tokens=5), openai_reply({"answer": 7}))
    response = ask(openai)
    assert response.data == {"answer": 7} and response.output_tokens == 45
    repair = server.requests[1].body["messages"]
    assert repair[-2] == {"role": "assistant", "content": "{not json"}
    assert "not valid JSON" in repair[-1]["content"]


def test_schema_violation_twice_raises_bad_output_with_cost(
    server: FakeLLMServer, openai: OpenAICompatLLM
) -> None:
    server.push(openai_reply({"answer": "x"}), openai_reply({"answer": "still x"}))
    with pytest.raises(LLMBadOutput, match="must be an integer") as info:
        ask(openai)
    assert info.value.calls == 2 and info.value.input_tokens == 240
    assert len(server.requests) == 2


def test_429_then_success_honours_retry_after(
    server: FakeLLMServer, openai: OpenAICompatLLM
) -> None:
    server.push(Reply(status=429, headers={"Retry-After": "0.2"}), openai_reply({"answer": 1}))
    start = time.perf_counter()
    assert ask(openai).data == {"answer": 1}
    assert time.perf_counter() - start >= 0.2 and len(server.requests) == 2


def test_5xx_retried_with_backoff_then_gives_up(
    server: FakeLLMServer, openai: OpenAICompatLLM
) -> None:
    server.push(*[Reply(status=503)] * 3)
    with pytest.raises(LLMError, match="after 3 attempts: HTTP 503"):
        ask(openai)
    assert len(server.requests) == 3


def test_client_error_is_not_retried(server: FakeLLMServer) -> None:
    client = OpenAICompatLLM(server.openai_base_url, "m", settings=FAST, json_mode="none")
    server.push(Reply(status=401, body={"error": {"message": "bad key"}}))
    with pytest.raises(LLMError, match="401"):
        ask(client)
    client.close()
    assert len(server.requests) == 1 and "Authorization" not in server.requests[0].headers


def test_timeout_is_retried(server: FakeLLMServer) -> None:
    settings = HTTPSettings(timeout_s=0.2, max_retries=1, backoff_s=0.01)
    client = OpenAICompatLLM(server.openai_base_url, "m", settings=settings)
    server.push(Reply(delay_s=2.0, body={}), openai_reply({"answer": 3}))
    assert ask(client).data == {"answer": 3}
    client.close()


def test_timeout_every_time_raises(server: FakeLLMServer) -> None:
    settings = HTTPSettings(timeout_s=0.2, max_retries=1, backoff_s=0.01)
    client = OpenAICompatLLM(server.openai_base_url, "m", settings=settings)
    server.push(Reply(delay_s=2.0), Reply(delay_s=2.0))
    with pytest.raises(LLMError, match="Timeout"):
        ask(client)
    client.close()


def test_dropped_connection_is_retried(server: FakeLLMServer, openai: OpenAICompatLLM) -> None:
    server.push(Reply(drop=True), openai_reply({"answer": 5}))
    assert ask(openai).data == {"answer": 5}


def test_server_without_json_schema_falls_back(
    server: FakeLLMServer, openai: OpenAICompatLLM
) -> None:
    server.push(
        Reply(status=400, body={"error": "response_format json_schema unsupported"}),
        Reply(status=400, body={"error": "response_format unsupported"}),
        openai_reply('{"answer": 9}'),
        openai_reply('{"answer": 10}'),
    )
    assert ask(openai).data == {"answer": 9}
    assert ask(openai).data == {"answer": 10}
    formats = [r.body.get("response_format", {}).get("type") for r in server.requests]
    assert formats == ["json_schema", "json_object", None, None]
    assert "JSON schema" in server.requests[2].body["messages"][0]["content"]


def test_refused_connection_raises(openai: OpenAICompatLLM, server: FakeLLMServer) -> None:
    server.stop()
    with pytest.raises(LLMError, match="ConnectError"):
        ask(openai)


def test_anthropic_forced_tool_call(server: FakeLLMServer, claude: AnthropicLLM) -> None:
    server.push(anthropic_reply({"answer": 42}, input_tokens=20, output_tokens=4))
    response = ask(claude)
    assert response.data == {"answer": 42} and response.input_tokens == 20
    request = server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "key-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert request.body["tools"][0]["input_schema"] == SCHEMA
    assert request.body["system"] == "sys"


def test_anthropic_repair_answers_the_tool_call(
    server: FakeLLMServer, claude: AnthropicLLM
) -> None:
    server.push(anthropic_reply({"answer": "no"}), anthropic_reply({"answer": 2}))
    assert ask(claude).data == {"answer": 2}
    follow_up = server.requests[1].body["messages"]
    assert follow_up[1]["role"] == "assistant"
    result = follow_up[2]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True
    assert result["tool_use_id"] == "toolu_fake"


def test_anthropic_text_json_and_429(server: FakeLLMServer, claude: AnthropicLLM) -> None:
    server.push(
        Reply(status=429, headers={"Retry-After": "0"}), anthropic_reply(text='{"answer": 4}')
    )
    assert ask(claude).data == {"answer": 4}


def test_anthropic_garbage_twice(server: FakeLLMServer, claude: AnthropicLLM) -> None:
    server.push(anthropic_reply(text="no idea"), Reply(body={"content": []}))
    with pytest.raises(LLMBadOutput):
        ask(claude)


def test_concurrency_limit_is_respected(server: FakeLLMServer) -> None:
    settings = HTTPSettings(timeout_s=5, concurrency=2)
    client = OpenAICompatLLM(server.openai_base_url, "m", settings=settings)
    in_flight, peak, lock = [0], [0], threading.Lock()

    def slow(_request: object) -> Reply:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.1)
        with lock:
            in_flight[0] -= 1
        return openai_reply({"answer": 1})

    server.responder = slow
    threads = [threading.Thread(target=ask, args=(client,)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client.close()
    assert len(server.requests) == 6 and peak[0] == 2


def test_configuration_from_environment(
    monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer
) -> None:
    monkeypatch.setenv("REVERIE_LLM_BASE_URL", server.url)
    monkeypatch.setenv("REVERIE_LLM_MODEL", "env-model")
    monkeypatch.setenv("REVERIE_LLM_API_KEY", "env-key")
    monkeypatch.setenv("REVERIE_LLM_PROVIDER", "anthropic")
    client = llm_from_env(settings=FAST)
    server.push(anthropic_reply({"answer": 1}))
    assert client.model == "env-model" and ask(client).data == {"answer": 1}  # type: ignore[arg-type]
    assert server.requests[0].headers["x-api-key"] == "env-key"
    client.close()
    monkeypatch.delenv("REVERIE_LLM_MODEL")
    with pytest.raises(InvalidInput, match="REVERIE_LLM_MODEL"):
        llm_from_env("openai")
    with pytest.raises(InvalidInput, match="not one of"):
        llm_from_env("bogus")


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("", None),
        ("3", 3.0),
        ("0.5", 0.5),
        ("-2", 0.0),
        ("soon", None),
        ("Thu, 01 Jan 1970 00:00:10 GMT", 5.0),
    ],
)
def test_retry_after_parsing(header: str | None, expected: float | None) -> None:
    assert retry_after_seconds(header, now=5.0) == expected


def test_public_names() -> None:
    public = {
        name
        for name, value in vars(reverie.llm).items()
        if not name.startswith("_") and name != "annotations" and not isinstance(value, ModuleType)
    }
    assert sorted(reverie.llm.__all__) == sorted(public)
