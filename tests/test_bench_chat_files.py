"""``reverie bench chat --from DIR``: chats and questions written by anyone are read back and
scored by the same rules as generated people; what cannot be scored is refused saying where."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie.bench.chat import run_chat
from reverie.bench.chat_files import dump, load
from reverie.bench.chat_gen import ChatConfig, generate
from reverie.cli.app import app
from reverie.errors import InvalidInput


def _chat(ident: str, user: str, when: str, *texts: str) -> dict:
    messages = []
    for text in texts:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted!"}]
    return {"id": ident, "user": user, "when": when, "messages": messages}


def _write(directory: Path, chats: list, questions: list, **extra: object) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    body = "\n".join(c if isinstance(c, str) else json.dumps(c) for c in chats)
    (directory / "chats.jsonl").write_text(body + "\n", encoding="utf-8")
    (directory / "questions.json").write_text(
        json.dumps({"questions": questions, **extra}), encoding="utf-8"
    )
    return directory


def _strangers_set(directory: Path) -> Path:
    chats = [
        _chat("c1", "u-ana", "2026-10-05T18:00:00Z", "hey! quick one",
              "my sister Ines is visiting, she is vegan so plan dinners around that"),
        _chat("c2", "u-ana", "2026-10-09T08:30:00+00:00", "I work at Initech these days"),
        _chat("c3", "u-ana", "2026-10-20T12:00:00Z", "big news: I start at Globex on Monday"),
    ]  # fmt: skip
    questions = [
        {"kind": "said", "user": "u-ana", "slot": "sister diet",
         "query": "What does Ines eat?", "keys": ["vegan"], "shared": True},
        {"kind": "changed", "user": "u-ana", "slot": "employer",
         "query": "Where does Ana work?", "keys": ["Globex"], "stale": ["Initech"]},
        {"kind": "never", "user": "u-ana", "slot": "blood type",
         "query": "What is Ana's blood type?"},
    ]  # fmt: skip
    return _write(directory, chats, questions)


def test_a_dumped_set_reads_back_as_the_same_chats_questions_and_people(tmp_path: Path) -> None:
    data = generate(ChatConfig(people=2))
    dump(data, tmp_path)
    back = load(tmp_path)
    assert back.chats == data.chats and back.questions == data.questions
    assert back.people == data.people and back.final == data.final


def test_questions_are_asked_an_hour_after_the_last_chat_unless_told(tmp_path: Path) -> None:
    data = load(_strangers_set(tmp_path))
    assert data.final.isoformat() == "2026-10-20T13:00:00+00:00"
    assert [c.id for c in data.chats] == ["c1", "c2", "c3"] and data.users == ["u-ana"]


@pytest.mark.parametrize(
    ("chats", "questions", "message"),
    [
        (["{oops"], [], "chats.jsonl:1"),
        ([{"id": "c", "user": "u"}], [], "needs an 'id', a 'user', a 'when'"),
        ([{"id": "c", "user": "u", "when": "2026-10-01T00:00:00Z", "messages": []}], [],
         "non-empty list"),
        ([{"id": "c", "user": "u", "when": "2026-10-01T00:00:00Z",
           "messages": [{"role": "robot", "content": "hi"}]}], [], "role: user|assistant"),
        ([_chat("c", "u", "soon", "hi")], [], "not an ISO 8601 time"),
        ([_chat("c", "u", "2026-10-01T00:00:00Z", "hi")], [], "holds no questions"),
        ([_chat("c", "u", "2026-10-01T00:00:00Z", "hi")],
         [{"kind": "said", "user": "nobody", "query": "q", "keys": ["x"]}], "has no chat"),
        ([_chat("c", "u", "2026-10-01T00:00:00Z", "hi")],
         [{"kind": "said", "user": "u", "query": "q"}], "needs 'keys'"),
        ([_chat("c", "u", "2026-10-01T00:00:00Z", "hi")],
         [{"kind": "maybe", "user": "u", "query": "q"}], "kind 'maybe'"),
    ],
)  # fmt: skip
def test_a_set_that_cannot_be_scored_is_refused_saying_where(
    tmp_path: Path, chats: list, questions: list, message: str
) -> None:
    with pytest.raises(InvalidInput, match=re.escape(message)):
        load(_write(tmp_path, chats, questions))


@pytest.mark.parametrize(
    "people", [["u-ana"], [{"name": "Ana"}], [{"user": "u-ana", "said": [{"fact": "vegan"}]}]]
)
def test_a_people_list_in_another_shape_is_refused_saying_where(
    tmp_path: Path, people: list
) -> None:
    """``people`` is optional, and one in another shape is refused as such, not a crash."""
    _strangers_set(tmp_path)
    body = json.loads((tmp_path / "questions.json").read_text(encoding="utf-8"))
    (tmp_path / "questions.json").write_text(json.dumps({**body, "people": people}))
    with pytest.raises(InvalidInput, match=re.escape("people[0]")):
        load(tmp_path)


def test_a_strangers_set_is_scored_by_reverie_and_bm25(tmp_path: Path) -> None:
    data = load(_strangers_set(tmp_path))
    result = run_chat(data=data, systems=("reverie-lexical", "bm25"))
    bm25 = result.run("bm25")
    assert bm25 is not None and bm25.hits[0].answered  # "Ines" is shared with the statement
    lexical = result.run("reverie-lexical after dream")
    assert lexical is not None and len(lexical.hits) == 3
    assert result.to_dict()["questions"]["changed"] == 1


def test_the_command_scores_a_set_from_disk_and_refuses_a_bad_one(tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["bench", "chat", "--from", str(_strangers_set(tmp_path / "s")),
                               "--systems", "bm25", "--json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert json.loads(done.output[done.output.index("{") :])["user_messages"] == 4
    bad = runner.invoke(app, ["bench", "chat", "--from", str(tmp_path / "none")])
    assert bad.exit_code != 0 and "questions.json" in bad.output
