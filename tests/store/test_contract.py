"""The store contract: every backend passes these, against a real database."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from reverie.errors import Conflict, NotFound
from reverie.models import (
    Claim,
    Cycle,
    CycleReport,
    CycleStatus,
    PageKind,
    PageStatus,
    Revision,
    Scope,
    revision_hash,
)
from reverie.store.base import BrainStore, Changeset, PageWrite
from reverie.store.sqlite import SQLiteStore
from tests.conftest import EpisodeFactory

NOW = datetime(2026, 11, 5, tzinfo=UTC)
SCOPE = Scope.parse("acme/coder")
OTHER = Scope.parse("acme/other")


def revision(
    page_id: str,
    number: int,
    episode_ids: list[str],
    title: str = "Deploys time out",
    status: PageStatus = PageStatus.ACTIVE,
) -> Revision:
    claims = (Claim(text=f"{title}: claim {number}", episode_ids=tuple(episode_ids)),)
    fields = {
        "title": title,
        "kind": PageKind.WARNING,
        "claims": claims,
        "confidence": 0.8,
        "status": status,
        "valid_from": None,
        "valid_until": None,
        "superseded_by": None,
    }
    return Revision(
        page_id=page_id, number=number, hash=revision_hash(**fields), created_at=NOW, **fields
    )


def changeset(
    scope: Scope,
    expected: int,
    checkpoint: int,
    marks: list[str],
    writes: list[PageWrite],
    cycle_id: str = "cy_1",
) -> Changeset:
    report = CycleReport(
        cycle_id=cycle_id, scope=scope, status=CycleStatus.COMMITTED, started_at=NOW
    )
    cycle = Cycle(
        id=cycle_id,
        scope=scope,
        status=CycleStatus.COMMITTED,
        started_at=NOW,
        finished_at=NOW,
        checkpoint_before=expected,
        checkpoint_after=checkpoint,
        report=report,
    )
    return Changeset(
        scope=scope,
        expected_checkpoint=expected,
        checkpoint=checkpoint,
        page_writes=writes,
        marks=marks,
        mark_cycle=cycle_id,
        cycle=cycle,
        at=NOW,
    )


def test_migrations_are_recorded_and_idempotent(store: BrainStore) -> None:
    assert store.migrate() == []
    assert store.migrations()[0] == "0001_initial" and "0002_model_cache" in store.migrations()
    assert store.integrity_check() == "ok"


def test_append_assigns_increasing_seq_and_is_idempotent(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = [make_episode() for _ in range(5)]
    stored = store.append(eps)
    seqs = [e.seq for e in stored]
    assert seqs == sorted(seqs) and len(set(seqs)) == 5
    assert store.append(eps) == []  # same ids, same content: skipped
    more = store.append([make_episode()])
    assert more[0].seq is not None and more[0].seq > max(s for s in seqs if s is not None)


def test_same_id_other_content_is_a_conflict_and_stores_nothing(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    ep = make_episode()
    store.append([ep])
    clash = ep.model_copy(update={"action": "something else"})
    fresh = make_episode()
    with pytest.raises(Conflict):
        store.append([fresh, clash])
    with pytest.raises(NotFound):
        store.episode(fresh.id, tenant="acme")


def test_scan_is_seq_ascending_scoped_and_skips_consolidated(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    mine = store.append([make_episode() for _ in range(4)])
    store.append([make_episode(scope="acme/other")])
    scanned = store.scan(SCOPE, 0, 10)
    assert [e.id for e in scanned] == [e.id for e in mine]
    assert [e.id for e in store.scan(SCOPE, mine[1].seq or 0, 10)] == [e.id for e in mine[2:]]
    store.commit(changeset(SCOPE, 0, mine[1].seq or 0, [mine[0].id], []))
    assert mine[0].id not in {e.id for e in store.scan(SCOPE, 0, 10)}
    assert store.marked("cy_1") == [mine[0].seq]


@pytest.mark.parametrize(
    "fail_at", ["checkpoint-checked", "pages-written", "episodes-marked", "cycle-recorded"]
)
def test_commit_is_all_or_nothing(
    store: BrainStore, make_episode: EpisodeFactory, fail_at: str
) -> None:
    eps = store.append([make_episode() for _ in range(3)])
    write = PageWrite(
        SCOPE, "deploy|kubectl|TimeoutError", revision("pg_a", 1, [e.id for e in eps]), None
    )

    def boom(step: str) -> None:
        if step == fail_at:
            raise RuntimeError("injected")

    with pytest.raises(RuntimeError):
        store.commit(
            changeset(SCOPE, 0, eps[-1].seq or 0, [e.id for e in eps], [write]), on_step=boom
        )
    assert store.checkpoint(SCOPE) == 0
    assert store.pages(SCOPE) == []
    assert len(store.scan(SCOPE, 0, 10)) == 3
    assert store.cycles(SCOPE) == []
    assert store.integrity_check() == "ok"


def test_commit_refuses_stale_checkpoint_revision_and_double_marks(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = store.append([make_episode() for _ in range(2)])
    ids = [e.id for e in eps]
    first = PageWrite(SCOPE, "t", revision("pg_a", 1, ids), None)
    store.commit(changeset(SCOPE, 0, 1, ids[:1], [first]))
    with pytest.raises(Conflict):  # checkpoint moved on
        store.commit(changeset(SCOPE, 0, 2, ids[1:], [], cycle_id="cy_2"))
    with pytest.raises(Conflict):  # page already at revision 1
        store.commit(
            changeset(
                SCOPE, 1, 2, [], [PageWrite(SCOPE, "t", revision("pg_a", 1, ids), None)], "cy_3"
            )
        )
    with pytest.raises(Conflict):  # episode already consolidated
        store.commit(changeset(SCOPE, 1, 2, ids, [], cycle_id="cy_4"))
    assert store.checkpoint(SCOPE) == 1
    assert store.revisions("pg_a")[-1].number == 1


def test_revisions_are_kept_and_page_points_at_the_latest(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    eps = store.append([make_episode() for _ in range(2)])
    store.commit(
        changeset(
            SCOPE,
            0,
            1,
            [eps[0].id],
            [PageWrite(SCOPE, "t", revision("pg_a", 1, [eps[0].id]), None)],
        )
    )
    second = revision("pg_a", 2, [e.id for e in eps], title="Deploys time out often")
    store.commit(
        changeset(SCOPE, 1, 2, [eps[1].id], [PageWrite(SCOPE, "t", second, 1)], cycle_id="cy_2")
    )
    page = store.page("pg_a")
    assert page.revision.number == 2 and page.title == "Deploys time out often"
    revs = store.revisions("pg_a")
    assert [r.number for r in revs] == [1, 2]
    assert revs[0].hash != revs[1].hash and revs[0].citations == [eps[0].id]
    assert store.pages_by_topic(SCOPE, ["t"])["t"].id == "pg_a"


def test_search_is_scoped_inside_the_query(store: BrainStore, make_episode: EpisodeFactory) -> None:
    mine = store.append([make_episode(situation="rotating the vault token")])
    theirs = store.append([make_episode(scope="acme/other", situation="rotating the vault token")])
    store.commit(
        changeset(
            SCOPE,
            0,
            0,
            [],
            [
                PageWrite(
                    SCOPE, "t", revision("pg_a", 1, [mine[0].id], "Vault token rotation"), None
                )
            ],
        )
    )
    store.commit(
        changeset(
            OTHER,
            0,
            0,
            [],
            [
                PageWrite(
                    OTHER, "t", revision("pg_b", 1, [theirs[0].id], "Vault token rotation"), None
                )
            ],
            "cy_2",
        )
    )
    eps = store.search_episodes(SCOPE, ["vault", "token"], 10)
    assert [e.id for e, _ in eps] == [mine[0].id]
    pages = store.search_pages(SCOPE, ["vault"], 10)
    assert [p.id for p, _ in pages] == ["pg_a"]
    assert all(score > 0 for _, score in pages + eps)  # type: ignore[operator]
    assert store.search_pages(SCOPE, ["weather"], 10) == []


def test_a_search_by_status_finds_only_the_scopes_pages_of_that_status(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    """A scope with no page of the statuses asked finds none, though another scope's page of
    that status, or its own page of another, holds the words; once it has one, it finds it."""
    mine = store.append([make_episode(situation="rotating the vault token")])
    theirs = store.append([make_episode(scope="acme/other", situation="rotating the vault token")])
    old = revision("pg_b", 1, [theirs[0].id], "Vault token rotation", PageStatus.SUPERSEDED)
    store.commit(changeset(OTHER, 0, 0, [], [PageWrite(OTHER, "t", old, None)], "cy_2"))
    current = revision("pg_a", 1, [mine[0].id], "Vault token rotation")
    store.commit(changeset(SCOPE, 0, 0, [], [PageWrite(SCOPE, "t", current, None)]))
    superseded = ("superseded",)
    assert store.search_pages(SCOPE, ["vault"], 10, superseded) == []
    assert [p.id for p, _ in store.search_pages(OTHER, ["vault"], 10, superseded)] == ["pg_b"]
    both = ("active", "superseded")
    assert [p.id for p, _ in store.search_pages(SCOPE, ["vault"], 10, both)] == ["pg_a"]
    replaced = revision("pg_a", 2, [mine[0].id], "Vault token rotation", PageStatus.SUPERSEDED)
    store.commit(changeset(SCOPE, 0, 0, [], [PageWrite(SCOPE, "t", replaced, 1)], "cy_3"))
    assert [p.id for p, _ in store.search_pages(SCOPE, ["vault"], 10, superseded)] == ["pg_a"]
    assert store.search_pages(SCOPE, ["vault"], 10) == []


def test_recalls_page_reads_decode_a_revision_once_while_it_is_current(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    """Recall's page reads hand back the claims decoded before (the same objects, whose
    citation sets recall remembers) while the revision is current, and the new revision's once
    the page changes."""
    eps = store.append([make_episode(situation="rotating the vault token")])
    first = revision("pg_a", 1, [eps[0].id], "Vault token rotation")
    store.commit(changeset(SCOPE, 0, 0, [], [PageWrite(SCOPE, "t", first, None)]))
    read = store.pages_by_id(SCOPE, ["pg_a"])["pg_a"]
    again = store.pages_by_id(SCOPE, ["pg_a"])["pg_a"]
    found = store.search_pages(SCOPE, ["vault"], 5)[0][0]
    assert read.revision.claims is again.revision.claims is found.revision.claims
    second = revision("pg_a", 2, [eps[0].id], "Vault token rotation, twice a year")
    store.commit(changeset(SCOPE, 0, 0, [], [PageWrite(SCOPE, "t", second, 1)], "cy_2"))
    now = store.pages_by_id(SCOPE, ["pg_a"])["pg_a"]
    assert (now.revision.number, now.revision.claims) == (2, second.claims)
    assert store.search_pages(SCOPE, ["vault"], 5)[0][0].revision.claims is now.revision.claims


def test_stats_and_scopes(store: BrainStore, make_episode: EpisodeFactory) -> None:
    store.append([make_episode(), make_episode(scope="acme/other")])
    assert {s.key for s in store.scopes()} == {"acme/coder", "acme/other"}
    assert store.stats(SCOPE).episodes == 1
    assert store.stats().episodes == 2
    assert {s.key for s in store.pending_scopes()} == {"acme/coder", "acme/other"}


def test_sqlite_file_settings(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    store.migrate()
    pragma = store.read  # the store's own connection, as the engine uses it
    assert pragma("PRAGMA journal_mode")[0][0] == "wal"
    assert pragma("PRAGMA foreign_keys")[0][0] == 1
    assert pragma("PRAGMA busy_timeout")[0][0] >= 5000
    tables = {r[0] for r in pragma("SELECT name FROM sqlite_master")}
    assert {"episodes_fts", "pages_fts", "_migrations"} <= tables
    store.close()


def test_first_stored_is_when_the_caller_says_it_received_them_not_the_episode_time(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    old = make_episode(created_at=datetime(2020, 1, 1, tzinfo=UTC))
    received = datetime(2026, 6, 1, 12, 30, tzinfo=UTC)
    store.append([old, make_episode()], at=received)
    assert store.first_stored([old.id, "ep-none"], tenant="acme") == received  # not 2020
    assert (
        store.first_stored(["ep-none"], tenant="acme") is None
        and store.first_stored([], tenant="acme") is None
    )


def test_an_append_without_a_time_records_its_newest_episode_not_the_store_clock(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    older = make_episode(created_at=datetime(2020, 1, 1, tzinfo=UTC))
    newer = make_episode(created_at=datetime(2021, 3, 4, 5, 6, tzinfo=UTC))
    store.append([older, newer])
    assert store.first_stored([older.id], tenant="acme") == newer.created_at


GLOBEX = Scope.parse("globex/bot")


def test_an_episode_id_is_its_tenant_s_own(store: BrainStore, make_episode: EpisodeFactory) -> None:
    ours = make_episode(id="b1", situation="acme's deploy")
    theirs = make_episode(id="b1", scope=GLOBEX.key, situation="globex's login")
    store.append([ours])
    stored = store.append([theirs, make_episode(id="b2", scope=GLOBEX.key)])
    assert [e.id for e in stored] == ["b1", "b2"]  # stored as a fresh id is: no conflict
    assert store.episode("b1", tenant="acme").situation == "acme's deploy"
    assert store.episode("b1", tenant="globex").situation == "globex's login"
    assert [e.scope for e in store.episodes(["b1", "b2"], tenant="acme")] == [SCOPE]
    assert [e.scope for e in store.episodes(["b1", "b2"], tenant="globex")] == [GLOBEX, GLOBEX]
    with pytest.raises(NotFound) as missing:
        store.episode("b2", tenant="acme")
    assert str(missing.value) == "no episode b2"  # what an id nobody has gets
    assert store.first_stored(["b2"], tenant="acme") is None
    assert store.first_stored(["b2"], tenant="globex") is not None
    assert store.append([theirs]) == []  # within its tenant an id still means one episode
    with pytest.raises(Conflict):
        store.append([theirs.model_copy(update={"action": "something else"})])
    both = store.append([make_episode(id="b3"), make_episode(id="b3", scope=GLOBEX.key)])
    assert sorted(e.scope.key for e in both) == ["acme/coder", "globex/bot"]  # one batch


def test_a_citation_names_an_episode_of_its_page_s_tenant(
    store: BrainStore, make_episode: EpisodeFactory
) -> None:
    [ours] = store.append([make_episode(id="b1")])
    [theirs] = store.append([make_episode(id="b1", scope=GLOBEX.key, situation="globex's")])
    store.append([make_episode(id="g-only", scope=GLOBEX.key)])
    mine = PageWrite(SCOPE, "t", revision("pg_a", 1, ["b1"]), None)
    store.commit(changeset(SCOPE, 0, ours.seq or 0, ["b1"], [mine]))
    assert store.episode("b1", tenant="globex").consolidated_in is None  # marks stay in scope
    their_page = PageWrite(GLOBEX, "t", revision("pg_g", 1, ["b1"]), None)
    store.commit(changeset(GLOBEX, 0, theirs.seq or 0, ["b1"], [their_page], "cy_g"))
    assert store.episode("b1", tenant="globex").consolidated_in == "cy_g"
    assert store.pages_citing(SCOPE, ["b1"]) == {"b1": ["pg_a"]}
    assert store.pages_citing(GLOBEX, ["b1"]) == {"b1": ["pg_g"]}
    stray = PageWrite(SCOPE, "u", revision("pg_s", 1, ["g-only"]), None)  # globex's id only
    cp = store.checkpoint(SCOPE)
    with pytest.raises(Conflict, match="not stored in tenant"):
        store.commit(changeset(SCOPE, cp, cp, [], [stray], "cy_s"))
    with pytest.raises(NotFound):
        store.page("pg_s")
