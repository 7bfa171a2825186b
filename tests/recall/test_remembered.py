"""What recall remembers between recalls, and that remembering it never changes a section.

A claim unit's citations are the claim's ids, in order, with the claim's set of them remembered
(a claim citing thousands is asked about the few candidates cheaply); what a text states as
values, and an episode's text redacted, are worked out once per text. Either worked out again,
the sections are the same."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reverie import Reverie
from reverie.bench.core import NOW, SCOPE, _config, _start
from reverie.bench.synth import synthetic_episodes, synthetic_queries
from reverie.models import Claim, ClaimRole, Page, PageKind, PageStatus, Revision
from reverie.recall import answers, units
from reverie.recall.units import Citations, cited_by_claims, claim_cites, claim_item
from reverie.text.slots import SlotValue, slot_of

EPISODES = 3000


def _page(claim: Claim) -> Page:
    revision = Revision(
        page_id="pg_1", number=1, hash="sha256:" + "0" * 64, title="Deploys",
        kind=PageKind.WARNING, claims=(claim,), confidence=0.8, status=PageStatus.ACTIVE,
        created_at=NOW,
    )  # fmt: skip
    return Page(
        id="pg_1", scope=SCOPE, topic_key="t", revision=revision, created_at=NOW, updated_at=NOW
    )


def test_a_claim_unit_cites_the_claims_episodes_in_order_as_a_plain_list() -> None:
    ids = tuple(f"ep_{i}" for i in range(5000, 0, -1))
    claim = Claim(text="Pin the runner image.", episode_ids=ids, role=ClaimRole.LESSON)
    unit = claim_item(_page(claim), claim, 1.0)
    assert unit.citations == list(ids)
    assert type(unit.model_dump()["citations"]) is list
    assert unit.model_dump()["citations"] == list(ids)
    assert unit.model_copy(update={"score": 2.0}).citations == list(ids)


def test_covered_episodes_are_the_same_through_the_claims_set_or_its_list() -> None:
    claim = Claim(text="Pin the image.", episode_ids=("a", "b", "c"), role=ClaimRole.FIX)
    unit = claim_item(_page(claim), claim, 1.0)
    plain = unit.model_copy(update={"citations": list(unit.citations)})
    among = {"b", "c", "z"}
    assert isinstance(unit.citations, Citations) and not isinstance(plain.citations, Citations)
    assert cited_by_claims([unit], among) == cited_by_claims([plain], among) == {"b", "c"}


def test_a_claims_set_is_its_own_never_an_equal_claims_of_other_ids() -> None:
    first = Claim(text="Same words.", episode_ids=("a",))
    other = Claim(text="Same words.", episode_ids=("b",))
    assert claim_cites(first) == {"a"} and claim_cites(other) == {"b"}


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reverie]:
    """A model-free brain as ``bench core`` builds it: a few dozen pages whose claims cite
    tens to hundreds of episodes each."""
    path: Path = tmp_path_factory.mktemp("citations") / "brain.db"
    rows = list(synthetic_episodes(EPISODES, seed=0, start=_start(EPISODES)))
    with Reverie.open(path, config=_config(EPISODES), embedder=None) as rv:
        rv.ingest(rows, now=NOW)
        rv.dream(SCOPE, now=NOW)
        yield rv


def _sections(rv: Reverie) -> list[str]:
    return [
        rv.recall(q, SCOPE, 400, now=NOW).model_dump_json() for q in synthetic_queries(60, seed=3)
    ]


def _forgotten() -> None:
    units._CLAIM_CITES.clear()
    for remembered in (answers._slot, answers._value_words, answers._slot_values, units._redacted):
        remembered.cache_clear()


def test_sections_are_the_same_without_the_remembered_sets_and_statements(
    brain: Reverie, monkeypatch: pytest.MonkeyPatch
) -> None:
    _forgotten()
    fast = _sections(brain)
    warm = _sections(brain)  # every set and statement remembered from the first pass
    with monkeypatch.context() as m:  # the slow way: plain lists, every text parsed again
        m.setattr(units, "_citations", lambda claim: list(claim.episode_ids))
        m.setattr(answers, "_slot", answers.slot_of)
        m.setattr(answers, "_value_words", answers._value_words.__wrapped__)
        m.setattr(answers, "_slot_values", answers._slot_values.__wrapped__)
        m.setattr(units, "_redacted", units.redact)
        slow = _sections(brain)
    assert any('"kind":"page"' in s for s in fast)  # claims were recalled
    assert fast == warm == slow


def _statements_read_again(text: str, least: int) -> list[SlotValue]:
    out = []
    for sentence in answers._CLAUSE.split(text):
        if not answers._DATED.search(sentence) and (value := slot_of(sentence, least)):
            out.append(value)
    return out


def _value_words_read_again(text: str) -> set[str]:
    said = [slot_of(sentence, least=1) for sentence in answers._CLAUSE.split(text)]
    values = {v for s in said if s is not None for v in s.value.split()}
    return {w for v in values for w in answers._VALUE_WORD.findall(v.casefold())}


def test_remembered_statements_are_what_reading_the_text_again_gives(brain: Reverie) -> None:
    texts = [e.text for e in brain.store.recent_episodes(SCOPE, 400)]
    texts += [c.text for p in brain.store.pages(SCOPE) for c in p.revision.claims]
    texts += ["Replies go to #ops-alerts now.", "The db listens on port 5433.", "v2 is out"]
    _forgotten()
    for _ in range(2):  # read, then remembered
        for text in texts:
            for least in (1, 2):
                assert list(answers._slot_values(text, least)) == _statements_read_again(
                    text, least
                )
            assert answers._value_words(text) == _value_words_read_again(text)
