"""The package's shape, read from the source: no import cycles, no private names across modules.

An import runs at module level unless it sits in a function (a lazy import of an optional
dependency) or under ``if TYPE_CHECKING:``; importing ``reverie.a.b`` also runs the package
``reverie.a``. Those are the edges of the graph checked here, so a cycle that Python happens to
tolerate today (because of import order) still fails the test.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from reverie.bench.startup import OPTIONAL, call_paths

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "reverie"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level(nodes: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module is imported."""
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            yield from _module_level(node.body)
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _module_level(block)


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str | None]]:
    """``(module imported, name taken from it)`` for each name of an import statement."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name, None
        return
    source = _absolute(module, node)
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        yield (submodule, None) if submodule in MODULES else (source, alias.name)


def _with_packages(target: str) -> Iterator[str]:
    parts = target.split(".")
    for i in range(1, len(parts) + 1):
        yield ".".join(parts[:i])


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        own = set(_with_packages(module))
        for node in _module_level(tree.body):
            for target, _name in _targets(module, node):
                graph[module].update(t for t in _with_packages(target) if t in MODULES)
        graph[module] -= own
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_back_through_others() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_check_sees_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_private_name_is_imported_from_another_module() -> None:
    taken = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            for target, name in _targets(module, node):
                private = name is not None and name.startswith("_") and not name.startswith("__")
                if private and target.startswith(PACKAGE) and target != module:
                    taken.append(f"{module} takes {name} from {target}")
    assert taken == []


def test_the_top_level_holds_about_a_dozen_modules() -> None:
    top = [p.name for p in (SRC / PACKAGE).glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= 12, sorted(top)


LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "hashing", "limits"),
    ("config", "jsonl", "files"),
    ("models",),
    ("text", "adapters"),
    ("store",),
    ("keys", "redaction", "intake"),
    ("llm",),
    ("embed",),
    ("recall",),
    ("dream",),
    ("memory",),
    ("api",),
    ("engine",),
    ("runtime",),
    ("reverie",),
    ("compat", "integrations", "testing"),
    ("server", "bench"),
    ("cli",),
    ("__main__",),
)
"""The package order, bottom first: a module imports only from its own package and from layers
below its own, at module level, under ``TYPE_CHECKING`` and inside functions alike, so no two
packages can form a loop. ``api`` (the conventional verbs, their items, the embedder choice) is
under the facade that offers them; ``runtime`` runs the facade (scheduler, workers, the async
facade's thread pool); ``reverie`` is the package's ``__init__``, the public face over both;
the edges (server, bench, cli) sit on top."""

RANK = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}


def _unit(module: str) -> str:
    """The top-level module or package of ``reverie`` that ``module`` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else PACKAGE


def _every_import(module: str) -> Iterator[tuple[int, str]]:
    """``(line, module imported)`` for every import of ``reverie`` code in ``module``: at module
    level, under ``TYPE_CHECKING`` and inside functions alike."""
    tree = ast.parse(MODULES[module].read_text(), str(MODULES[module]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target, name in _targets(module, node):
                if target == PACKAGE and name is None:
                    continue  # `import reverie.x` names x, not the package's face
                if target.split(".")[0] == PACKAGE:
                    yield node.lineno, target


def _upward() -> list[str]:
    found = []
    for module in MODULES:
        here = _unit(module)
        for line, target in _every_import(module):
            there = _unit(target)
            if there != here and RANK[there] >= RANK[here]:
                found.append(f"{module}:{line} imports {target} ({here} over {there}?)")
    return found


def test_every_package_has_a_place_in_the_order() -> None:
    assert sorted({_unit(m) for m in MODULES} - set(RANK)) == []


def test_no_import_points_up_the_package_order() -> None:
    assert _upward() == []


CLOCK_EDGES = ("cli", "server", "runtime", "bench")
"""Where the wall clock may be read: the edges that run on their own. The facade reads it in one
place (``Reverie.now``, through its ``clock``); everything under it is handed ``now``."""

CLOCK_ALLOWED = {
    "reverie.engine": "Reverie(clock=now_utc): the facade's one clock",
    "reverie.models.base": "defines now_utc",
    "reverie.models.episode": "an Episode made without a date needs one; the engine re-dates it",
    "reverie.memory.mirror": "a temporary file's age is the file system's clock, not a date",
    "reverie.llm._http": "Retry-After is an HTTP date, measured against the transport's clock",
}


def _reads_the_clock(node: ast.AST) -> bool:
    """``datetime.now(…)``, ``time.time()``, ``now_utc()`` or ``now_utc`` passed as a clock."""
    if isinstance(node, ast.Attribute):
        owner = node.value.id if isinstance(node.value, ast.Name) else None
        return (owner, node.attr) in {("datetime", "now"), ("time", "time"), ("datetime", "utcnow")}
    return isinstance(node, ast.Name) and node.id == "now_utc" and isinstance(node.ctx, ast.Load)


def _clock_reads() -> list[str]:
    found = []
    for module, path in MODULES.items():
        if _unit(module) in CLOCK_EDGES or module in CLOCK_ALLOWED:
            continue
        tree = ast.parse(path.read_text(), str(path))
        found += [f"{module}:{n.lineno}" for n in ast.walk(tree) if _reads_the_clock(n)]
    return found


def test_only_the_edges_and_the_facade_read_the_wall_clock() -> None:
    assert _clock_reads() == []


def test_the_clock_check_sees_a_read() -> None:
    reads = [ast.parse(s).body[0] for s in ("datetime.now(UTC)", "time.time()", "f(now_utc)")]
    assert all(any(_reads_the_clock(n) for n in ast.walk(r)) for r in reads)
    assert not any(_reads_the_clock(n) for n in ast.walk(ast.parse("time.monotonic()")))


def _loaded_by(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (counted, never timed)."""
    report = "import json, sys; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{report}"],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_reverie_loads_no_optional_dependency() -> None:
    tops = {m.split(".")[0] for m in _loaded_by("import reverie")}
    assert sorted(tops & set(OPTIONAL)) == []


def test_the_command_line_loads_the_benchmarks_only_for_bench() -> None:
    cli = _loaded_by("import reverie.cli.app")
    assert sorted(m for m in cli if m.startswith("reverie.bench")) == []
    bench = _loaded_by("from reverie.cli.app import BenchGroup\nBenchGroup.load()")
    assert "reverie.bench.core" in bench


def test_remember_and_a_lexical_recall_travel_short_paths() -> None:
    paths = call_paths()
    outside_store = {
        k: [m for m in v if not m.startswith("reverie.store")] for k, v in paths.items()
    }
    assert len(outside_store["remember"]) <= 6, outside_store["remember"]
    assert len(outside_store["recall (lexical)"]) <= 14, outside_store["recall (lexical)"]


def _store_classes() -> Iterator[tuple[str, ast.ClassDef]]:
    for module, path in MODULES.items():
        if module.startswith(f"{PACKAGE}.store"):
            tree = ast.parse(path.read_text(), str(path))
            yield from ((module, n) for n in ast.walk(tree) if isinstance(n, ast.ClassDef))


def _our_classes() -> set[str]:
    names = set()
    for path in MODULES.values():
        tree = ast.parse(path.read_text(), str(path))
        names |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    return names


def test_no_store_class_inherits_from_more_than_one_base_of_ours() -> None:
    """The store is composed (one SQLStore owning a backend), not assembled from mixins. A
    protocol may extend several (``BrainStore``): it names methods and implements none."""
    ours = _our_classes()
    mixed = [
        f"{module}.{cls.name}"
        for module, cls in _store_classes()
        if len([b for b in cls.bases if ast.unparse(b).split(".")[-1] in ours]) > 1
        and "Protocol" not in {ast.unparse(b) for b in cls.bases}
    ]
    assert mixed == []


def test_no_mixin_classes_in_the_store() -> None:
    found = [
        f"{module}.{cls.name}"
        for module, cls in _store_classes()
        if cls.name.endswith(("Mixin", "SQL")) and cls.name != "SQLStore"
    ]
    assert found == []
