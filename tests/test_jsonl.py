"""JSON lines: split on ``\\n`` only, each line decoded and depth-bounded on its own, and every
error reported under the line number an editor shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie import Reverie
from reverie.cli.app import app
from reverie.jsonl import decode_lines, parse_line
from reverie.limits import MAX_JSON_DEPTH


def episode(ident: str, situation: str = "deploy") -> bytes:
    record = {"id": ident, "scope": "acme/coder", "situation": situation, "action": "kubectl"}
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0b", "\x1c"])
def test_a_unicode_line_separator_inside_a_string_is_not_a_line_break(separator: str) -> None:
    data = episode("one", f"before{separator}after") + b"\n" + episode("two") + b"\n"
    lines, failures = decode_lines(data)
    assert failures == [] and [n for n, _ in lines] == [1, 2]
    assert parse_line(lines[0][1])["situation"] == f"before{separator}after"


def test_crlf_and_blank_lines_keep_the_numbers() -> None:
    lines, _ = decode_lines(episode("one") + b"\r\n\r\n  \n" + episode("two") + b"\r\n")
    assert [n for n, _ in lines] == [1, 4]
    assert all(not text.endswith("\r") for _, text in lines)


def test_a_latin1_byte_fails_its_own_line_only() -> None:
    lines, failures = decode_lines(episode("one") + b"\ncaf\xe9\n" + episode("three"))
    assert [n for n, _ in lines] == [1, 3]
    assert failures == [(2, "encoding", "not UTF-8 text: byte 0xe9 at column 4")]


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, 5_000, 100_000])
def test_deep_nesting_is_that_line_s_error(levels: int) -> None:
    with pytest.raises(ValueError, match=f"nested more than {MAX_JSON_DEPTH} levels"):
        parse_line("[" * levels + "]" * levels)
    assert parse_line("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)  # at the limit: fine


def test_cli_ingest_keeps_the_good_lines_around_every_bad_one(tmp_path: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    data = b"\n".join(
        [
            episode("one", "line\u2028separator"),
            deep,
            b'{"id": "bad", "scope": "acme/coder", "situation": "caf\xe9"}',
            episode("four", "next\x85line"),
            b"",
            episode("six"),
        ]
    )
    source = tmp_path / "in.jsonl"
    source.write_bytes(data)
    db = tmp_path / "b.db"
    result = CliRunner().invoke(app, ["--db", str(db), "ingest", str(source)])
    assert result.exit_code == 1
    assert "stored 3 episodes" in result.stdout and "2 lines failed" in result.stdout
    assert f"line 2: json: invalid JSON: is nested more than {MAX_JSON_DEPTH}" in result.stderr
    assert "line 3: encoding: not UTF-8 text: byte 0xe9" in result.stderr
    with Reverie.open(db) as rv:
        assert rv.episode("one", tenant="acme").situation == "line\u2028separator"
        assert rv.episode("six", tenant="acme").situation == "deploy"
