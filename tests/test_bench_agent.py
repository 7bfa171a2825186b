"""``reverie bench agent``: the generator plants what the benchmark claims in every world, and the
runner scores every system by the same rules. The full run with MiniLM is marked ``bench``."""

from __future__ import annotations

import io
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from reverie.bench.agent import (
    Section,
    episode_line,
    has_key,
    keys_found,
    leak_reasons,
    run_agent,
)
from reverie.bench.agent_data import WORLDS, World, load_world
from reverie.bench.agent_family import check_targets, run_family, split_worlds
from reverie.bench.agent_gen import Dataset, GenConfig, Probe, generate
from reverie.bench.agent_render import render_agent, render_family
from reverie.cli.app import app
from reverie.errors import InvalidInput

_FIELDS = ("situation", "action", "outcome_details", "error", "lesson")


@pytest.fixture(scope="module", params=WORLDS)
def world(request: pytest.FixtureRequest) -> World:
    return load_world(request.param)


@pytest.fixture(scope="module")
def data(world: World) -> Dataset:
    return generate(GenConfig(world=world.name))


def _text(ep: dict[str, Any]) -> str:
    return " ".join(str(ep.get(name) or "") for name in _FIELDS)


def _of(data: Dataset, label: str, key: str) -> list[dict[str, Any]]:
    return [
        ep
        for ep in data.episodes()
        if data.truth[ep["id"]].label == label and data.truth[ep["id"]].key == key
    ]


def _probes(data: Dataset, kind: str) -> Iterator[Probe]:
    return (p for p in data.probes if p.kind == kind)


def test_the_same_seed_gives_the_same_bytes_and_another_seed_does_not(world: World) -> None:
    small = GenConfig(seed=3, world=world.name, scale=0.3, days=20)
    first, again = generate(small), generate(small)
    assert json.dumps(first.episodes()) == json.dumps(again.episodes())
    assert first.truth == again.truth
    other = generate(GenConfig(seed=4, world=world.name, scale=0.3, days=20))
    assert json.dumps(other.episodes()) != json.dumps(first.episodes())


def test_the_ops_world_is_four_scopes_of_a_few_thousand_episodes() -> None:
    data = generate()
    assert 3000 <= len(data.episodes()) <= 4000
    assert {ep["scope"] for ep in data.episodes()} == {
        "acme/deployer", "acme/coder", "acme/analyst", "globex/deployer",
    }  # fmt: skip


def test_every_world_has_two_tenants_and_unique_ids(data: Dataset) -> None:
    assert 1200 <= len(data.episodes()) <= 4000
    assert {ep["scope"] for ep in data.episodes()} == set(data.scopes)
    assert len({scope.split("/")[0] for scope in data.scopes}) == 2
    assert len({ep["id"] for ep in data.episodes()}) == len(data.episodes())


def test_worlds_share_no_tools_keys_or_filler() -> None:
    """Disjoint vocabularies: no tool, answer key or filler line of one world in another's
    episodes, so that words fitted to one world do nothing on the next."""
    worlds = [load_world(name) for name in WORLDS]
    texts = {w.name: [_text(ep) for ep in generate(GenConfig(world=w.name, scale=0.3,
                                                              days=20)).episodes()]
             for w in worlds}  # fmt: skip
    for mine in worlds:
        tools = {t for item in mine.lessons for c in item.channels for t in c.tools}
        keys = {k for item in mine.lessons for k in item.keys}
        for other in worlds:
            if other is mine:
                continue
            other_tools = {t for item in other.lessons for c in item.channels for t in c.tools}
            assert not tools & other_tools, (mine.name, other.name)
            assert not mine.fillers & other.fillers, (mine.name, other.name)
            hits = [k for k in keys if any(has_key(t, k) for t in texts[other.name])]
            assert not hits, (mine.name, other.name, hits)


def test_filler_is_not_written_in_the_generic_word_list(world: World) -> None:
    """Every world has filler for each outcome; the new worlds' says nothing in words no list
    of ours holds (ops keeps its old success templates: the dream was first fitted to them)."""
    try:  # the word list the dream once recognised boilerplate by, while it exists
        from reverie.dream.templates import GENERIC_WORDS as generic  # noqa: PLC0415
    except ImportError:
        generic = frozenset()
    assert all(world.filler[k] for k in ("success", "failure", "timeout")), world.name
    if world.name != "ops":
        words = {w for line in world.fillers for w in re.findall(r"[a-z0-9]+", line.lower())}
        assert not words & generic, (world.name, words & generic)


def test_routine_notes_recur_on_many_episodes(world: World, data: Dataset) -> None:
    notes = {t.note for tasks in world.routine.values() for t in tasks if t.note}
    counts = [sum(ep.get("lesson") == note for ep in data.episodes()) for note in notes]
    assert len(notes) >= 3 and min(counts) >= 12, counts


def test_every_lesson_recurs_in_three_wordings_over_days_and_sessions(
    world: World, data: Dataset
) -> None:
    lessons = world.lessons
    assert len(lessons) >= 10
    for lesson in lessons:
        eps = _of(data, "lesson", lesson.key)
        wordings = [data.truth[ep["id"]].wording.split() for ep in eps]
        occurrences = {(ep["session_id"], " ".join(w)) for ep, w in zip(eps, wordings, strict=True)}
        assert 5 <= len(occurrences) <= 45, lesson.key
        assert len({(w[1], w[2]) for w in wordings}) >= 3, lesson.key  # channel, situation
        assert len({ep["session_id"] for ep in eps}) >= 3, lesson.key
        assert len({ep["created_at"][:10] for ep in eps}) >= 3, lesson.key
        if lesson.stated:
            said = {ep["lesson"] for ep in eps if ep.get("lesson") in lesson.lessons}
            assert len(said) >= 3, lesson.key


def test_lessons_share_tools_and_some_are_met_through_two_tools(
    world: World, data: Dataset
) -> None:
    lessons = world.lessons
    by_tool = defaultdict(set)
    for lesson in lessons:
        for channel in lesson.channels:
            by_tool[channel.tools].add(lesson.key)
    assert max(len(keys) for keys in by_tool.values()) >= 2
    two_ways = [item for item in lessons if len({c.tools for c in item.channels}) > 1]
    assert len(two_ways) >= 2
    for lesson in two_ways:
        used = {tuple(ep["tools"]) for ep in _of(data, "lesson", lesson.key)}
        assert len(used) >= 2, lesson.key


def test_unstated_lessons_are_only_shown_never_written(world: World, data: Dataset) -> None:
    unstated = [item for item in world.lessons if not item.stated]
    assert len(unstated) >= 3
    for lesson in unstated:
        eps = _of(data, "lesson", lesson.key)
        assert all(ep.get("lesson") in (None, *world.fillers) for ep in eps), lesson.key
        fixed = [ep for ep in eps if keys_found(_text(ep), lesson.keys)]
        assert fixed and all(ep["outcome"] == "success" for ep in fixed), lesson.key
        failed = {ep["session_id"] for ep in eps if ep["outcome"] != "success" and ep["error"]}
        assert {ep["session_id"] for ep in fixed} <= failed, lesson.key


def test_filler_lessons_appear_on_routine_work(world: World, data: Dataset) -> None:
    templates = set(world.filler["success"])
    routine = [ep for ep in data.episodes() if data.truth[ep["id"]].label == "routine"]
    assert sum(ep.get("lesson") in templates for ep in routine) >= 100


def _runs(values: list[str]) -> list[str]:
    return [v for i, v in enumerate(values) if i == 0 or values[i - 1] != v]


def test_facts_change_at_least_twice_and_strays_mention_old_values(
    world: World, data: Dataset
) -> None:
    facts = world.facts
    assert len(facts) >= 4
    assert 0 < sum(f.structured for f in facts) < len(facts)
    main = sorted((ep for day in data.days for ep in day), key=lambda ep: ep["created_at"])
    for fact in facts:
        told = [ep for ep in main if data.truth[ep["id"]] .label == "fact"
                and data.truth[ep["id"]].key == fact.key]  # fmt: skip
        values = [next(v for v in fact.values if has_key(_text(ep), v)) for ep in told]
        assert _runs(values) == list(fact.values), fact.key
        assert len(fact.values) >= 3, fact.key
        if fact.structured:
            assert any("fact" in ep.get("metadata", {}) for ep in told), fact.key
        for stray in _of(data, "stray", fact.key):
            old = [v for v in fact.values[:-1] if has_key(_text(stray), v)]
            assert old and stray["outcome"] == "failure" and "metadata" not in stray


def test_the_backfill_is_old_arrives_last_and_carries_old_values(data: Dataset) -> None:
    order = data.episodes()
    tail = order[-len(data.backfill) :]
    assert tail == list(data.backfill) and data.backfill
    day = data.config.backfill_day
    assert all(ep["created_at"] < data.day_end(day).isoformat() for ep in data.backfill)
    newest_before = max(ep["created_at"] for ep in order[: -len(data.backfill)])
    assert newest_before > data.day_end(day + 30).isoformat()
    assert all(data.truth[ep["id"]].backfill for ep in data.backfill)
    old_values = [
        ep for ep in data.backfill if "fact" in ep.get("metadata", {})
        and any(ep["metadata"]["fact"]["value"] == p.keys[0] for p in _probes(data, "fact"))
    ]  # fmt: skip
    facts = [ep for ep in data.backfill if data.truth[ep["id"]].label == "fact"]
    assert facts and not old_values  # the values of that day, never the current ones


def _shingles(text: str, n: int = 4) -> set[str]:
    words = re.findall(r"[a-z0-9'_./=<-]+", text.lower())
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def test_answer_keys_are_distinctive_and_probes_are_not_copied(data: Dataset) -> None:
    texts = {ep["id"]: _text(ep) for ep in data.episodes()}
    seen = set().union(*(_shingles(t) for t in texts.values()))
    for probe in _probes(data, "lesson"):
        holders = {data.truth[i].key for i, t in texts.items() if keys_found(t, probe.keys)}
        assert holders == {probe.key}, probe.key
        assert not any(has_key(probe.query, k) for k in probe.keys), probe.key
        assert not _shingles(probe.query) & seen, probe.key
    for probe in _probes(data, "fact"):
        assert not _shingles(probe.query) & seen, probe.key
        assert not has_key(probe.query, probe.keys[0]), probe.key


def test_fact_questions_come_in_paraphrases(world: World) -> None:
    assert all(len(set(fact.probes)) >= 2 for fact in world.facts), world.name


def test_some_episodes_arrive_a_day_late(world: World, data: Dataset) -> None:
    late = sum(
        ep["created_at"] < data.day_end(d - 1).isoformat()
        for d, day in enumerate(data.days)
        for ep in day
        if d
    )
    assert (late > 0) == (world.rates.late > 0), late


def test_never_stored_probes_share_no_answer_key_with_any_episode(data: Dataset) -> None:
    texts = [_text(ep) for ep in data.episodes()]
    never = list(_probes(data, "never"))
    for scope in data.scopes:
        assert sum(p.scope == scope for p in never) >= 6, scope
    for probe in never:
        assert not [k for k in probe.keys for t in texts if has_key(t, k)], probe.query


def test_cross_tenant_probes_ask_for_what_only_the_other_tenant_knows(data: Dataset) -> None:
    leaks = list(_probes(data, "leak"))
    assert {p.scope.split("/")[0] for p in leaks} == {s.split("/")[0] for s in data.scopes}
    for probe in leaks:
        assert probe.home and probe.home.split("/")[0] != probe.scope.split("/")[0]
        here = [_text(ep) for ep in data.episodes() if ep["scope"] == probe.scope]
        assert not any(keys_found(t, probe.keys) for t in here), probe.key


def test_the_scoring_rule_needs_sixty_percent_of_whole_keys() -> None:
    assert keys_found("Use KUBECTL ROLLOUT STATUS with --timeout=10m", ["rollout status",
                                                                    "--timeout=10m"])  # fmt: skip
    assert not keys_found("use rollout status", ["rollout status", "--timeout=10m"])
    assert keys_found("a b", ["a", "b", "c"]) and not keys_found("a", ["a", "b", "c"])
    assert not has_key("port 15433", "5433") and has_key("port 5433.", "5433")
    assert not keys_found("anything", [])


def test_a_leak_is_an_id_of_another_scope_or_the_other_tenants_keys() -> None:
    probe = Probe("leak", "k", "globex/deployer", "q", ("regcred", "imagePullSecrets"),
                  home="acme/deployer")  # fmt: skip
    owner = {"a1": "acme/deployer", "g1": "globex/deployer"}
    assert leak_reasons(probe, Section("nothing here", frozenset({"g1"})), owner) == []
    assert leak_reasons(probe, Section("", frozenset({"a1", "g1"})), owner) == ["a1"]
    found = leak_reasons(probe, Section("add imagePullSecrets: regcred", frozenset()), owner)
    assert found == ["answer keys of acme/deployer"]


def test_bm25_lines_hold_every_field_an_agent_wrote() -> None:
    ep = {"created_at": "2026-03-04T07:12:28+00:00", "situation": "S.", "action": "A",
          "outcome": "failure", "error": "E", "lesson": "L"}  # fmt: skip
    assert episode_line(ep) == "- [4 March 2026, failure] S. A. error: E. lesson: L."


def test_a_tiny_run_scores_every_metric_in_range_with_no_leaks() -> None:
    result = run_agent(GenConfig(scale=0.1, days=5), systems=("reverie-lexical", "bm25"))
    assert [s.name for s in result.systems] == ["reverie-lexical", "bm25"]
    for system in result.systems:
        figures = system.metrics()
        assert figures.pop("leaks") == 0, system.leaks
        assert set(figures) >= {"lesson_recall@100", "lesson_recall@250", "fact_current@250",
                                "fact_stale@250", "never_empty"}  # fmt: skip
        assert all(0.0 <= v <= 1.0 for v in figures.values()), figures
        assert set(system.lessons[250]) == {item.key for item in load_world().lessons}
    assert result.system("reverie-lexical").counts["pages"] > 0
    json.dumps(result.to_dict())
    out = io.StringIO()
    render_agent(result, Console(file=out, width=200))
    assert "lesson recall @250 words" in out.getvalue() and "rollout-wait" in out.getvalue()


def test_the_model_path_is_counted_on_the_same_replay() -> None:
    result = run_agent(GenConfig(scale=0.1, days=8), systems=("bm25",), model_calls=True)
    calls = result.model_calls
    assert calls is not None and calls.episodes == result.episodes
    assert 0 < calls.calls < calls.episodes  # a call per problem at most, not per episode
    assert calls.cache_hits == 0  # a first replay has nothing cached
    assert result.to_dict()["model_calls"]["calls"] == calls.calls


def test_the_command_dumps_the_data_and_refuses_unknown_systems(tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["bench", "agent", "--scale", "0.05", "--days", "4",
                               "--dump", str(tmp_path)])  # fmt: skip
    assert done.exit_code == 0, done.output
    lines = (tmp_path / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    probes = json.loads((tmp_path / "probes.json").read_text(encoding="utf-8"))
    assert len(lines) == len(probes["truth"]) and probes["probes"]
    bad = runner.invoke(app, ["bench", "agent", "--systems", "bm25,elastic"])
    assert bad.exit_code == 2


@pytest.mark.bench
@pytest.mark.timeout(900)  # about 2.5 minutes on two cores, most of it embedding with MiniLM
def test_the_full_run_prints_the_table() -> None:
    pytest.importorskip("onnxruntime")
    done = CliRunner().invoke(app, ["bench", "agent"])
    assert done.exit_code == 0, done.output
    print(done.output)
    assert "lesson recall @250 words" in done.output and "skipped" not in done.output


# -- the family of worlds ---------------------------------------------------------------------


def test_the_split_defaults_to_holding_out_every_world_not_tuned_on() -> None:
    assert split_worlds("all") == (("ops",), ("pipelines", "support", "coding"))
    assert split_worlds("coding,ops", "ops,support") == (("ops",), ("coding",))
    assert split_worlds("all", "ops,pipelines", "coding") == (("ops", "pipelines"), ("coding",))
    with pytest.raises(InvalidInput):
        split_worlds("all", "ops", "ops,coding")  # held out and tuned on at once
    with pytest.raises(InvalidInput):
        split_worlds("ops,coding", "ops", "support")  # held out but not run
    with pytest.raises(InvalidInput):
        split_worlds("ops,atlantis")


def test_targets_are_checked_against_bm25_of_the_same_world() -> None:
    good = {"lesson_recall@100": 0.9, "fact_current@100": 1.0, "fact_stale@250": 0.0,
            "never_empty": 0.95, "leaks": 0.0}  # fmt: skip
    base = {**good, "lesson_recall@100": 0.7}
    assert all(check_targets(good, base).values())
    assert not check_targets(good, {**base, "lesson_recall@100": 0.75})["≥ BM25+0.2"]
    bad = check_targets({**good, "fact_stale@250": 0.1, "leaks": 1.0}, None)
    assert [label for label, ok in bad.items() if not ok] == ["stale @250 ≤ 0.05", "0 leaks"]


def test_a_tiny_family_run_marks_the_held_out_worlds() -> None:
    family = run_family(("ops",), ("support",), GenConfig(scale=0.1, days=5),
                        systems=("reverie-lexical", "bm25"))  # fmt: skip
    assert list(family.worlds) == ["ops", "support"]
    checks = family.checks("support")
    assert set(checks) == {"reverie-lexical"} and "≥ BM25+0.2" in checks["reverie-lexical"]
    assert 0.0 < family.figures("support")["bm25"]["words_used@100"] <= 1.0
    assert family.held("reverie-lexical") == all(checks["reverie-lexical"].values())
    body = family.to_dict()
    assert body["report_worlds"] == ["support"] and body["worlds"]["support"]["world"] == "support"
    out = io.StringIO()
    render_family(family, Console(file=out, width=200))
    assert "support (held-out)" in out.getvalue() and "ops (tune)" in out.getvalue()


def test_the_command_runs_chosen_worlds_and_refuses_a_world_both_tuned_and_held_out() -> None:
    runner = CliRunner()
    args = ["--worlds", "coding,support", "--tune-worlds", "support", "--scale", "0.05"]
    done = runner.invoke(app, ["bench", "agent", *args, "--days", "4", "--systems", "bm25"])
    assert done.exit_code == 0, done.output
    assert "coding (held-out)" in done.output and "support (tune)" in done.output
    bad = runner.invoke(app, ["bench", "agent", "--worlds", "all", "--report-worlds", "ops"])
    assert bad.exit_code == 2
    assert runner.invoke(app, ["bench", "agent", "--world", "atlantis"]).exit_code == 2
