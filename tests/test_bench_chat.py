"""``reverie bench chat``: the generator holds the properties its scores rely on, the scoring
rules are what docs/bench-chat.md says, and a tiny run scores every system."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from reverie.bench.agent import has_key
from reverie.bench.chat import Run, run_chat, score
from reverie.bench.chat_data import load_talk
from reverie.bench.chat_files import dump
from reverie.bench.chat_gen import ChatConfig, ChatData, Question, generate, shares_word
from reverie.bench.chat_render import render_chat, targets
from reverie.cli.app import app
from reverie.errors import InvalidInput


@pytest.fixture(scope="module")
def data() -> ChatData:
    return generate(ChatConfig(people=48))


def _texts(data: ChatData, user: str) -> list[str]:
    return [t for c in data.chats if c.user == user for t in c.user_texts]


def test_the_same_seed_gives_the_same_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    paths = [dump(generate(ChatConfig(seed=s)), tmp_path / str(i)) for i, s in enumerate((0, 0, 1))]
    first, again, other = ([p.read_bytes() for p in group] for group in paths)
    assert first == again and first != other


def test_every_slot_has_several_wordings_and_questions() -> None:
    for slot in load_talk().slots:
        assert len(slot.statements) >= 3 and len(slot.questions) >= 3, slot.key
        assert len(slot.values) >= 3 and (not slot.changes or len(slot.changes) >= 3), slot.key


def test_each_slot_is_stated_once_and_a_change_comes_later_without_the_old_value(
    data: ChatData,
) -> None:
    order = {c.id: (c.when, i) for i, c in enumerate(data.chats)}
    changes = 0
    for person in data.people:
        firsts = Counter(s.slot for s in person.said if not s.change)
        assert set(firsts.values()) == {1}
        for change in (s for s in person.said if s.change):
            first = next(s for s in person.said if s.slot == change.slot and not s.change)
            assert order[first.chat] < order[change.chat]
            assert change.value != first.value and not has_key(change.text, first.value)
            changes += 1
        assert any(s.change for s in person.said)
    assert changes >= len(data.people)


def test_a_value_is_said_only_in_its_statement_and_never_in_the_talk(data: ChatData) -> None:
    talk = load_talk()
    values = [v for slot in talk.slots for v in slot.values]
    filler = [*talk.chitchat, *talk.replies, *talk.acknowledgements, *talk.openers, *talk.closers]
    assert not [(v, t) for v in values for t in filler if has_key(t, v)]
    for person in data.people:
        said = {s.text: s.value for s in person.said}
        for text in _texts(data, person.user):
            found = [v for v in values if has_key(text, v)]
            assert found == ([said[text]] if text in said else []), text
            assert not has_key(text, person.name)


def test_questions_never_give_the_answer_and_empty_ones_have_none(data: ChatData) -> None:
    talk = load_talk()
    for q in data.questions:
        assert not any(has_key(q.query, v) for v in (*q.keys, *q.stale)), q
        assert "{" not in q.query
        if q.kind == "unstated":
            values = talk.slot(q.slot).values
            assert not any(has_key(t, v) for t in _texts(data, q.user) for v in values), q
        if q.kind in ("unstated", "never"):
            assert not q.keys


def test_half_the_questions_share_no_content_word_with_what_was_said(data: ChatData) -> None:
    asked = [q for q in data.questions if q.kind in ("said", "changed")]
    people = {p.user: p for p in data.people}
    for q in asked:
        said = [s.text for s in people[q.user].said if s.slot == q.slot]
        assert q.shared == shares_word(q.query, said)
    apart = sum(not q.shared for q in asked) / len(asked)
    assert 0.35 <= apart <= 0.75, apart
    assert sum(q.kind == "changed" for q in asked) >= len(data.people)


def test_no_single_wording_dominates_a_slot(data: ChatData) -> None:
    talk = load_talk()
    for slot in talk.slots:
        texts = [s.text for p in data.people for s in p.said if s.slot == slot.key and not s.change]
        used = Counter(
            next(i for i, t in enumerate(slot.statements) if _worded(t, text)) for text in texts
        )
        assert len(used) >= 3 and max(used.values()) <= 0.6 * len(texts), (slot.key, used)


def _worded(template: str, text: str) -> bool:
    head, _, tail = template.partition("{value}")
    core = text.lower()
    return head.lower().strip(" ,:") in core and tail.lower().strip(" .!,") in core


def test_chats_are_short_dated_on_distinct_days_and_alternate_speakers(data: ChatData) -> None:
    assert [c.when for c in data.chats] == sorted(c.when for c in data.chats)
    for person in data.people:
        theirs = [c for c in data.chats if c.user == person.user]
        assert len(theirs) == data.config.chats
        assert len({data.day_of(c.when) for c in theirs}) == len(theirs)
        for chat in theirs:
            roles = [m["role"] for m in chat.messages]
            assert roles == ["user", "assistant"] * (len(roles) // 2) and 2 <= len(roles) <= 20


def test_the_mem0_quickstart_is_added_as_its_user_would() -> None:
    data = generate(ChatConfig(people=1))
    alice = [c for c in data.chats if c.user == "alice"]
    assert alice[0].user_texts == [load_talk().quickstart.text]
    assert "I'm a vegetarian and allergic to nuts." in alice[1].user_texts
    asked = [q.query for q in data.questions if q.kind == "quickstart"]
    assert asked == ["What are Alice's hobbies?", "Does alice have allergies?",
                     "what food should I avoid?"]  # fmt: skip


def test_sharing_a_word_counts_stems_and_prefixes_but_not_meaning() -> None:
    assert shares_word("Does alice have allergies?", ["I'm allergic to nuts."])
    assert shares_word("Where does Priya live?", ["We've lived in Leeds."])
    assert not shares_word("What should I avoid cooking for them?", ["I'm vegetarian."])


def test_a_section_answers_with_the_whole_value_and_stale_is_any_old_one() -> None:
    moved = Question("changed", "u", "city", "q", ("Lisbon",), ("Leeds",))
    assert score(moved, "- I live in Lisbon now") == score(moved, "lisbon.")
    assert score(moved, "- Lisbonne").answered is False
    hit = score(moved, "- Leeds\n- Lisbon")
    assert hit.answered and hit.stale and not hit.empty
    assert score(moved, "  ").empty


def test_a_tiny_run_scores_every_system_and_bm25_needs_a_shared_word() -> None:
    result = run_chat(ChatConfig(people=2), systems=("reverie-lexical", "bm25"))
    assert [r.name for r in result.runs] == [
        "reverie-lexical before dream", "reverie-lexical after dream", "bm25"
    ]  # fmt: skip
    for run in result.runs:
        figures = run.metrics(result.questions)
        assert all(0.0 <= v <= 1.0 for v in figures.values()), figures
        assert len(run.hits) == len(result.questions)
    bm25 = result.runs[-1].metrics(result.questions)
    assert bm25["answered_unshared"] == 0.0 and bm25["answered_shared"] > 0.5
    assert result.runs[1].counts["cycles"] > 0
    assert {t[1] for t in targets(result)} == {"lexical only: answered ≥ 0.6"}
    json.dumps(result.to_dict())
    out = io.StringIO()
    render_chat(result, Console(file=out, width=220))
    assert "targets" in out.getvalue() and "never-said → empty" in out.getvalue()


def test_a_skipped_system_is_named_with_its_reason() -> None:
    result = run_chat(ChatConfig(people=1), systems=("bm25",))
    result.runs.append(Run("dense", "raw", skipped="needs the embed extra"))
    out = io.StringIO()
    render_chat(result, Console(file=out, width=220))
    assert "skipped dense: needs the embed extra" in out.getvalue()


def test_the_command_dumps_the_data_and_refuses_unknown_systems(tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["bench", "chat", "--people", "2", "--dump", str(tmp_path)])
    assert done.exit_code == 0, done.output
    chats = (tmp_path / "chats.jsonl").read_text(encoding="utf-8").splitlines()
    body = json.loads((tmp_path / "questions.json").read_text(encoding="utf-8"))
    assert len(chats) == 2 * 5 + 2 and len(body["people"]) == 2 and body["questions"]
    assert runner.invoke(app, ["bench", "chat", "--systems", "bm25,elastic"]).exit_code == 2


@pytest.mark.bench
@pytest.mark.timeout(900)
def test_the_full_run_prints_the_table() -> None:
    pytest.importorskip("onnxruntime")
    done = CliRunner().invoke(app, ["bench", "chat"])
    assert done.exit_code == 0, done.output
    print(done.output)
    assert "answered" in done.output and "skipped" not in done.output


def test_fewer_days_than_chats_is_refused() -> None:
    with pytest.raises(InvalidInput, match="days"):
        generate(ChatConfig(chats=5, days=3))
