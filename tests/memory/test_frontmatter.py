"""The front matter reader takes plain YAML scalars a person types, safely;
the writer stays JSON and byte-stable."""

from __future__ import annotations

from typing import Any

import pytest

from reverie.memory.frontmatter import FrontMatterError, dump, split

KEYS = ("id", "kind", "confidence", "valid_from", "valid_until", "sources", "revision")


def read(value: str) -> Any:
    return split(f"---\nkind: {value}\n---\n", KEYS)[0]["kind"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("warning", "warning"),
        ('"warning"', "warning"),
        ("'it''s'", "it's"),
        ("0.8", 0.8),
        ("3", 3),
        ("-2", -2),
        ("null", None),
        ("~", None),
        ("", None),
        ("true", True),
        ("no", "no"),  # YAML 1.2: text, not a boolean
        ("[a, 'b', \"c\", 1]", ["a", "b", "c", 1]),
        ("[]", []),
        ("warning   # a person's note", "warning"),
        ("sha256:abc", "sha256:abc"),
        ("2026-11-02T10:00:00+00:00", "2026-11-02T10:00:00+00:00"),
    ],
)
def test_plain_yaml_scalars_are_read(text: str, value: Any) -> None:
    assert read(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "warning",
        "0.8",
        "null",
        "~",
        "'it''s'",
        "[a, 'b', 1]",
        "true",
        "warning # note",
        "sha256:abc",
    ],
)
def test_what_is_read_agrees_with_a_yaml_safe_loader(text: str) -> None:
    yaml = pytest.importorskip("yaml")
    assert read(text) == yaml.safe_load(f"kind: {text}")["kind"]


@pytest.mark.parametrize(
    "text",
    [
        "!!python/object x",
        "&anchor x",
        "*alias",
        "|",
        ">",
        "{a: 1}",
        "[a, [b]]",
        "[a,, b]",
        "[a",
        "a: b",
        "'open",
        "- a",
        '"\\x41"',
    ],
)
def test_anything_outside_the_safe_subset_is_refused_naming_the_line(text: str) -> None:
    with pytest.raises(FrontMatterError, match="line 2"):
        read(text)


def test_unknown_and_repeated_keys_are_still_errors() -> None:
    with pytest.raises(FrontMatterError, match="unknown"):
        split("---\nkind: warning\nevil: 1\n---\n", KEYS)
    with pytest.raises(FrontMatterError, match="twice"):
        split("---\nkind: warning\nkind: note\n---\n", KEYS)


def test_the_writer_is_json_and_reads_back_exactly() -> None:
    fields = {"id": "pg_1", "kind": "warning", "confidence": 0.8123, "valid_until": None}
    fields |= {"sources": ["ep-1", "ep-2"], "revision": 3}
    text = dump(fields)
    assert text.splitlines()[2] == 'kind: "warning"'
    assert split(text + "# t\n", KEYS) == (fields, "# t\n")
