"""Erasure matches a subject the way a person reads it, whatever its spelling and the database.

A subject reaches the store in many spellings: letter case (``ß`` folds to ``ss``), composed or
decomposed accents, full-width and other compatibility forms. Erasure folds both sides
(:mod:`reverie.text.fold`) on every backend, and PostgreSQL in a ``C`` locale (whose ``ILIKE``
folds ASCII only) finds the same rows as any other. Spellings are generated.
"""

from __future__ import annotations

import random
import unicodedata
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie import Reverie
from reverie.memory.erasure import ForgetRequest
from reverie.store.base import BrainStore
from reverie.store.sql.erasure.scrub import ERASED, Needles
from reverie.store.sqlite import SQLiteStore
from reverie.text.fold import find, fold
from tests.pg import server_url

SUBJECTS = ["Jürgen Straße", "Åsa Øster-Ærø", "josé núñez", "Zoë Çelik"]
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _respell(text: str, rng: random.Random) -> str:
    """One spelling of ``text`` a person reads as the same: each character in a random case,
    composed or decomposed, sometimes full-width; ``ß`` sometimes ``ss``/``SS``/``ẞ``."""
    out = []
    for letter in text:
        if letter == "ß":
            out.append(rng.choice(["ß", "ss", "SS", "ẞ", "sS"]))
            continue
        ch = rng.choice([letter.lower(), letter.upper()]) if len(letter.upper()) == 1 else letter
        if ch.isascii() and ch.isalpha() and rng.random() < 0.2:
            ch = chr(ord(ch) + 0xFEE0)  # FULLWIDTH LATIN letter
        out.append(unicodedata.normalize(rng.choice(["NFC", "NFD"]), ch))
    return "".join(out)


def spellings(text: str, n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [_respell(text, rng) for _ in range(n)]


@settings(max_examples=300, deadline=None)
@given(
    subject=st.sampled_from(SUBJECTS),
    seed=st.integers(0, 2**32),
    before=st.text(max_size=12),
    after=st.text(max_size=12),
)
def test_every_generated_spelling_is_found_and_scrubbed(
    subject: str, seed: int, before: str, after: str
) -> None:
    (spelling,) = spellings(subject, 1, seed)
    text = f"{before}{spelling}{after}"
    needles = Needles([subject])
    assert needles.hit(text)
    scrubbed = needles.scrub(text)
    assert fold(subject) not in fold(scrubbed) and ERASED in scrubbed
    assert find(text, [subject])  # found in the original's own positions


def test_text_around_a_match_is_kept_and_accents_go_with_their_letter() -> None:
    text = "ask Ju\u0308rgen STRASSE or Zoe"
    assert Needles(["jürgen straße"]).scrub(text) == f"ask {ERASED} or Zoe"
    assert Needles(["jürgen"]).scrub("Ju\u0308rgen") == ERASED  # no stray accent left
    assert not Needles(["strasse"]).hit("STRASSE\u0301")  # É is another letter than E
    assert Needles(["jürgen"]).scrub("JÜRGENS") == f"{ERASED}S"
    assert not Needles(["jürgen"]).hit("Jurgen")  # a different letter is a different word


def test_the_receipt_keeps_one_digest_for_every_spelling() -> None:
    digests = {
        ForgetRequest(subject=s).recorded()["subject_sha256"]
        for s in ["Jürgen Straße", "JÜRGEN STRASSE", "ju\u0308rgen strasse", "Ｊürgen straße"]
    }
    assert len(digests) == 1


@contextmanager
def _c_locale_store() -> Iterator[BrainStore]:
    """PostgreSQL in a database whose LC_CTYPE is ``C``: ``ILIKE`` folds ASCII letters only."""
    import psycopg  # noqa: PLC0415 (extra: postgres)

    from reverie.store.postgres import PostgresStore  # noqa: PLC0415 (extra: postgres)

    base = server_url()
    name = f"c_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(
            f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"
        )
    url = base.rsplit("/", 1)[0] + "/" + name
    try:
        with psycopg.connect(url, autocommit=True) as c:
            assert not c.execute("SELECT 'Ü' ILIKE 'ü'").fetchone()[0]  # the locale's limit
            c.execute("CREATE EXTENSION IF NOT EXISTS vector")
        store = PostgresStore(url)
        store.migrate()
        try:
            yield store
        finally:
            store.close()
    finally:
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgres", "postgres-c-locale"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BrainStore]:
    if request.param == "sqlite":
        store = SQLiteStore(tmp_path / "s.db")
        store.migrate()
        yield store
        store.close()
    elif request.param == "postgres":
        from tests.pg import postgres_store  # noqa: PLC0415 (extra: postgres)

        with postgres_store() as pg:
            yield pg
    else:
        with _c_locale_store() as pg:
            yield pg


def _episodes(subject: str, seed: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for n, spelling in enumerate(spellings(subject, 10, seed)):
        where = n % 3
        out.append(
            {
                "id": f"m{n}",
                "scope": "acme/coder",
                "created_at": (T0 + timedelta(hours=n)).isoformat(),
                "situation": f"the deploy for {spelling} failed" if where == 0 else "deploy failed",
                "action": "rolled back and retried the deploy",
                "outcome": "failure",
                "lesson": f"ask {spelling} before deploying" if where == 1 else "check first",
                "metadata": {"owner": spelling} if where == 2 else {},
            }
        )
    out += [
        {
            "id": f"k{n}",
            "scope": "acme/coder",
            "created_at": (T0 + timedelta(hours=20 + n)).isoformat(),
            "situation": "the deploy for Jurgen Strase failed",  # other letters: another name
            "action": "rolled back and retried the deploy",
            "outcome": "failure",
        }
        for n in range(3)
    ]
    return out


@pytest.mark.parametrize("subject", SUBJECTS[:2])
def test_erasure_finds_every_spelling_on_every_backend(any_store: BrainStore, subject: str) -> None:
    rv = Reverie(any_store, embedder=None)
    rv.ingest(_episodes(subject, seed=len(subject)))
    rv.dream("acme/coder", now=T0 + timedelta(days=1))
    receipt = rv.forget(subject=subject.upper(), apply=True, now=T0 + timedelta(days=2))
    assert receipt.details["episodes"] == sorted(f"m{n}" for n in range(10))
    left = rv.episodes(
        [f"k{n}" for n in range(3)] + [f"m{n}" for n in range(10)], tenant="acme", raw=True
    )
    assert [e.id for e in left] == ["k0", "k1", "k2"]
    folded = fold(subject)
    for page in rv.pages("acme/coder", status=None):
        for rev in rv.revisions(page.id):
            assert folded not in fold(rev.model_dump_json())
    found = rv.recall(f"deploy {subject}", "acme/coder")
    assert folded not in fold(found.text)
