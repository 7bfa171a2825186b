"""``reverie bench agent --from DIR``: a set on disk, written by anyone, is read back and scored
by the same rules as a generated world; what cannot be scored is refused with the file and line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie.bench.agent import run_agent
from reverie.bench.agent_files import dump, load
from reverie.bench.agent_gen import GenConfig, generate
from reverie.cli.app import app
from reverie.errors import InvalidInput


def _episode(ident: str, when: str, scope: str = "acme/web/crawler", **fields: str) -> dict:
    return {"id": ident, "scope": scope, "created_at": when, **fields}


def _write(directory: Path, episodes: list[dict], probes: list[dict], **extra: object) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(ep) for ep in episodes]
    (directory / "episodes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    body = {"config": {"domain": "crawl", "seed": 7}, "probes": probes, **extra}
    (directory / "probes.json").write_text(json.dumps(body), encoding="utf-8")
    return directory


def _crawl_set(directory: Path) -> Path:
    """A stranger's set: one fix learned three times, one fact changed, a never question."""
    episodes = []
    for day in range(1, 4):
        episodes.append(_episode(
            f"f{day}", f"2026-11-0{day}T09:00:00+00:00", situation="fetching the archive index",
            action='fetch_page {"url": "https://archive.example/index"}', outcome="failure",
            error="HTTP 429 too many requests",
            lesson="send the crawl-delay header and wait 30s between archive pages",
        ))  # fmt: skip
        episodes.append(_episode(
            f"n{day}", f"2026-11-0{day}T10:00:00+00:00", situation="routine sitemap refresh",
            action="refresh_sitemap", outcome="success", outcome_details="job ok",
        ))  # fmt: skip
    for ident, day, host in (("q1", 1, "proxy-a.example"), ("q2", 3, "now proxy-b.example")):
        when = f"2026-11-0{day}T11:00:00+00:00"
        episodes.append(_episode(ident, when, situation=f"the proxy pool endpoint is {host}"))
    probes = [
        {"kind": "lesson", "key": "archive-429", "scope": "acme/web/crawler",
         "query": "How do I stop the archive from rejecting our requests?",
         "keys": ["crawl-delay"]},
        {"kind": "fact", "key": "proxy", "scope": "acme/web/crawler",
         "query": "Which proxy pool endpoint do we use?", "keys": ["proxy-b.example"],
         "stale": ["proxy-a.example"]},
        {"kind": "never", "key": "captcha", "scope": "acme/web/crawler",
         "query": "How do we solve the login captcha on the tax portal?", "keys": []},
    ]  # fmt: skip
    return _write(directory, episodes, probes)


def test_a_dumped_world_reads_back_as_the_same_episodes_probes_and_truth(tmp_path: Path) -> None:
    data = generate(GenConfig(scale=0.05, days=4))
    dump(data, tmp_path)
    back = load(tmp_path)
    assert back.probes == data.probes and back.truth == data.truth
    assert back.scopes == tuple(sorted(data.scopes))
    assert sorted(ep["id"] for ep in back.episodes()) == sorted(ep["id"] for ep in data.episodes())
    assert [ep["id"] for ep in back.backfill] == [ep["id"] for ep in data.backfill]
    assert back.config.world == "ops" and len(back.days) == len(data.days)


def test_an_old_dated_line_is_replayed_the_day_it_arrives_not_before(tmp_path: Path) -> None:
    episodes = [_episode("a", "2026-11-01T08:00:00+00:00"), _episode("b", "2026-11-03T08:00:00Z"),
                _episode("late", "2026-11-01T09:00:00+00:00")]  # fmt: skip
    probes = [{"kind": "never", "key": "x", "scope": "acme/web/crawler", "query": "what?"}]
    data = load(_write(tmp_path, episodes, probes))
    assert [[ep["id"] for ep in day] for day in data.days] == [["a"], [], ["b", "late"]]
    assert data.day_end(0).isoformat() == "2026-11-02T00:00:00+00:00"


def test_lines_without_ids_get_the_ids_ingest_would_give_them(tmp_path: Path) -> None:
    """An exported set often carries no ids: each line gets its content's id, the same for the
    same line, different for different ones."""
    bare = [_episode("", f"2026-11-0{d}T08:00:00Z", situation=f"crawl {d}") for d in (1, 2)]
    probes = [{"kind": "never", "key": "x", "scope": "acme/web/crawler", "query": "what?"}]
    first = load(_write(tmp_path / "a", bare, probes))
    again = load(_write(tmp_path / "b", bare, probes))
    ids = [ep["id"] for ep in first.episodes()]
    assert len(set(ids)) == 2 and all(ids)
    assert ids == [ep["id"] for ep in again.episodes()]


@pytest.mark.parametrize(
    ("episodes", "probes", "message"),
    [
        (["not json"], [], "episodes.jsonl:1"),
        ([{"id": "a", "scope": "t/p/a"}], [], "needs a 'scope' and a 'created_at'"),
        ([{"scope": "t/p/a", "created_at": "2026-11-01T08:00:00Z"}], [],
         "episodes.jsonl:1: an episode needs a situation or an action"),
        ([_episode("a", "yesterday")], [], "created_at"),
        ([_episode("a", "2026-11-01T08:00:00Z")], [], "holds no probes"),
        ([_episode("a", "2026-11-01T08:00:00Z")],
         [{"kind": "guess", "key": "k", "scope": "acme/web/crawler", "query": "q"}],
         "kind 'guess'"),
        ([_episode("a", "2026-11-01T08:00:00Z")],
         [{"kind": "lesson", "key": "k", "scope": "other/x/y", "query": "q", "keys": ["z"]}],
         "holds no episode"),
        ([_episode("a", "2026-11-01T08:00:00Z")],
         [{"kind": "lesson", "key": "k", "scope": "acme/web/crawler", "query": "q"}],
         "needs 'keys'"),
        ([_episode("a", "2026-11-01T08:00:00Z")],
         [{"kind": "never", "key": "k", "scope": "acme/web/crawler", "query": "q"}] * 2,
         "probe keys repeat"),
    ],
)  # fmt: skip
def test_a_set_that_cannot_be_scored_is_refused_saying_where(
    tmp_path: Path, episodes: list, probes: list, message: str
) -> None:
    tmp_path.mkdir(exist_ok=True)
    body = "\n".join(e if isinstance(e, str) else json.dumps(e) for e in episodes)
    (tmp_path / "episodes.jsonl").write_text(body + "\n", encoding="utf-8")
    (tmp_path / "probes.json").write_text(json.dumps({"probes": probes}), encoding="utf-8")
    with pytest.raises(InvalidInput, match=re.escape(message)):
        load(tmp_path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"probes\.json"):
        load(tmp_path)


def test_a_strangers_set_is_scored_by_reverie_and_bm25(tmp_path: Path) -> None:
    data = load(_crawl_set(tmp_path / "set"))
    result = run_agent(data=data, systems=("reverie-lexical", "bm25"), workdir=tmp_path)
    assert result.to_dict()["world"] == "crawl" and result.episodes == 8
    lexical, bm25 = result.system("reverie-lexical"), result.system("bm25")
    assert bm25.lessons[250] == {"archive-429": True}
    assert lexical.lessons[250] == {"archive-429": True}
    assert lexical.facts[250]["proxy"] == (True, False)
    assert result.lesson_notes == {"archive-429": "acme/web/crawler"}


def test_the_command_scores_a_set_from_disk_and_refuses_a_bad_one(tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["bench", "agent", "--from", str(_crawl_set(tmp_path / "set")),
                               "--systems", "bm25", "--json"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert '"world": "crawl"' in done.output and '"archive-429": true' in done.output
    bad = runner.invoke(app, ["bench", "agent", "--from", str(tmp_path / "nothing")])
    assert bad.exit_code != 0 and "probes.json" in bad.output
