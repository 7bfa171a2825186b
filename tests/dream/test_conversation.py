"""Conversation on every surface: turns by who speaks, and what a person says once is kept.

The sentences here are written for these tests, in wordings and domains the benchmarks do not
use, so the detection is tested as grammar, not as vocabulary.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from reverie import Reverie
from reverie.adapters import parse
from reverie.integrations.hook import AgentHook
from reverie.models import Episode, PageKind, PageStatus, Scope
from reverie.text.stated import durable_statements
from reverie.text.turns import is_turn, said, speaker_of

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALICE = "default/default/alice"

DURABLE = [
    "I'm a vegetarian and allergic to nuts.",
    "I moved to Lisbon in the spring.",
    "Please reply in Spanish.",
    "My daughter is called Ana.",
    "I use neovim with a handful of plugins.",
    "Our staging db is on db2.internal.",
    "I now work at Stripe.",
    "Oh, we keep Thursdays free of meetings.",
    "My grandmother's name is Odile.",
    "I don't eat shellfish.",
    "I'd prefer answers without emoji.",
    "We deploy the billing service from a Jenkins box.",
    "I'm training for the Ljubljana marathon.",
    "Call me Bex.",
    "I've been a beekeeper for six years.",
    "Since we're vegan, skip the cheese course.",
    "Now that we live in Ghent, the commute is short.",
    "Long story, but I work for a bakery.",
    "I've relocated to Quito for the year.",
    "Please answer me in Italian.",
    "I'd rather you reply in Italian.",
    "My manager, Dana, signed off on the plan.",
    "Rex, our dog, ate the cable yesterday.",
    "Juno (my cat) is asleep on the router.",
]
NOT_DURABLE = [
    "How are you today?",
    "What is the capital of Peru",
    "Thanks so much!",
    "Hi there!",
    "Haha, nice.",
    "I'm so relieved it worked.",
    "I think that's fine.",
    "I know what you mean.",
    "I'm doing well.",
    "I went to the bakery yesterday.",
    "I found a great trail last weekend.",
    "Suggest some online courses.",
    "Can you summarise this article for me.",
    "I'm proud of you.",
    "I'll let you know.",
    "Since you asked, here it is.",
    "As I said, it depends.",
    "Because I'm so tired, I'll skip it.",
]


@pytest.mark.parametrize("sentence", DURABLE)
def test_a_durable_statement_is_read(sentence: str) -> None:
    assert [s.sentence for s in durable_statements(sentence)] == [sentence]


@pytest.mark.parametrize("sentence", NOT_DURABLE)
def test_questions_greetings_thanks_and_chit_chat_are_not(sentence: str) -> None:
    assert durable_statements(sentence) == []


def test_a_two_letter_title_does_not_end_a_sentence() -> None:
    """ "Dr. Okonkwo" is one name: an excerpt cut after "Dr." loses who it was."""
    from reverie.text.stated import sentences  # noqa: PLC0415

    text = "On call from today: Dr. Okonkwo. We moved to St. Louis! Call Bob. He knows."
    assert sentences(text) == [
        "On call from today: Dr. Okonkwo.", "We moved to St. Louis!", "Call Bob.", "He knows."
    ]  # fmt: skip


@pytest.mark.parametrize("text", ["metric pls, always", "always", "Always.", "never, ever"])
def test_a_bare_adverb_of_standing_is_read_without_failing(text: str) -> None:
    """ "always" with nothing after it is no instruction, and reading it raises nothing."""
    assert durable_statements(text) == []


@pytest.mark.parametrize(
    ("earlier", "later", "value"),
    [
        ("I live in Porto.", "Last month I moved to Gdansk.", "Gdansk"),
        ("I work for a small bakery.", "I joined Vercel, finally!", "Vercel"),
        ("Please answer in French.", "From now on, reply in Dutch.", "Dutch"),
        ("My cat is called Miso.", "My cat's name is Tofu.", "Tofu"),
        ("My employer is a tiny print shop.", "I took a job at Ferrovia.", "Ferrovia"),
        ("I work for a logistics firm.", "I've accepted an offer from Mareva.", "Mareva"),
        ("My home town is Ghent.", "We relocated to Braga.", "Braga"),
    ],
)
def test_one_valued_relations_share_a_slot(earlier: str, later: str, value: str) -> None:
    (a,) = durable_statements(earlier)
    (b,) = durable_statements(later)
    assert a.single and b.single and a.attribute == b.attribute
    assert b.value == value


@pytest.mark.parametrize(
    ("sentence", "attribute", "value"),
    [
        ("Now that we live in Ghent, the commute is short.", "lives in", "Ghent"),
        ("I've relocated to Quito for the year.", "lives in", "Quito"),
        ("Long story, but I work for a bakery.", "works at", "a bakery"),
        ("I'd rather you reply in Italian.", "replies in", "Italian"),
        ("Please answer me in Italian.", "replies in", "Italian"),
        ("My manager, Dana, signed off on the plan.", "manager", "Dana"),
        ("Rex, our dog, ate the cable yesterday.", "dog", "Rex"),
        ("Juno (my cat) is asleep on the router.", "cat", "Juno"),
    ],
)
def test_a_relation_said_inside_a_longer_sentence_is_read(
    sentence: str, attribute: str, value: str
) -> None:
    # a subordinate clause, a conjunction, a perfect tense, an instruction worded as a wish, a
    # name set beside what it is to the speaker (an apposition holds whatever the day's news)
    (found,) = durable_statements(sentence)
    assert (found.attribute, found.value, found.single) == (attribute, value, True)


def test_other_statements_accumulate() -> None:
    (a,) = durable_statements("I use neovim.")
    (b,) = durable_statements("I use tmux.")
    assert not a.single and a.attribute != b.attribute


def test_a_preference_is_marked() -> None:
    (wish,) = durable_statements("I'd like shorter answers.")
    (fact,) = durable_statements("I keep bees.")
    assert wish.preference and not fact.preference


def _pages(rv: Reverie, scope: str = ALICE) -> list:
    return rv.store.pages(Scope.parse(scope), None)


def test_the_mem0_quickstart_keeps_each_statement() -> None:
    with Reverie.open(":memory:") as rv:
        rv.add(
            "I am working on improving my tennis skills. Suggest some online courses.",
            user_id="alice",
            now=T0,
        )
        messages = [
            {"role": "user", "content": "I'm a vegetarian and allergic to nuts."},
            {"role": "assistant", "content": "Noted."},
        ]
        rv.add(messages, user_id="alice", now=T0 + timedelta(minutes=1))
        rv.dream(ALICE, now=T0 + timedelta(hours=1))
        statements = [
            p for p in _pages(rv) if p.kind in (PageKind.FACT, PageKind.PREFERENCE)
            and p.topic_key.startswith("fact|")
        ]  # fmt: skip
        titles = sorted(p.title for p in statements)
        assert titles == [
            "user: I am working on improving my tennis skills.",
            "user: I'm a vegetarian and allergic to nuts.",
        ]
        assert all(p.citations for p in statements)
        for word in ("allergic", "vegetarian", "tennis"):
            found = rv.search(word, user_id="alice", now=T0 + timedelta(hours=2))
            assert any(word in m.memory.lower() for m in found), word


def test_a_later_statement_supersedes_and_as_of_answers_the_past() -> None:
    with Reverie.open(":memory:") as rv:
        rv.add("I work at a seed-stage robotics firm called Ketl.", user_id="alice", now=T0)
        rv.dream(ALICE, now=T0 + timedelta(hours=1))
        later = T0 + timedelta(days=10)
        rv.add([{"role": "user", "content": "News: I now work at Stripe."}], user_id="alice",
               now=later)  # fmt: skip
        rv.dream(ALICE, now=later + timedelta(hours=1))
        runs = sorted(
            (p for p in _pages(rv) if p.topic_key.startswith("fact|user|works at")),
            key=lambda p: p.revision.valid_from,
        )
        assert [p.status for p in runs] == [PageStatus.SUPERSEDED, PageStatus.ACTIVE]
        assert runs[0].revision.valid_until == later
        now = later + timedelta(days=1)
        current = rv.recall("where does the user work", ALICE, 400, now=now).text
        assert "Stripe" in current and "Ketl" not in current
        past = rv.recall(
            "where does the user work", ALICE, 400, now=now, as_of=T0 + timedelta(days=1)
        )
        assert "Ketl" in past.text


def test_the_chat_adapter_names_who_speaks() -> None:
    line = (
        '{"messages": [{"role": "user", "name": "Rui", "content": "I keep bees."},'
        ' {"role": "assistant", "content": "Lovely."}, {"role": "user", "content": "ok"}]}'
    )
    items = parse("openai-chat", [(1, line)], scope=Scope.parse("a/b")).items
    eps = [Episode.parse({**i, "scope": "a/b"}) for i in items]
    assert [speaker_of(e) for e in eps] == ["Rui", "user"]
    assert [e.metadata["role"] for e in eps] == ["user", "user"]
    assert said(eps[0]) == "I keep bees." and all(is_turn(e) for e in eps)


def test_a_turn_that_ran_tools_is_a_task_not_a_dialogue_turn() -> None:
    base = {"scope": "a/b", "situation": "I use pnpm here.", "metadata": {"role": "user"}}
    assert is_turn(Episode.parse(base))
    assert not is_turn(Episode.parse({**base, "tools": ["bash"]}))
    assert not is_turn(Episode.parse({**base, "metadata": {}}))  # no one speaks


def test_a_category_alone_does_not_make_a_dialogue() -> None:
    ep = Episode.parse({"scope": "a/b", "situation": "x: hello", "category": "conversation"})
    assert not is_turn(ep)


def test_an_agent_hook_turn_is_the_users_word() -> None:
    with Reverie.open(":memory:") as rv:
        hook = AgentHook(rv, ALICE)
        with hook.turn("Our CI runs on a self-hosted Buildkite agent. Why is it slow?") as t:
            t.succeeded("Checked the agent's queue.")
        rv.dream(ALICE, now=datetime.now(UTC) + timedelta(hours=1))
        titles = {p.title for p in _pages(rv)}
        assert "user: Our CI runs on a self-hosted Buildkite agent." in titles


def test_before_a_dream_the_newest_statement_answers_for_an_older_one() -> None:
    # the question matches the older wording, not the newer one: the newer still answers
    with Reverie.open(":memory:") as rv:
        rv.add("I work for Ketl, a robotics firm, as their firmware engineer.", user_id="alice",
               now=T0)  # fmt: skip
        rv.add([{"role": "user", "content": "Big day: I've accepted an offer from Mareva."}],
               user_id="alice", now=T0 + timedelta(days=3))  # fmt: skip
        now = T0 + timedelta(days=4)
        section = rv.recall("which firm employs the firmware engineer", ALICE, 400, now=now).text
        assert "Mareva" in section and "Ketl" not in section
        past = rv.recall("which firm employs the firmware engineer", ALICE, 400, now=now,
                         as_of=T0 + timedelta(days=1)).text  # fmt: skip
        assert "Ketl" in past and "Mareva" not in past
