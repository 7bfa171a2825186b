"""``reverie bench …``: benchmarks run on demand, never in the default test run.

Each prints its figures next to a baseline measured in the same process, as ratios.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from reverie.bench.agent import SYSTEMS, run_agent
from reverie.bench.agent_data import WORLDS
from reverie.bench.agent_family import run_family, split_worlds
from reverie.bench.agent_files import dump as dump_data
from reverie.bench.agent_files import load as load_data
from reverie.bench.agent_gen import GenConfig, generate
from reverie.bench.agent_render import render_agent, render_family
from reverie.bench.chat import BUDGET as CHAT_BUDGET
from reverie.bench.chat import SYSTEMS as CHAT_SYSTEMS
from reverie.bench.chat import run_chat
from reverie.bench.chat_files import dump as dump_chats
from reverie.bench.chat_files import load as load_chats
from reverie.bench.chat_gen import ChatConfig
from reverie.bench.chat_gen import generate as generate_chats
from reverie.bench.chat_render import render_chat
from reverie.bench.chat_signals import render_signals, run_signals
from reverie.bench.core import render_core, run_core
from reverie.bench.crash import run_crash
from reverie.bench.floor import render_floor_bench, run_floor_bench
from reverie.bench.locomo import render_locomo, run_locomo
from reverie.bench.recall_latency import render_recall_bench, run_recall_bench
from reverie.bench.redact import render_redact, run_redact
from reverie.bench.scale import render_scale, run_scale
from reverie.bench.soak import run_soak
from reverie.bench.startup import run_startup
from reverie.bench.transcripts import render_transcripts, run_transcripts
from reverie.cli.common import BENCH_HELP, NowOpt, fail, parse_now
from reverie.embed import resolve_embedder
from reverie.errors import ReverieError

__all__ = ["bench_app"]

bench_app = typer.Typer(help=BENCH_HELP)


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter("give comma-separated episode counts, e.g. 10000,100000") from None
    if not sizes or min(sizes) < 1:
        raise typer.BadParameter("sizes must be positive")
    return sizes


@bench_app.command("core")
def core(
    sizes: Annotated[
        str, typer.Option(help="Comma-separated episode counts; one cycle each.")
    ] = "10000,100000",
    queries: Annotated[int, typer.Option(min=1, help="Recall queries at the largest size.")] = 300,
    budget: Annotated[int, typer.Option(min=1, help="Recall budget in tokens.")] = 400,
    workdir: Annotated[
        Path | None, typer.Option(help="Where the benchmark databases go (default: a temp dir).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    embedder: Annotated[
        str,
        typer.Option(
            help="Recall with vectors: none, auto, minilm, hashing, openai:MODEL or st:MODEL."
        ),
    ] = "none",
    memory: Annotated[
        bool,
        typer.Option(
            help="Also run each cycle on a copy of its brain under tracemalloc: its peak memory."
        ),
    ] = True,
) -> None:
    """Ingest episodes/s, cycle seconds and recall p50/p99 on the model-free SQLite path."""
    where = workdir or Path(tempfile.mkdtemp(prefix="reverie-bench-"))
    result = run_core(
        sizes=_sizes(sizes), queries=queries, workdir=where, budget=budget,
        embedder=resolve_embedder(None if embedder == "none" else embedder), memory=memory,
    )  # fmt: skip
    if as_json:
        typer.echo(json.dumps(json.loads(result.to_json()), indent=2))
    else:
        render_core(result, Console(highlight=False))
    if not result.passed:
        raise typer.Exit(1)


@bench_app.command("recall")
def recall_bench(
    db: Annotated[Path, typer.Argument(help="An existing SQLite brain (never created).")],
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope",
            envvar="REVERIE_SCOPE",
            help="Scope to recall in (default: the most episodes).",
        ),
    ] = None,
    queries: Annotated[int, typer.Option(min=1, help="Synthetic recall queries.")] = 300,
    budget: Annotated[int, typer.Option(min=1, help="Recall budget in tokens.")] = 400,
    embedder: Annotated[
        str,
        typer.Option(
            help="Recall with vectors: none, auto, minilm, hashing, openai:MODEL or st:MODEL."
        ),
    ] = "none",
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    now: NowOpt = None,
) -> None:
    """Recall p50/p99 on an existing brain, next to raw FTS5 (e.g. one bench core left: its
    synthetic history runs to 2030, so recall there with --now 2030-01-01T00:00:00Z)."""
    try:
        result = run_recall_bench(
            db, scope=scope, queries=queries, budget=budget,
            embedder=resolve_embedder(None if embedder == "none" else embedder),
            now=parse_now(now),
        )  # fmt: skip
    except ReverieError as exc:
        fail(exc)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        typer.echo(render_recall_bench(result))
    if not result.passed:
        raise typer.Exit(1)


@bench_app.command("floor")
def floor_bench(
    episodes: Annotated[int, typer.Option(min=1, help="Episodes of the large brain.")] = 100_000,
    embedder: Annotated[str, typer.Option(help="minilm, auto or openai:MODEL.")] = "minilm",
    queries: Annotated[int, typer.Option(min=1, help="On-topic queries to the large brain.")] = 40,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """The answer floor on a brain of three memories and on a large one (docs/recall.md)."""
    err = Console(stderr=True, highlight=False)
    try:
        result = run_floor_bench(episodes, embedder=embedder, queries=queries, progress=err.print)
    except ReverieError as exc:
        fail(exc)
    typer.echo(json.dumps(result.to_dict(), indent=2) if as_json else render_floor_bench(result))
    if not result.passed:
        raise typer.Exit(1)


@bench_app.command("redact")
def redact_bench(
    seed: Annotated[int, typer.Option(help="Seed of the generated corpus.")] = 0,
    rounds: Annotated[int, typer.Option(min=1, help="Passes over the corpus for chars/s.")] = 3,
    detect_secrets: Annotated[
        bool, typer.Option(help="Also score detect-secrets, when it is installed.")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Recall, precision, misses by format and chars/s of redaction on a generated corpus."""
    result = run_redact(seed=seed, rounds=rounds, detect_secrets=detect_secrets)
    typer.echo(json.dumps(result.to_dict(), indent=2) if as_json else render_redact(result))
    if not result.passed:
        raise typer.Exit(1)


@bench_app.command("crash")
def crash(
    kills: Annotated[int, typer.Option(min=1, help="How many SIGKILLs to inject.")] = 100,
    seed: Annotated[int, typer.Option(help="Seed for the kill points and the data.")] = 0,
    workdir: Annotated[
        Path | None, typer.Option(help="Where the database goes (default: a temp dir).")
    ] = None,
    lanes: Annotated[
        bool,
        typer.Option(
            help="Also kill on the model path, during markdown export and during archiving"
            "; --no-lanes kills the model-free cycle only."
        ),
    ] = True,
) -> None:
    """Kill a dreaming process with SIGKILL at random points; check every invariant after each."""
    where = workdir or Path(tempfile.mkdtemp(prefix="reverie-crash-"))
    result = run_crash(kills, where, seed=seed, lanes=lanes)
    console = Console(highlight=False)
    targets = ", ".join(f"{t} {n}" for t, n in sorted(result.by_target.items()))
    console.print(f"kills {result.kills} (rounds finished unkilled: {result.completed})")
    console.print(f"killed at: {targets}")
    if lanes:
        by_lane = ", ".join(f"{name} {n}" for name, n in sorted(result.by_lane.items()))
        console.print(
            f"kills by lane: {by_lane}; model calls {result.model_calls},"
            f" answers served from the response cache {result.cache_hits}"
        )
    console.print(
        f"episodes {result.episodes}, consolidated {result.consolidated}, {result.seconds} s"
    )
    for problem in result.violations:
        console.print(f"[red]violation[/red] {problem}")
    console.print("all invariants held" if result.passed else "[red]invariants violated[/red]")
    if not result.passed:
        raise typer.Exit(1)


@bench_app.command("scale")
def scale(  # noqa: PLR0913 (typer: one parameter per CLI option)
    url: Annotated[str, typer.Option(help="A PostgreSQL URL; the run uses a fresh schema in it.")],
    scopes: Annotated[int, typer.Option(min=1, help="Scopes in all.")] = 10_000,
    per_scope: Annotated[int, typer.Option(min=1, help="Episodes per scope.")] = 100,
    workers: Annotated[str, typer.Option(help="Worker counts, one part each.")] = "1,2,4",
    queries: Annotated[int, typer.Option(min=1, help="Recall queries at the end.")] = 300,
    dream_scopes: Annotated[
        int | None, typer.Option(min=1, help="Scopes dreamed per part (default: all).")
    ] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the bench schema.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Cycle throughput with 1, 2 and 4 worker processes (ratios), recall p99 (docs/scaling.md)."""
    counts = _sizes(workers)
    err = Console(stderr=True, highlight=False)
    result = run_scale(
        url,
        scopes=scopes,
        per_scope=per_scope,
        workers=counts,
        queries=queries,
        dream_scopes=dream_scopes,
        keep=keep,
        progress=err.print,
    )
    typer.echo(result.to_json() if as_json else render_scale(result))
    if not result.passed:
        raise typer.Exit(1)


def _range(text: str | None) -> range | None:
    """``"0-3"`` → positions 0..3; ``"2"`` → just 2; None → all."""
    if not text:
        return None
    first, _, last = text.partition("-")
    try:
        lo, hi = int(first), int(last or first)
    except ValueError:
        raise typer.BadParameter("give conversation positions as A-B, e.g. 0-3") from None
    if lo < 0 or hi < lo:
        raise typer.BadParameter("give conversation positions as A-B with 0 <= A <= B")
    return range(lo, hi + 1)


@bench_app.command("locomo")
def locomo(
    data: Annotated[Path, typer.Argument(help="A LoCoMo JSON file (never copied anywhere).")],
    conversations: Annotated[
        str | None, typer.Option(help="Conversation positions A-B (default: all).")
    ] = None,
    budget: Annotated[int, typer.Option(min=1, help="Context budget in whitespace words.")] = 250,
    contexts: Annotated[
        Path | None, typer.Option(help="Write one JSON line per question and system here.")
    ] = None,
    embedder: Annotated[
        str, typer.Option(help="auto, minilm, hashing, none, openai:MODEL or st:MODEL.")
    ] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Answer-token and evidence recall per category: Reverie, its ablations and BM25."""
    if not data.is_file():
        raise typer.BadParameter(f"no such file: {data}")
    chosen = resolve_embedder(None if embedder == "none" else embedder)
    wanted = _range(conversations)
    if contexts is not None:
        with contexts.open("w", encoding="utf-8") as out:
            result = run_locomo(
                data, conversations=wanted, budget=budget, contexts=out, embedder=chosen
            )
    else:
        result = run_locomo(data, conversations=wanted, budget=budget, embedder=chosen)
    if as_json:
        typer.echo(result.to_json())
    else:
        render_locomo(result, Console(highlight=False))


@bench_app.command("soak")
def soak(
    seconds: Annotated[float, typer.Option(min=1, help="How long the processes run.")] = 300,
    writers: Annotated[int, typer.Option(min=1)] = 3,
    dreamers: Annotated[int, typer.Option(min=0)] = 2,
    recallers: Annotated[int, typer.Option(min=0)] = 2,
    workdir: Annotated[
        Path | None, typer.Option(help="Where the database goes (default: a temp dir).")
    ] = None,
) -> None:
    """Ingest, dream and recall from several processes on one SQLite file; check nothing broke."""
    where = workdir or Path(tempfile.mkdtemp(prefix="reverie-soak-"))
    result = run_soak(seconds, where, writers=writers, dreamers=dreamers, recallers=recallers)
    console = Console(highlight=False)
    console.print(
        f"{result.processes} processes for {result.seconds:g} s: {result.acked} episodes"
        f" acknowledged, {result.stored} stored, {result.cycles} cycles, {result.recalls} recalls"
    )
    console.print(
        f"recall under load: p50 {result.recall_p50_ms} ms, p99 {result.recall_p99_ms} ms"
    )
    for problem in [*result.errors, *result.violations]:
        console.print(f"[red]problem[/red] {problem}")
    console.print(
        "nothing lost, no error reached a caller" if result.passed else "[red]failed[/red]"
    )
    if not result.passed:
        raise typer.Exit(1)


def _report(
    data: dict[str, Any], out: Path | None, as_json: bool, render: Callable[[], None]
) -> None:
    """A bench's figures: written to ``out`` as JSON when given, then printed as JSON or
    rendered as tables."""
    body = json.dumps(data, indent=2)
    if out is not None:
        out.write_text(body + "\n", encoding="utf-8")
    if as_json:
        typer.echo(body)
    else:
        render()


def _family(
    config: GenConfig, worlds: str, tune: str, report: str | None, systems: list[str],
    as_json: bool, out: Path | None,
) -> None:  # fmt: skip
    try:
        tuned, held = split_worlds(worlds, tune, report)
    except ReverieError as exc:
        fail(exc)
    err = Console(stderr=True, highlight=False)
    result = run_family(tuned, held, config, systems=systems, progress=err.print)
    _report(
        result.to_dict(),
        out,
        as_json,
        lambda: render_family(result, Console(highlight=False, width=160)),
    )


def _systems(text: str, known: tuple[str, ...] = SYSTEMS) -> list[str]:
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in chosen if name not in known]
    if not chosen or unknown:
        raise typer.BadParameter(f"give a comma-separated subset of {', '.join(known)}")
    return chosen


@bench_app.command("agent")
def agent(  # noqa: PLR0913 (typer: one parameter per CLI option)
    seed: Annotated[int, typer.Option(help="Seed of the generated episodes.")] = 0,
    world: Annotated[
        str, typer.Option(help=f"The world to generate: {', '.join(WORLDS)}.")
    ] = "ops",
    worlds: Annotated[
        str | None,
        typer.Option(help="Run several worlds (comma-separated, or all) and print one table."),
    ] = None,
    tune_worlds: Annotated[
        str, typer.Option(help="With --worlds: the worlds constants were chosen on.")
    ] = "ops",
    report_worlds: Annotated[
        str | None,
        typer.Option(help="With --worlds: the held-out worlds (default: all not tuned on)."),
    ] = None,
    scale: Annotated[
        float, typer.Option(min=0.01, help="Multiplies every count (ops at 1: 3,700 episodes).")
    ] = 1.0,
    days: Annotated[int, typer.Option(min=3, help="Simulated days.")] = 60,
    systems: Annotated[
        str, typer.Option(help="Comma-separated: reverie-minilm, reverie-lexical, bm25.")
    ] = "reverie-minilm,reverie-lexical,bm25",
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    out: Annotated[Path | None, typer.Option(help="Also write the figures as JSON here.")] = None,
    dump: Annotated[
        Path | None,
        typer.Option(help="Write episodes.jsonl and probes.json to this directory and stop."),
    ] = None,
    from_dir: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="Score a set on disk (episodes.jsonl and probes.json, as --dump writes) instead"
            " of a generated world.",
        ),
    ] = None,
    model_calls: Annotated[
        bool,
        typer.Option(
            "--model-calls", help="Also replay with the LLM distiller and count its model calls."
        ),
    ] = False,
) -> None:
    """Lessons, current facts, empty answers and leaks on generated agent episodes, against BM25."""
    if world not in WORLDS:
        raise typer.BadParameter(f"choose one of {', '.join(WORLDS)}", param_hint="--world")
    config = GenConfig(seed=seed, world=world, scale=scale, days=days)
    if worlds is not None:
        _family(config, worlds, tune_worlds, report_worlds, _systems(systems), as_json, out)
        return
    if dump is not None:
        for path in dump_data(generate(config), dump):
            typer.echo(f"wrote {path}")
        return
    err = Console(stderr=True, highlight=False)
    try:
        data = None if from_dir is None else load_data(from_dir)
    except ReverieError as exc:
        fail(exc)
    result = run_agent(
        config, data=data, systems=_systems(systems), progress=err.print, model_calls=model_calls
    )
    _report(result.to_dict(), out, as_json, lambda: render_agent(result, Console(highlight=False)))


@bench_app.command("chat")
def chat(  # noqa: PLR0913 (typer: one parameter per CLI option)
    seed: Annotated[int, typer.Option(help="Seed of the generated people and chats.")] = 0,
    people: Annotated[int, typer.Option(min=1, help="Generated people, one scope each.")] = 12,
    chats: Annotated[int, typer.Option(min=2, help="Short chats per person.")] = 5,
    days: Annotated[int, typer.Option(min=2, help="Simulated days the chats fall on.")] = 14,
    budget: Annotated[int, typer.Option(min=1, help="Section budget in whitespace words.")] = (
        CHAT_BUDGET
    ),
    systems: Annotated[
        str, typer.Option(help="Comma-separated: reverie-minilm, reverie-lexical, dense, bm25.")
    ] = ",".join(CHAT_SYSTEMS),
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    out: Annotated[Path | None, typer.Option(help="Also write the figures as JSON here.")] = None,
    dump: Annotated[
        Path | None,
        typer.Option(help="Write chats.jsonl and questions.json to this directory and stop."),
    ] = None,
    from_dir: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="Score a set on disk (chats.jsonl and questions.json, as --dump writes) instead"
            " of generated people.",
        ),
    ] = None,
    signals: Annotated[
        bool,
        typer.Option(
            "--signals",
            help="Instead: how well each signal of MiniLM tells answerable from never-said.",
        ),
    ] = False,
) -> None:
    """Facts and preferences said once in chats, asked back in other words; dense, BM25 beside."""
    if days < chats:
        raise typer.BadParameter("give at least as many days as chats (one chat a day per person)")
    config = ChatConfig(seed=seed, people=people, chats=chats, days=days)
    if dump is not None:
        for path in dump_chats(generate_chats(config), dump):
            typer.echo(f"wrote {path}")
        return
    if signals:
        found = run_signals(config)
        _report(found, out, as_json, lambda: render_signals(found, Console(highlight=False)))
        return
    err = Console(stderr=True, highlight=False)
    chosen = _systems(systems, CHAT_SYSTEMS)
    try:
        data = None if from_dir is None else load_chats(from_dir)
    except ReverieError as exc:
        fail(exc)
    result = run_chat(config, data=data, systems=chosen, budget=budget, progress=err.print)
    _report(
        result.to_dict(),
        out,
        as_json,
        lambda: render_chat(result, Console(highlight=False, width=200)),
    )


@bench_app.command("transcripts")
def transcripts(
    path: Annotated[
        list[Path],
        typer.Option(help="Runs in tau-bench's or tau2-bench's JSON (never copied); repeatable."),
    ],
    nights: Annotated[
        int, typer.Option(min=1, help="Days the runs are spread over, a cycle each.")
    ] = 4,
    embedder: Annotated[
        str, typer.Option(help="none, auto, minilm, hashing, openai:MODEL or st:MODEL.")
    ] = "none",
    limit: Annotated[int | None, typer.Option(min=1, help="Read only the first N runs.")] = None,
    claims: Annotated[int, typer.Option(min=0, help="Claims printed under each title.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Agent runs with their rewards, read as chat transcripts: pages, purity by task kind,
    utterance titles."""
    for one in path:
        if not one.is_file():
            raise typer.BadParameter(f"no such file: {one}")
    chosen = resolve_embedder(None if embedder == "none" else embedder)
    result = run_transcripts(path, nights=nights, embedder=chosen, limit=limit)
    if as_json:
        typer.echo(result.to_json())
    else:
        render_transcripts(result, Console(highlight=False), claims)


@bench_app.command("flood")
def flood(
    samples: Annotated[int, typer.Option(min=10, help="Victim recalls timed per phase.")] = 300,
    connections: Annotated[int, typer.Option(min=1, help="The flooder's connections.")] = 8,
    workdir: Annotated[
        Path | None, typer.Option(help="Where the database goes (default: a temp dir).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """One key floods `reverie serve` while another key's recall p99 is timed, with per-key
    rate limits on and off."""
    from reverie.bench.flood import run_flood

    where = workdir or Path(tempfile.mkdtemp(prefix="reverie-flood-"))
    result = run_flood(where, samples=samples, connections=connections)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
        return
    console = Console(highlight=False)
    for phase in result.phases:
        flood_text = ", ".join(f"{k}: {v}" for k, v in sorted(phase.flood_statuses.items()))
        console.print(
            f"limits {phase.limits:<3} {'flood' if phase.flood else 'alone'}: victim p50"
            f" {phase.p50_ms} ms, p99 {phase.p99_ms} ms, errors {phase.victim_errors}"
            + (f"; flooder got {flood_text}" if phase.flood else "")
        )
    for limits in ("on", "off"):
        console.print(
            f"victim p99 under flood / alone, limits {limits}: ×{result.ratio(limits):.2f}"
        )


@bench_app.command("startup")
def startup(
    runs: Annotated[int, typer.Option(min=1, help="Fresh interpreters per command.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Seconds of ``import reverie`` and ``reverie --help`` beside ``python -c pass``, what they
    load, and the modules ``remember`` and a lexical recall pass through."""
    result = run_startup(runs)
    _report(result.to_dict(), None, as_json, lambda: _render_startup(result.to_dict()))


def _render_startup(data: dict[str, Any]) -> None:
    console = Console(highlight=False)
    for name, seconds in data["seconds"].items():
        loaded = data["loaded"][name]
        console.print(
            f"{name:<16} {seconds:.3f} s  (+{data['over_baseline'][name]:.3f} over the baseline)"
            f"  {loaded['modules']} modules, {loaded['reverie']} of Reverie,"
            f" optional: {', '.join(loaded['optional']) or 'none'}"
        )
    for name, modules in data["paths"].items():
        console.print(f"{name:<16} through {len(modules)} modules: {', '.join(modules)}")
