"""The crash harness's other kill points: the model path, the Markdown export and the cold tier.

A *lane* is what one crash child does after each cycle, on its own database:

- ``extractive``: the model-free distiller; then it exports the Markdown mirror and archives
  consolidated episodes older than :data:`ARCHIVE_AFTER`.
- ``model``: the same, but the cycle distills with the real :class:`LLMDistiller` against the real
  local fake model server (:class:`~reverie.llm.fake_server.FakeLLMServer`, started inside the
  child) that answers a valid plan built from the evidence it was sent.

Every step announces itself (``phase <name>``) and pauses, so a SIGKILL sent on that line lands
there: ``model-call`` while a request waits for its answer, ``model-answered`` after an answer was
cached but before the cycle commits, ``export-write`` with a complete temporary file not yet
renamed, ``bundle-write`` / ``bundle-verify`` / ``archive-commit`` around the bundle's write, its
read-back and the transaction that turns episodes into stubs.

The child also prints ``called <sha>`` for every request the server answers and ``cached <sha>``
once an answer is in the response cache (sha256 of the user prompt), so the harness can check
DESIGN invariant 2: a re-run after a crash never pays twice for the same input.
:func:`check_mirror` and :func:`check_archive` are the file-side checks run after every kill.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from reverie.bench.crash_erase import ERASE_TARGETS, erase_some
from reverie.dream.llm_distill import LLMDistiller
from reverie.dream.plan import Evidence, Plan
from reverie.errors import ReverieError
from reverie.llm._http import HTTPSettings
from reverie.llm.base import ModelUsage
from reverie.llm.fake_server import FakeLLMServer, RecordedRequest, Reply, openai_reply
from reverie.llm.openai_compat import OpenAICompatLLM
from reverie.memory.archive import Archive, BundleFiles, archive_root
from reverie.memory.frontmatter import FrontMatterError, split
from reverie.memory.mirror import FOLDER, INDEX, KEYS, export_markdown, render_page
from reverie.models import Scope
from reverie.store.records import BundleInfo, is_stub
from reverie.store.sqlite import SQLiteStore

__all__ = [
    "ARCHIVE_AFTER",
    "LANES",
    "LANE_TARGETS",
    "Lane",
    "check_archive",
    "check_mirror",
    "mirror_dir",
    "model_lane",
    "plan_for_prompt",
    "prompt_sha",
]

LANES = ("extractive", "model")
LANE_TARGETS = (
    "model-call", "model-answered", "export-write", "bundle-write", "bundle-verify",
    "archive-commit", *ERASE_TARGETS,
)  # fmt: skip
"""Kill points outside the cycle (``erase-*``: :mod:`reverie.bench.crash_erase`); ``model-*``
come up only in the model lane."""
ARCHIVE_AFTER = timedelta(days=2)
Announce = Callable[[str], None]
_LINK = re.compile(r"\]\((?P<target>[^)]+)\)")


def _say(line: str) -> None:
    print(line, flush=True)


def mirror_dir(db: Path) -> Path:
    """Where a lane's child exports the mirror: next to its database."""
    return db.parent / "mirror"


def prompt_sha(user: str) -> str:
    return hashlib.sha256(user.encode("utf-8")).hexdigest()[:16]


# -- the model lane -------------------------------------------------------------------------------


def _fenced(user: str) -> list[dict[str, Any]]:
    lines = user.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("DATA FENCE"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("DATA FENCE"))
    return [json.loads(line) for line in lines[start + 1 : end]]


MAX_CLAIMS = 150
"""A competent model keeps a page compact; the plan schema refuses more than 200 claims."""


def plan_for_prompt(user: str) -> dict[str, Any]:
    """What a competent model answers: revise the shown page, or create the group's, citing every
    new episode in one claim and folding the oldest claims together once the page grows long (every
    citation is kept)."""
    items = _fenced(user)
    topic = json.loads(user.splitlines()[0].split(": ", 1)[1])
    new = [i for i in items if i["section"] == "new"]
    claims: list[dict[str, Any]] = []
    if new:
        text = f"{new[0].get('situation', '')[:200]}: seen {len(new)} more time(s)."
        claims.append({"text": text, "episode_ids": [i["id"] for i in new]})
    body: dict[str, Any] = {"title": f"About {topic}", "kind": "lesson", "confidence": 0.8}
    pages = [i for i in items if i["section"] == "page"]
    if not pages:
        return {"operations": [{"op": "create", "topic_key": topic, **body, "claims": claims}]}
    page = pages[0]
    revise = {"op": "revise", "page_id": page["page_id"], "expected_hash": page["hash"]}
    return {"operations": [{**revise, **body, "claims": _compact(claims + page["claims"])}]}


def _compact(claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if len(claims) <= MAX_CLAIMS:
        return claims
    keep, rest = claims[: MAX_CLAIMS - 1], claims[MAX_CLAIMS - 1 :]
    cited = sorted({e for claim in rest for e in claim["episode_ids"]})
    return [*keep, {"text": "Earlier observations, folded together.", "episode_ids": cited}]


class _AnnouncingDistiller:
    """The LLM distiller, announcing ``cached <sha>`` and ``model-answered`` after each group."""

    name = "llm"

    def __init__(self, inner: LLMDistiller, announce: Announce, tell: Announce) -> None:
        self.inner = inner
        self.announce = announce
        self.tell = tell

    def take_usage(self) -> ModelUsage:
        return self.inner.take_usage()

    def distill(self, evidence: Evidence) -> Plan:
        plan = self.inner.distill(evidence)
        self.tell(f"cached {prompt_sha(self.inner.prompt(evidence))}")
        self.announce("model-answered")
        return plan


@contextmanager
def model_lane(
    store: SQLiteStore, announce: Announce, tell: Announce = _say
) -> Iterator[_AnnouncingDistiller]:
    """A fake model server in this process and an LLM distiller (cached in ``store``) using it;
    ``tell`` gets the ``called`` / ``cached`` lines."""

    def answer(request: RecordedRequest) -> Reply:
        user = str(request.body["messages"][1]["content"])
        tell(f"called {prompt_sha(user)}")
        announce("model-call")
        return openai_reply(plan_for_prompt(user))

    settings = HTTPSettings(timeout_s=20.0, connect_timeout_s=5.0, max_retries=1, backoff_s=0.01)
    with FakeLLMServer(answer) as server:
        llm = OpenAICompatLLM(server.openai_base_url, "crash-model", settings=settings)
        try:
            yield _AnnouncingDistiller(LLMDistiller(llm, cache=store), announce, tell)
        finally:
            llm.close()


# -- export and archive, announced ----------------------------------------------------------------


class _AnnouncingFiles(BundleFiles):
    def __init__(self, root: Path, announce: Announce) -> None:
        super().__init__(root)
        self.announce = announce

    def write(self, bundle_hash: str, data: bytes) -> None:
        self.announce("bundle-write")
        super().write(bundle_hash, data)

    def read(self, bundle_hash: str) -> bytes:
        self.announce("bundle-verify")
        return super().read(bundle_hash)


class _AnnouncingIndex:
    """The store's archive side, announcing ``archive-commit`` before its transaction."""

    def __init__(self, store: SQLiteStore, announce: Announce) -> None:
        self.store = store
        self.announce = announce

    def archive_commit(self, bundle: BundleInfo, episodes: Any) -> None:
        self.announce("archive-commit")
        self.store.archive_commit(bundle, episodes)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


@dataclass
class Lane:
    """What a crash child does after each cycle: export the mirror, archive, then erase."""

    store: SQLiteStore
    scope: Scope
    directory: Path
    announce: Announce

    def after_cycle(self, now: datetime) -> None:
        export_markdown(
            self.store,
            self.scope,
            self.directory,
            before_replace=lambda _tmp: self.announce("export-write"),
            recorded_at=now,  # so an erasure rewrites it at once
        )
        archive = Archive(self.store, _AnnouncingFiles(archive_root(self.store), self.announce))
        archive.index = _AnnouncingIndex(self.store, self.announce)
        archive.run(ARCHIVE_AFTER, now, apply=True, scopes=[self.scope], limit=30)
        erase_some(self.store, self.scope, now, self.announce)


# -- checks ---------------------------------------------------------------------------------------


def check_mirror(
    store: SQLiteStore, directory: Path, stale: frozenset[tuple[str, int, str]] = frozenset()
) -> list[str]:
    """Every file of the mirror is whole: a page file is exactly the rendering of the revision it
    names (the old bytes or the new, never a mix), ``MEMORY.md`` is complete and links only
    files that exist, and nothing the importer reads (``memories/*.md``) is a leftover temp file.
    A file may name a revision in ``stale`` (one an unfinished erasure rewrote, whose mirror
    rewrite is still due)."""
    problems: list[str] = []
    folder = directory / FOLDER
    if not folder.is_dir():
        return problems
    for path in sorted(folder.glob("*.md")):
        if _names(path) in stale:
            continue
        if why := _page_file_problem(store, path):
            problems.append(f"mirror {path.name}: {why}")
    index = directory / INDEX
    if index.exists():
        text = index.read_text(encoding="utf-8")
        if not text.startswith("# Memory of ") or not text.endswith("\n"):
            problems.append("mirror MEMORY.md is not a whole index")
        for match in _LINK.finditer(text):
            if not (directory / match["target"]).is_file():
                problems.append(f"mirror MEMORY.md links {match['target']}, which does not exist")
    return problems


def _names(path: Path) -> tuple[str, int, str] | None:
    """``(page, revision, hash)`` a page file's front matter names, if it reads."""
    try:
        meta, _body = split(path.read_bytes().decode("utf-8"), KEYS)
    except (UnicodeDecodeError, FrontMatterError):
        return None
    number = meta.get("revision")
    return (str(meta.get("id")), number, str(meta.get("hash"))) if isinstance(number, int) else None


def _page_file_problem(store: SQLiteStore, path: Path) -> str | None:
    try:
        text = path.read_bytes().decode("utf-8")
        meta, _body = split(text, KEYS)
    except (UnicodeDecodeError, FrontMatterError) as exc:
        return f"not a page file: {exc}"
    try:
        page = store.page(str(meta.get("id")))
    except ReverieError:
        return f"names no stored page ({meta.get('id')!r})"
    number = meta.get("revision")
    rev = next((r for r in store.revisions(page.id) if r.number == number), None)
    if rev is None or rev.hash != meta.get("hash"):
        return f"names no stored revision {number}"
    return None if text == render_page(page, rev) else "half-written (bytes differ)"


def check_archive(store: SQLiteStore, scope: Scope) -> list[str]:
    """No episode was stubbed unless a bundle that verifies holds it; no bundle file under its
    final name is half-written (every ``*.jsonl.gz`` hashes to its name)."""
    problems: list[str] = []
    root = archive_root(store)
    for path in sorted(root.glob("*.jsonl.gz")) if root.is_dir() else []:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if path.name != f"{digest}.jsonl.gz":
            problems.append(f"bundle {path.name} does not hash to its name (half-written)")
    archive = Archive(store)
    held: dict[str, tuple[str, int | None]] = {}
    for info in archive.bundles(scope):
        try:
            held.update((e.id, (info.hash, e.seq)) for e in archive.fetch(info.hash))
        except ReverieError as exc:
            problems.append(f"indexed bundle {info.hash[:19]} does not read back: {exc}")
    stubs = [e for e in store.recent_episodes(scope, 10_000_000) if is_stub(e)]
    where = store.archive_locations([e.id for e in stubs], tenant=scope.tenant)
    for ep in stubs:
        if ep.id not in where or held.get(ep.id) != (where[ep.id], ep.seq):
            problems.append(f"episode {ep.id} was stubbed but no verified bundle holds it")
    return problems
