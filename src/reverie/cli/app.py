"""The ``reverie`` command line: a thin edge over the :class:`reverie.Reverie` facade.

Commands hold no logic of their own: they parse arguments, call the facade and render the result
(tables live in :mod:`reverie.cli.tables`). Where the data lives: ``--db``, then ``REVERIE_DB``,
then the per-user data directory (:func:`reverie.config.resolve_db`).

Exit codes: 0 success; 1 ``ingest`` stored the good lines but some lines failed; 2 a
:class:`~reverie.errors.ReverieError` (one red line on stderr, never a traceback) or a usage error.
Every read command takes ``--json`` and then prints only JSON on stdout.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.text import Text

from reverie import __version__
from reverie.cli.common import (
    BENCH_HELP,
    EMBEDDER_KEY,
    REPORTED,
    CycleArg,
    JsonFlag,
    NowOpt,
    PageArg,
    ScopeOpt,
    ScopeReq,
    edge_error,
    emit_json,
    fail,
    json_data,
    known_scope,
    maybe_scope,
    new_console,
    open_brain,
    parse_now,
    parse_scope,
    print_result,
    scope_option,
)
from reverie.cli.doctor import doctor as doctor_command
from reverie.cli.forget import register as register_forget_command
from reverie.cli.hook import hook_app
from reverie.cli.memory import register as register_memory_commands
from reverie.cli.ops import register as register_ops_commands
from reverie.cli.remember import register as register_remember_command
from reverie.cli.review import ReviewFlag
from reverie.cli.review import register as register_review_commands
from reverie.cli.serve import keys_app, mcp_command, serve_command
from reverie.cli.shape import LazyGroup, RootGroup, shape
from reverie.cli.stats import register as register_stats_commands
from reverie.cli.tables import (
    cycles_table,
    lineage_view,
    page_view,
    pages_table,
    report_table,
    stats_table,
    trace_table,
)
from reverie.cli.worker import migrate_command, worker_command
from reverie.config import resolve_db
from reverie.errors import InvalidInput, NotFound, ReverieError, partial
from reverie.jsonl import decode_lines
from reverie.text.counts import counted

if TYPE_CHECKING:
    from reverie.engine import Reverie
    from reverie.models import Revision, Scope

__all__ = ["app", "main"]

INGEST_CHUNK = 500

app = typer.Typer(
    name="reverie",
    help="A sleep cycle for AI agents: episodes in, cited knowledge pages out.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=RootGroup,
)


class BenchGroup(LazyGroup):
    @staticmethod
    def load() -> typer.Typer:
        from reverie.cli.bench import bench_app

        return bench_app


app.add_typer(typer.Typer(help=BENCH_HELP), name="bench", cls=BenchGroup)
app.command("worker")(worker_command)  # scale-out: docs/scaling.md
app.command("migrate")(migrate_command)


# -- plumbing ------------------------------------------------------------------------------------


def _version(value: bool) -> None:
    if value:
        typer.echo(f"reverie {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            metavar="PATH",
            help="Database file or URL (default: $REVERIE_DB, then the per-user data directory).",
        ),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(
            "--embedder",
            metavar="NAME",
            help="auto, minilm, hashing, none, openai:MODEL or st:MODEL (default:"
            " $REVERIE_EMBEDDER, the config file, then the one the brain recorded, then auto).",
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    ctx.obj = db
    ctx.meta[EMBEDDER_KEY] = embedder


# -- writing -------------------------------------------------------------------------------------


@app.command()
def reembed(
    ctx: typer.Context,
    embedder: Annotated[
        str, typer.Argument(metavar="NAME", help="minilm, hashing, openai:MODEL or st:MODEL.")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Switch the brain to another embedder: embed every brain's episodes and pages with it and
    record it, so every later open (CLI, serve, mcp, workers) uses it."""
    from reverie.api.embedding import read_record

    ctx.meta[EMBEDDER_KEY] = "none"  # open without checking the old record: it is replaced
    with open_brain(ctx) as rv:
        computed = rv.reembed(embedder)
        record = read_record(rv.store)
    name = record.name if record else embedder
    if as_json:
        emit_json({"embedder": name, "embedded": computed})
        return
    typer.echo(f"brain now embedded by {name}: {computed} texts embedded")


@app.command()
def init(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Create the database (or bring its schema up to date) and print where it is."""
    with open_brain(ctx, create=True) as rv:
        migrations = rv.store.migrations()
    db = resolve_db(ctx.obj)
    if as_json:
        emit_json({"db": db, "migrations": migrations})
        return
    typer.echo(f"database ready: {db}")


def _read_lines(file: str) -> tuple[list[tuple[int, str]], list[tuple[int, str, str]]]:
    """Non-blank lines of ``file`` ('-' is stdin) with their 1-based line numbers, and
    (line, field, reason) for each line that is not UTF-8 (:mod:`reverie.jsonl`)."""
    try:
        data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as exc:
        fail(InvalidInput("FILE", f"cannot read {file}: {exc.strerror or exc}"))
    return decode_lines(data)


def _parse(
    fmt: str, lines: list[tuple[int, str]], scope: Scope | None
) -> tuple[list[dict[str, Any]], list[int], list[tuple[int, str, str]]]:
    """Episodes from the lines in ``fmt`` (jsonl or a transcript of ``scope``,
    :mod:`reverie.adapters`): the objects, the line number of each, and (line, field, reason)
    for lines not used."""
    from reverie.adapters import parse

    try:
        return parse(fmt, lines, scope=scope).as_tuple()
    except ReverieError as exc:
        fail(exc)


def _stopped(stored: int, duplicates: int, line: int, exc: BaseException) -> NoReturn:
    """The database failed midway (disk full, say): what is stored stays; say so, then fail."""
    typer.echo(
        f"stored {counted(stored, 'episode')}, {counted(duplicates, 'duplicate')} skipped"
        " before the failure;"
        f" nothing from line {line} on was stored"
    )
    fail(exc if isinstance(exc, ReverieError) else edge_error(exc, None))


def _ingest_all(
    rv: Reverie, items: list[dict[str, Any]], line_of: list[int], scope: Scope | None
) -> tuple[int, int, list[tuple[int, str, str]]]:
    """Ingest in chunks under a progress bar; errors come back as (item index, field, reason).
    Each chunk commits on its own, so a failure keeps the chunks before it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    stored = duplicates = 0
    errors: list[tuple[int, str, str]] = []
    columns = (TextColumn("ingesting"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=new_console(stderr=True), transient=True) as progress:
        task = progress.add_task("ingest", total=len(items))
        for start in range(0, len(items), INGEST_CHUNK):
            chunk = items[start : start + INGEST_CHUNK]
            try:
                result = rv.ingest(chunk, scope=scope)
            except REPORTED as exc:
                progress.stop()
                _stopped(stored, duplicates, line_of[start], exc)
            stored += result.stored
            duplicates += result.duplicates
            errors += [(start + e.index, e.field, e.reason) for e in result.errors]
            progress.advance(task, len(chunk))
    return stored, duplicates, errors


@app.command()
def ingest(
    ctx: typer.Context,
    file: Annotated[
        str, typer.Argument(metavar="FILE.jsonl", help="One episode per line; '-' reads stdin.")
    ],
    scope: Annotated[
        str | None,
        scope_option("Scope for lines without one."),
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="jsonl (episodes), or a transcript: openai-chat, coding-agent (needs --scope).",
        ),
    ] = "jsonl",
    as_json: JsonFlag = False,
) -> None:
    """Append episodes from a JSON-lines file. Bad lines are reported; the good ones are stored."""
    default_scope = maybe_scope(scope)
    lines, unreadable = _read_lines(file)
    items, line_of, failures = _parse(fmt, lines, default_scope)
    failures = failures + unreadable
    with open_brain(ctx, create=True) as rv:
        stored, duplicates, errors = _ingest_all(rv, items, line_of, default_scope)
    failures = sorted(failures + [(line_of[i], field, reason) for i, field, reason in errors])
    if as_json:
        failed = [{"line": n, "field": f, "reason": r} for n, f, r in failures]
        emit_json({"stored": stored, "duplicates": duplicates, "failed": failed})
    else:
        _say_ingested(stored, duplicates, failures)
    if failures:
        raise typer.Exit(1)


def _say_ingested(stored: int, duplicates: int, failures: list[tuple[int, str, str]]) -> None:
    err = new_console(stderr=True)
    for number, field, reason in failures:
        err.print(Text(f"line {number}: {field}: {reason}", style="red"), soft_wrap=True)
    summary = f"stored {counted(stored, 'episode')}, {counted(duplicates, 'duplicate')} skipped"
    typer.echo(f"{summary}, {counted(len(failures), 'line')} failed" if failures else summary)


@app.command()
def dream(
    ctx: typer.Context,
    scope: ScopeOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Plan and report; change nothing.")
    ] = False,
    review: ReviewFlag = False,
    now: NowOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Run a dream cycle for one scope, or for every scope with pending episodes."""
    target, at = maybe_scope(scope), parse_now(now)
    failed = None
    with open_brain(ctx) as rv:
        if target is None:
            reports, failed = partial(lambda: rv.dream_all(now=at, dry_run=dry_run, review=review))
        else:
            known = known_scope(rv, target)
            reports = [rv.dream(known, now=at, dry_run=dry_run, review=review)]
    if as_json:
        emit_json(json_data(reports))
    else:
        if not reports and failed is None:
            typer.echo("nothing to dream: no scope has pending episodes")
        for report in reports:
            new_console().print(report_table(report))
    if failed is not None:
        fail(failed)


@app.command()
def undo(ctx: typer.Context, cycle_id: CycleArg, as_json: JsonFlag = False) -> None:
    """Undo a committed cycle: pages go back a revision, its episodes become pending again."""
    with open_brain(ctx) as rv:
        report = rv.undo(cycle_id)
    if as_json:
        emit_json(json_data(report))
        return
    done = report.message or (
        f"undid cycle {report.cycle_id}: {counted(len(report.pages_restored), 'page')} restored,"
        f" {counted(report.episodes_released, 'episode')} released"
    )
    typer.echo(f"{done}; checkpoint back to {report.checkpoint}")


# -- reading -------------------------------------------------------------------------------------


@app.command()
def recall(  # noqa: PLR0913 (typer: one parameter per CLI option)
    ctx: typer.Context,
    *,
    query: Annotated[str, typer.Argument(help="What the agent is about to do or asks.")],
    scope: ScopeReq,
    budget: Annotated[int | None, typer.Option("--budget", min=1, help="Token budget.")] = None,
    now: NowOpt = None,
    as_of: Annotated[
        str | None,
        typer.Option("--as-of", metavar="ISO", help="Answer as the brain stood at this time."),
    ] = None,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain", help="Also show why each unit was packed or cut (signals, budget)."
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Print the prompt section recall packs for QUERY under the token budget."""
    from reverie.recall import RecallTrace

    target, at = parse_scope(scope), parse_now(now)
    trace = RecallTrace() if explain else None
    with open_brain(ctx) as rv:
        known = known_scope(rv, target)
        result = rv.recall(
            query, known, budget, now=at, as_of=parse_now(as_of, "--as-of"), trace=trace
        )
    if as_json:
        data = json_data(result)
        emit_json({**data, "trace": trace.to_json()} if trace is not None else data)
        return
    if result.warning:
        new_console(stderr=True).print(Text(f"warning: {result.warning}", style="yellow"))
    if not result.items:
        new_console(stderr=True).print(Text("nothing relevant to recall", style="dim"))
    if result.text:
        typer.echo(result.text)
    if trace is not None:
        shown = trace.to_json()
        for note in shown["notes"]:
            new_console().print(Text(f"note: {note}", style="dim"))
        new_console().print(trace_table(shown))


@app.command()
def pages(
    ctx: typer.Context,
    scope: ScopeReq,
    show_all: Annotated[
        bool, typer.Option("--all", help="Include superseded and retired pages.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """List the pages of a brain (active ones unless --all)."""
    target = parse_scope(scope)
    with open_brain(ctx) as rv:
        found = rv.pages(known_scope(rv, target), status=None if show_all else "active")
    print_result(found, as_json, lambda ps: pages_table(ps, title=f"pages of {target}"))


def _pick_revision(revisions: list[Revision], page_id: str, number: int) -> Revision:
    for revision in revisions:
        if revision.number == number:
            return revision
    raise NotFound(f"page {page_id} has no revision {number} (it has {len(revisions)})")


@app.command()
def page(
    ctx: typer.Context,
    page_id: PageArg,
    revision: Annotated[
        int | None, typer.Option("--revision", "-r", metavar="N", help="Show revision N instead.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a page as markdown (its current revision, or --revision N), and its file in the
    Markdown mirror (`reverie export markdown DIR` writes DIR/<path>)."""
    with open_brain(ctx) as rv:
        found = rv.page(page_id)
        path = rv.page_path(page_id)
        if revision is not None:
            found = found.model_copy(
                update={"revision": _pick_revision(rv.revisions(page_id), page_id, revision)}
            )
    if as_json:
        emit_json({**json_data(found), "markdown": found.to_markdown(), "path": path})
        return
    new_console().print(page_view(found))
    typer.echo(f"mirror file: {path}")  # never wrapped: a path to copy


@app.command()
def why(
    ctx: typer.Context,
    page_id: PageArg,
    as_json: JsonFlag = False,
    raw: Annotated[
        bool, typer.Option("--raw", help="Show the episodes as stored, secrets unredacted.")
    ] = False,
) -> None:
    """Show a page's lineage: every revision and the episodes its claims cite (redacted)."""
    with open_brain(ctx) as rv:
        lineage = rv.why(page_id, raw=raw)
    print_result(lineage, as_json, lineage_view)


@app.command()
def cycles(
    ctx: typer.Context,
    scope: ScopeOpt = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="How many, newest first.")
    ] = 50,
    as_json: JsonFlag = False,
) -> None:
    """List recent dream cycles."""
    target = maybe_scope(scope)
    with open_brain(ctx) as rv:
        found = rv.cycles(target, limit=limit)
    print_result(found, as_json, cycles_table)


@app.command()
def status(ctx: typer.Context, scope: ScopeOpt = None, as_json: JsonFlag = False) -> None:
    """Counts of episodes, pages, revisions and cycles, in total or for one scope."""
    target = maybe_scope(scope)
    with open_brain(ctx) as rv:
        stats = rv.status(target)
        scopes = [s.key for s in rv.scopes()] if target is None else [target.key]
    db = resolve_db(ctx.obj)
    if as_json:
        emit_json(
            {"db": db, "scope": target.key if target else None, **asdict(stats), "scopes": scopes}
        )
        return
    console = new_console()
    console.print(Text(f"database: {db}"))
    console.print(
        stats_table(stats, title=f"status of {target}" if target else "status (all scopes)")
    )
    if target is None:
        console.print(Text(f"scopes: {', '.join(scopes) or '(none yet)'}"))


# -- demo ----------------------------------------------------------------------------------------


@app.command()
def demo(
    ctx: typer.Context,
    db: Annotated[
        str | None, typer.Option("--db", metavar="PATH", help="Keep the demo in this database.")
    ] = None,
) -> None:
    """Replay a week of sample agent work, dream each night, and show what the brain learned.

    Uses a fresh temporary database unless --db is given (REVERIE_DB is ignored here).
    """
    from reverie.cli.demo import run_demo

    explicit = db or ctx.obj
    if explicit:
        path = (
            Path(explicit.removeprefix("sqlite://"))
            if explicit.startswith("sqlite:///")
            else Path(explicit)
        )
    else:
        path = Path(tempfile.mkdtemp(prefix="reverie-demo-")) / "demo.db"
    try:
        run_demo(path, new_console())
    except ReverieError as exc:
        fail(exc)


app.command(name="doctor")(doctor_command)  # does the configured model answer?
register_memory_commands(app)  # memory over time: history, restore, verify, journal, export/import
register_ops_commands(app)  # running on its own: daemon, schedule, report, archive, export training
register_stats_commands(app)  # stats, log (cumulative stats + journal)
app.command(name="serve")(serve_command)  # HTTP API + dashboard
app.command(name="mcp")(mcp_command)  # MCP server over stdio
app.add_typer(keys_app, name="keys")  # API keys of the HTTP service
app.add_typer(hook_app, name="hook")  # agent tools' hooks (Claude Code)
register_review_commands(app)  # review mode: plans, plan show/apply/reject
register_forget_command(app)  # erasure: forget, receipts (docs/privacy.md)
register_remember_command(app)  # one episode from flags
shape(app)  # help panels and quiet flags, once every command is registered


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except REPORTED as exc:  # a command that forgot open_brain(); no traceback
        try:
            fail(exc if isinstance(exc, ReverieError) else edge_error(exc, None))
        except typer.Exit as done:
            sys.exit(done.exit_code)


if __name__ == "__main__":
    main()
