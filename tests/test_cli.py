"""The ``reverie`` command line, driven through typer's runner against real SQLite files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from reverie.cli.app import app
from reverie.cli.demo import load_sample

NIGHT = "2026-11-13T00:00:00Z"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "brain.db"


def cli(db: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, ["--db", str(db), *args], env=env)


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def dreamt(db: Path, tmp_path: Path) -> Path:
    """A database holding the bundled sample week, dreamt once."""
    sample = write_lines(tmp_path / "sample.jsonl", [json.dumps(e) for e in load_sample()])
    assert cli(db, "ingest", str(sample)).exit_code == 0
    assert cli(db, "dream", "--now", NIGHT).exit_code == 0
    return db


def test_ingest_reports_bad_lines_and_stores_the_good_ones(db: Path, tmp_path: Path) -> None:
    good = {"id": "ep-1", "scope": "acme/coder", "situation": "deploy api", "action": "kubectl"}
    lines = [
        json.dumps(good),
        "",
        '{"id": "ep-2", "scope": "acme/coder",',
        json.dumps({"id": "ep-3", "scope": "acme/coder", "situation": "x", "outcome": "meh"}),
        json.dumps({**good, "id": "ep-4"}),
        "[1, 2]",
    ]
    result = cli(db, "ingest", str(write_lines(tmp_path / "in.jsonl", lines)))

    assert result.exit_code == 1
    assert "stored 2 episodes" in result.stdout
    assert "line 3: json: invalid JSON" in result.stderr
    assert "line 4: outcome:" in result.stderr
    assert "line 6: input: expected an object" in result.stderr
    assert "line 1" not in result.stderr and "line 5" not in result.stderr
    assert as_json(cli(db, "status", "--json"))["episodes"] == 2


def test_ingest_default_scope_and_bad_scope(db: Path, tmp_path: Path) -> None:
    path = write_lines(tmp_path / "in.jsonl", [json.dumps({"situation": "s", "action": "a"})])
    assert cli(db, "ingest", str(path), "--scope", "acme/coder/alice").exit_code == 0
    assert as_json(cli(db, "status", "--json"))["scopes"] == ["acme/coder/alice"]

    result = cli(db, "ingest", str(path), "--scope", "acme")
    assert result.exit_code == 2
    assert "invalid scope" in result.stderr


def test_ingest_missing_file_is_a_clear_error(db: Path, tmp_path: Path) -> None:
    result = cli(db, "ingest", str(tmp_path / "nope.jsonl"))
    assert result.exit_code == 2
    assert "cannot read" in result.stderr
    assert "Traceback" not in result.output


def test_read_commands_print_json(dreamt: Path) -> None:
    pages = as_json(cli(dreamt, "pages", "--scope", "acme/coder", "--json"))
    assert pages and all(p["scope"]["agent"] == "coder" for p in pages)
    page_id = pages[0]["id"]

    page = as_json(cli(dreamt, "page", page_id, "--json"))
    assert page["id"] == page_id and page["markdown"].startswith("# ")
    lineage = as_json(cli(dreamt, "why", page_id, "--json"))
    cited = set(pages[0]["revision"]["claims"][0]["episode_ids"])
    assert {e["id"] for e in lineage["episodes"]} >= cited
    cycles = as_json(cli(dreamt, "cycles", "--json"))
    assert {c["scope"]["agent"] for c in cycles} == {"coder", "researcher"}
    status = as_json(cli(dreamt, "status", "--scope", "acme/coder", "--json"))
    assert status["scope"] == "acme/coder" and status["pages"] >= len(pages)
    assert as_json(cli(dreamt, "dream", "--json")) == []  # nothing pending any more
    recalled = as_json(cli(dreamt, "recall", "kubectl timeout", "--scope", "acme/coder", "--json"))
    assert recalled["used_tokens"] <= recalled["budget_tokens"]


def test_human_output_of_read_commands(dreamt: Path) -> None:
    page_id = as_json(cli(dreamt, "pages", "--scope", "acme/coder", "--json"))[0]["id"]
    for args in (
        ("pages", "--scope", "acme/coder", "--all"),
        ("page", page_id),
        ("page", page_id, "--revision", "1"),
        ("why", page_id),
        ("cycles", "--limit", "3"),
        ("status",),
        ("recall", "pip install fails offline", "--scope", "acme/coder", "--budget", "120"),
    ):
        result = cli(dreamt, *args)
        assert result.exit_code == 0, (args, result.output)
        assert result.stdout.strip(), args


def test_missing_page_and_revision(dreamt: Path) -> None:
    result = cli(dreamt, "page", "pg_missing")
    assert result.exit_code == 2
    assert "pg_missing" in result.stderr
    page_id = as_json(cli(dreamt, "pages", "--scope", "acme/coder", "--json"))[0]["id"]
    result = cli(dreamt, "page", page_id, "--revision", "99")
    assert result.exit_code == 2
    assert "no revision 99" in result.stderr


def test_dream_dry_run_changes_nothing(db: Path, tmp_path: Path) -> None:
    sample = write_lines(tmp_path / "s.jsonl", [json.dumps(e) for e in load_sample()[:20]])
    cli(db, "ingest", str(sample))
    reports = as_json(cli(db, "dream", "--scope", "acme/coder", "--dry-run", "--json"))
    assert [r["status"] for r in reports] == ["dry_run"]
    assert as_json(cli(db, "status", "--json"))["pages"] == 0


def test_undo_twice_is_refused_clearly(dreamt: Path) -> None:
    cycle_id = as_json(cli(dreamt, "cycles", "--scope", "acme/researcher", "--json"))[0]["id"]

    first = cli(dreamt, "undo", cycle_id)
    assert first.exit_code == 0, first.output
    assert f"undid cycle {cycle_id}" in first.stdout

    second = cli(dreamt, "undo", cycle_id)
    assert second.exit_code == 2
    assert "already undone" in second.stderr
    assert "Traceback" not in second.output


@pytest.mark.parametrize(
    "args",
    [
        ("pages", "--scope", "not-a-scope"),
        ("recall", "q", "--scope", "a/b/c/d"),
        ("dream", "--scope", "acme/co der"),
        ("cycles", "--scope", "/agent"),
    ],
)
def test_bad_scope_exits_2_with_a_message(db: Path, args: tuple[str, ...]) -> None:
    result = cli(db, *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: invalid scope:")
    assert "Traceback" not in result.output


def test_bad_now_exits_2(db: Path) -> None:
    result = cli(db, "dream", "--now", "tomorrow-ish")
    assert result.exit_code == 2
    assert "invalid --now" in result.stderr


def test_db_falls_back_to_reverie_db_env(tmp_path: Path) -> None:
    target = tmp_path / "nested" / "env.db"
    result = CliRunner().invoke(app, ["init"], env={"REVERIE_DB": str(target)})
    assert result.exit_code == 0, result.output
    assert str(target) in result.stdout
    assert target.exists()


def test_demo_runs_and_prints_pages(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    result = CliRunner().invoke(app, ["demo", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "pages in the acme/coder brain" in result.stdout
    assert "cited episodes" in result.stdout
    assert "recall(" in result.stdout
    assert str(db) in result.stdout
    section = result.stdout.split("4 · recall", 1)[1].split("Explore it yourself", 1)[0]
    lines = " ".join(section.replace("│", " ").split())
    assert "rollout status" in lines  # the fix the week taught leads the deploy question
    assert "British" not in lines  # a preference sharing only "keeps" and "time" stays out


def test_console_script_has_no_traceback(db: Path) -> None:
    code = "from reverie.cli.app import main; main()"
    args = [sys.executable, "-c", code, "--db", str(db), "pages", "--scope", "x"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "invalid scope" in done.stderr


@pytest.mark.parametrize("module", ["reverie", "reverie.cli.app"])
def test_python_dash_m_runs_the_cli(module: str, db: Path) -> None:
    args = [sys.executable, "-W", "error", "-m", module, "--db", str(db), "init", "--json"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)
    usage = subprocess.run(
        [sys.executable, "-m", module], capture_output=True, text=True, timeout=60, check=False
    )
    assert "Usage:" in usage.stdout + usage.stderr


def _help(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    return result.output


_FAST_HELP = """import sys
sys.argv = ["reverie", "--help"]
from reverie.cli import main
try:
    main()
except SystemExit as done:
    print("exit", done.code)
print("loaded", sorted(m for m in sys.modules if m.startswith(("reverie.", "typer", "click"))))
"""


def _fast_help() -> str:
    """``reverie --help`` as the console script answers it, and what that loaded."""
    env = {**os.environ, "COLUMNS": "120"}
    args = [sys.executable, "-W", "error", "-c", _FAST_HELP]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=True, env=env)
    return done.stdout


@pytest.mark.parametrize("source", ["app", "console script"])
def test_help_groups_every_command_in_a_panel_in_order(source: str) -> None:
    from reverie.cli.shape import PANELS  # noqa: PLC0415

    text = _help() if source == "app" else _fast_help()
    starts = [text.index(f"─ {panel} ") for panel in PANELS]
    assert starts == sorted(starts), "panels appear in PANELS order"
    for panel, names in PANELS.items():
        start = text.index(f"─ {panel} ")
        following = [s for s in starts if s > start]
        body = text[start : min(following) if following else len(text)]
        for name in names:
            assert f"│ {name} " in body, f"{name} not in the {panel} panel"


def test_root_help_loads_no_command_and_no_typer() -> None:
    text = _fast_help()
    assert "exit 0" in text and "--db" in text and "--embedder" in text
    assert "loaded ['reverie.cli', 'reverie.cli.roothelp']" in text


def test_root_help_index_is_what_the_app_says() -> None:
    from reverie.cli import roothelp  # noqa: PLC0415

    stored = json.loads(roothelp.INDEX.read_text(encoding="utf-8"))
    assert stored == roothelp.index_of(app), (
        "a command's help changed: python -m reverie.cli.roothelp"
    )


def test_root_help_without_its_index_runs_the_app(tmp_path: Path) -> None:
    from reverie.cli import roothelp  # noqa: PLC0415

    assert roothelp.show(tmp_path / "missing.json") is False
    (tmp_path / "torn.json").write_text('{"usage": "reverie"', encoding="utf-8")
    assert roothelp.show(tmp_path / "torn.json") is False


@pytest.mark.parametrize(
    "command",
    [(), ("pages",), ("dream",), ("keys", "create"), ("bench", "core"), ("plan", "apply")],
)
def test_flags_show_no_type(command: tuple[str, ...]) -> None:
    text = _help(*command)
    assert "--help" in text and "<bool>" not in text
    if command == ("pages",):
        assert "<int>" not in text and "TENANT/AGENT[/USER]" in text  # values keep their metavar


def test_db_is_taken_after_the_command_too(dreamt: Path) -> None:
    before = CliRunner().invoke(app, ["--db", str(dreamt), "pages", "-s", "acme/coder", "--json"])
    after = CliRunner().invoke(app, ["pages", "-s", "acme/coder", "--json", "--db", str(dreamt)])
    joined = CliRunner().invoke(app, ["pages", "--db=" + str(dreamt), "-s", "acme/coder", "--json"])
    assert before.exit_code == after.exit_code == joined.exit_code == 0, after.output
    assert json.loads(before.stdout) == json.loads(after.stdout) == json.loads(joined.stdout)
    assert json.loads(after.stdout)


@pytest.mark.parametrize(
    ("given", "parsed"),
    [
        (["pages", "--db", "x.db", "-s", "a/b"], ["--db", "x.db", "pages", "-s", "a/b"]),
        (["--db", "x.db", "pages"], ["--db", "x.db", "pages"]),
        (["pages", "--db=x.db"], ["--db=x.db", "pages"]),
        (["ingest", "-", "--", "--db", "x"], ["ingest", "-", "--", "--db", "x"]),
        (["pages", "--db"], ["pages", "--db"]),  # no value: click says what is missing
    ],
)
def test_hoist_db(given: list[str], parsed: list[str]) -> None:
    from reverie.cli.shape import hoist_db  # noqa: PLC0415

    assert hoist_db(given) == parsed


def test_shell_completion_is_on() -> None:
    result = CliRunner().invoke(app, ["--show-completion", "bash"])
    assert result.exit_code == 0 and "complete" in result.output
    assert "--install-completion" in _help()


def test_init_ingest_and_dream_speak_json(db: Path, tmp_path: Path) -> None:
    made = as_json(cli(db, "init", "--json"))
    assert made["db"] == str(db) and "0001_initial" in made["migrations"]
    lines = [json.dumps(e) for e in load_sample()[:20]] + ['{"scope": "acme/coder"}']
    result = cli(db, "ingest", str(write_lines(tmp_path / "in.jsonl", lines)), "--json")
    assert result.exit_code == 1  # a bad line still fails the command
    report = json.loads(result.stdout)
    assert report["stored"] == 20 and report["duplicates"] == 0
    assert [f["line"] for f in report["failed"]] == [21]
    again = json.loads(cli(db, "ingest", str(tmp_path / "in.jsonl"), "--json").stdout)
    assert again["stored"] == 0 and again["duplicates"] == 20
    dreamed = as_json(cli(db, "dream", "--json", "--now", NIGHT))
    assert dreamed and {r["status"] for r in dreamed} <= {"committed", "empty"}


def test_page_prints_its_mirror_path(dreamt: Path, tmp_path: Path) -> None:
    page_id = as_json(cli(dreamt, "pages", "-s", "acme/coder", "--json"))[0]["id"]
    shown = as_json(cli(dreamt, "page", page_id, "--json"))
    assert shown["path"].startswith("memories/") and shown["path"].endswith(".md")
    text = cli(dreamt, "page", page_id)
    assert text.exit_code == 0 and f"mirror file: {shown['path']}" in text.output
    mirror = tmp_path / "mirror"
    assert cli(dreamt, "export", "markdown", "-s", "acme/coder", str(mirror)).exit_code == 0
    written = (mirror / shown["path"]).read_text(encoding="utf-8")
    assert page_id in written


def test_recall_explain_shows_why_each_unit_was_packed_or_cut(dreamt: Path) -> None:
    ask = ("recall", "deploy staging timeout", "--scope", "acme/coder", "--budget", "200")
    shown = cli(dreamt, *ask, "--explain", env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "<reverie-memory>" in shown.stdout and "no room: needs" in shown.stdout
    explained = as_json(cli(dreamt, *ask, "--explain", "--json"))
    plain = as_json(cli(dreamt, *ask, "--json"))
    trace = explained.pop("trace")
    assert explained == plain and "trace" not in plain
    packed = [u["id"] for u in trace["units"] if u["decision"] == "packed"]
    assert packed == [item["id"] for item in plain["items"]]


def test_an_unknown_scope_is_named_with_close_matches(dreamt: Path) -> None:
    db = dreamt
    for command in (["recall", "deploy the api"], ["dream"], ["pages"]):
        result = cli(db, *command, "--scope", "acme/codr")
        assert result.exit_code == 2, result.output
        assert "unknown scope acme/codr" in result.stderr
        assert "did you mean acme/coder" in result.stderr
    far = cli(db, "recall", "deploy", "--scope", "zzz/qqq")
    assert far.exit_code == 2 and "it holds acme/coder" in far.stderr
    assert cli(db, "recall", "deploy the api", "--scope", "acme/coder").exit_code == 0


def test_an_error_under_json_is_json_on_stdout_with_exit_2(dreamt: Path) -> None:
    result = cli(dreamt, "recall", "deploy", "--scope", "acme/nobody", "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] and "acme/nobody" in error["message"]
    bad = cli(dreamt, "pages", "--scope", "not a scope", "--json")
    assert bad.exit_code == 2
    assert json.loads(bad.stdout)["error"]["field"] == "scope"


def test_counts_are_in_the_singular_for_one(db: Path, tmp_path: Path) -> None:
    good = '{"scope":"acme/coder","situation":"s","action":"a","outcome":"success"}'
    result = cli(db, "ingest", str(write_lines(tmp_path / "e.jsonl", [good, "not json"])))
    assert result.exit_code == 1
    assert "stored 1 episode, 0 duplicates skipped, 1 line failed" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("dream", "--scope", "acme/coder", "--now", "9999-12-31T23:59:59"),
        ("recall", "x", "--scope", "acme/coder", "--as-of", "0001-01-01T00:00:00"),
        ("forget", "--scope", "acme/coder", "--older-than", "9999999999d"),
    ],
)
def test_dates_and_durations_past_the_calendar_are_refused_in_one_line(
    dreamt: Path, args: tuple[str, ...]
) -> None:
    result = cli(dreamt, *args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "error: invalid" in result.stderr


def test_reverie_scope_names_the_brain_for_every_command(dreamt: Path) -> None:
    import typer.main  # noqa: PLC0415

    env = {"REVERIE_SCOPE": "acme/coder"}
    assert cli(dreamt, "pages", env=env).exit_code == 0
    assert "<reverie-memory>" in cli(dreamt, "recall", "run the tests", env=env).stdout

    def options(command: Any) -> Any:
        for child in getattr(command, "commands", {}).values():
            yield from options(child)
        yield from getattr(command, "params", [])

    scoped = [p for p in options(typer.main.get_command(app)) if "--scope" in p.opts]
    assert len(scoped) > 10
    assert all(p.envvar == "REVERIE_SCOPE" for p in scoped)


def test_remember_stores_one_episode_from_flags_and_once_per_id(db: Path) -> None:
    args = ["remember", "--scope", "acme/coder", "--situation", "deploy api", "--action"]
    args += ["kubectl rollout restart", "--outcome", "failure", "--error", "ImagePullBackOff"]
    args += ["--tool", "kubectl", "--id", "ep-cli-1", "--json"]
    first = cli(db, *args)
    assert first.exit_code == 0, first.output
    stored = json.loads(first.stdout)
    assert stored["id"] == "ep-cli-1" and stored["tools"] == ["kubectl"]
    assert stored["outcome"] == "failure" and stored["error"] == "ImagePullBackOff"
    again = cli(db, *args)
    assert json.loads(again.stdout)["seq"] == stored["seq"]
    bad = cli(db, "remember", "--scope", "acme/coder", "--situation", "x", "--outcome", "great")
    assert bad.exit_code == 2 and "outcome" in bad.stderr


def test_tables_keep_ids_and_scopes_whole_at_80_columns(dreamt: Path) -> None:
    """At 80 columns the cycles table fits its longest words by drawing less space between
    columns, rather than folding a cycle id or a scope name mid-word."""
    listed = as_json(cli(dreamt, "cycles", "--json"))
    shown = cli(dreamt, "cycles", env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80
    for cycle in listed:
        scope = "/".join(filter(None, cycle["scope"].values()))
        assert cycle["id"] in shown.stdout and f" {scope} " in shown.stdout
    assert " episodes " in shown.stdout


def _tab(db: Path, line: str) -> list[str]:
    """What bash's Tab offers after ``line`` (the shell's own completion protocol)."""
    words = f"reverie --db {db} {line}"
    env = {"_REVERIE_COMPLETE": "complete_bash", "COMP_WORDS": words}
    env["COMP_CWORD"] = str(len(words.split()) - (0 if line.endswith(" ") else 1))
    result = CliRunner().invoke(app, [], env=env, prog_name="reverie")
    assert result.exit_code == 0, result.output
    return result.stdout.split()


def test_tab_completes_scopes_page_ids_and_cycle_ids(dreamt: Path, tmp_path: Path) -> None:
    pages = as_json(cli(dreamt, "pages", "--scope", "acme/coder", "--json"))
    cycles = as_json(cli(dreamt, "cycles", "--json"))
    assert _tab(dreamt, "recall q --scope acme/c") == ["acme/coder"]
    assert "acme/researcher" in _tab(dreamt, "pages --scope ")
    first = pages[0]["id"]
    assert first in _tab(dreamt, f"why {first[:6]}")
    assert _tab(dreamt, f"why {first}") == [first]
    assert cycles[0]["id"] in _tab(dreamt, f"undo {cycles[0]['id'][:10]}")
    missing = tmp_path / "none.db"
    assert _tab(missing, "pages --scope a") == [] and not missing.exists()
