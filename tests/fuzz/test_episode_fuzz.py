"""Fuzzing episode payloads through the Python API and the CLI's JSONL ingest.

Whatever comes in: never a crash, always a stored record (found again afterwards) or a
:class:`reverie.ReverieError` that names the problem — and nothing stored before is lost.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from reverie import InvalidInput, Reverie, ReverieError
from reverie.cli.app import app
from reverie.limits import MAX_METADATA_DEPTH

FIELDS = [
    "id", "scope", "session_id", "created_at", "situation", "action", "outcome",
    "outcome_details", "error", "lesson", "importance", "category", "tools", "entities",
    "metadata", "seq", "consolidated_in",
]  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    st.sampled_from(
        ["acme/coder", "failure", "2026-11-02T09:00:00Z", "", " ", "\x00", "a" * 70_000]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)
payloads = st.dictionaries(st.sampled_from([*FIELDS, "junk"]), values, max_size=10).map(
    lambda d: {"scope": "acme/coder", "situation": "fuzzing", **d}
)


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reverie]:
    with Reverie.open(tmp_path_factory.mktemp("fuzz") / "f.db") as rv:
        rv.remember(
            {
                "id": "anchor",
                "scope": "acme/coder",
                "situation": "kept",
                "created_at": "2026-01-01T00:00:00Z",
            }
        )
        yield rv


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(payload=payloads)
def test_api_stores_or_names_the_problem(brain: Reverie, payload: dict[str, Any]) -> None:
    try:
        stored = brain.remember(payload)
    except InvalidInput as exc:
        assert exc.field and exc.reason
    except ReverieError as exc:
        assert str(exc)
    else:
        assert brain.store.episode(stored.id, tenant="acme").id == stored.id
    assert brain.store.episode("anchor", tenant="acme").situation == "kept"


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.one_of(payloads.map(json.dumps), st.text(max_size=30)), min_size=1, max_size=6
    )
)
def test_cli_ingest_reports_every_bad_line(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("cli")
    source = folder / "in.jsonl"
    source.write_text(
        "\n".join(line.replace("\n", " ") for line in lines) + "\n",
        encoding="utf-8",
        errors="surrogatepass",
    )
    result = CliRunner().invoke(app, ["--db", str(folder / "c.db"), "ingest", str(source)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1, 2)
    if result.exit_code == 1:
        assert "line " in result.output
    with Reverie.open(folder / "c.db") as rv:
        assert rv.status().episodes <= len(lines)


def test_lone_surrogates_and_unserialisable_metadata_are_input_errors(tmp_path: Path) -> None:
    with Reverie.open(tmp_path / "s.db") as rv:
        with pytest.raises(InvalidInput):
            rv.remember({"scope": "acme/coder", "situation": "bad \ud800 text"})
        with pytest.raises(InvalidInput, match="metadata"):
            rv.remember({"scope": "acme/coder", "situation": "s", "metadata": {"when": object()}})
        assert rv.status().episodes == 0


def _nest(shape: list[bool]) -> Any:
    """Metadata as deep as ``shape`` is long: an array where True, an object where False."""
    value: Any = "leaf"
    for is_list in shape:
        value = [value] if is_list else {"k": value}
    return {"m": value}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.lists(st.booleans(), max_size=1500))
def test_metadata_of_any_depth_is_stored_readable_or_refused(
    tmp_path_factory: pytest.TempPathFactory, shape: list[bool]
) -> None:
    with Reverie.open(tmp_path_factory.mktemp("deep") / "d.db") as rv:
        try:
            stored = rv.remember(
                {"scope": "acme/coder", "situation": "s", "metadata": _nest(shape)}
            )
        except InvalidInput as exc:
            assert exc.field == "metadata" and "levels deep" in exc.reason
            assert len(shape) + 1 > MAX_METADATA_DEPTH
        else:
            assert len(shape) + 1 <= MAX_METADATA_DEPTH
            assert json.loads(rv.episode(stored.id, tenant="acme").model_dump_json())["metadata"]


line_bytes = st.one_of(
    payloads.map(lambda p: json.dumps(p, ensure_ascii=False).encode("utf-8", "surrogatepass")),
    st.binary(max_size=40),
    st.sampled_from(["\u2028", "\u2029", "\x85", "\r"]).map(
        lambda sep: json.dumps(
            {"scope": "acme/coder", "situation": f"a{sep}b"}, ensure_ascii=False
        ).encode()
    ),
    st.integers(min_value=1, max_value=50_000).map(lambda n: b"[" * n + b"]" * n),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(line_bytes.map(lambda b: b.replace(b"\n", b" ")), min_size=1, max_size=6))
def test_every_reported_line_number_is_a_line_of_the_file(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes]
) -> None:
    folder = tmp_path_factory.mktemp("lines")
    source = folder / "in.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    result = CliRunner().invoke(app, ["--db", str(folder / "c.db"), "ingest", str(source)])
    assert result.exit_code in (0, 1), result.output
    reported = [int(line.split()[1].rstrip(":")) for line in result.stderr.splitlines()
                if line.startswith("line ")]  # fmt: skip
    assert all(1 <= n <= len(lines) for n in reported)
    assert len(set(reported)) == len(reported)
