"""Hooks Claude Code runs: recall at SessionStart, the transcript ingested at SessionEnd / Stop.

Claude Code runs a command hook with one JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, and ``source`` for SessionStart or
``reason`` for SessionEnd) and reads its stdout. Wire both in ``.claude/settings.json``::

    {"hooks": {
      "SessionStart": [{"hooks": [{"type": "command",
          "command": "python -m reverie.integrations.claude_code session-start"}]}],
      "SessionEnd": [{"hooks": [{"type": "command",
          "command": "python -m reverie.integrations.claude_code session-end"}]}]}}

* ``session-start`` prints ``{"hookSpecificOutput": {"hookEventName": "SessionStart",
  "additionalContext": ...}}``: recall for the project (its name and folder as the query) and,
  when recall finds nothing that specific, the index of what the project's brain knows (titles
  of its most confident pages), under the recall budget. Claude Code adds it to the context.
* ``user-prompt`` (``UserPromptSubmit``) prints the same shape for that event: recall for the
  prompt the user just sent, or nothing when the brain holds nothing relevant.
* ``session-end`` (also right for ``Stop``, which fires after every answer) reads the transcript
  at ``transcript_path`` with the ``coding-agent`` adapter: one episode per tool call, ids from
  the session and the call, so reading the same transcript again stores only the new calls.
  When the scope's schedule says a dream is due (the default schedule: a first dream as soon
  as there are episodes, then daily), it starts ``dream-due`` as a detached process and returns
  at once, so the dream never holds the hook past its time limit; ``dream-due`` runs one pass of
  the scheduler for the scope, under its lease.

``reverie hook claude-code install`` writes these hooks with the absolute path of the
interpreter that runs it (:mod:`reverie.integrations.claude_settings`).

The brain is ``--db`` / ``REVERIE_DB`` / the per-user default; the scope is ``--scope`` /
``REVERIE_SCOPE``, else ``claude-code/<project folder name>``. A hook never fails the session:
on any error it prints nothing, writes one line to stderr and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from reverie.adapters import parse
from reverie.config import default_db_path
from reverie.engine import Reverie
from reverie.errors import InvalidInput
from reverie.intake import IngestResult
from reverie.models import PageStatus, Scope
from reverie.recall.render import FENCE_CLOSE, header, quoted
from reverie.runtime.daemon import run_daemon
from reverie.runtime.schedule import ScheduleConfig, ScheduleState, next_due
from reverie.runtime.scheduler import Schedules

__all__ = [
    "INDEX_LINES",
    "MAX_TRANSCRIPT_BYTES",
    "dream_is_due",
    "main",
    "project_scope",
    "session_end",
    "session_start",
    "user_prompt",
]

MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024
"""The most of a transcript the SessionEnd hook reads; the lines past it are left out."""
INDEX_LINES = 20
"""Pages listed at session start when recall finds nothing specific to the project."""
_MODULE = "reverie.integrations.claude_code"  # as run by ``python -m``, where __name__ is __main__
_NAME = re.compile(r"[^A-Za-z0-9_.:@-]+")


def project_scope(cwd: str, given: str | None = None) -> Scope:
    """``given`` when set, else ``claude-code/<the project folder's name>``."""
    if given:
        return Scope.parse(given)
    name = _NAME.sub("-", Path(cwd or ".").resolve().name).strip("-.") or "project"
    return Scope(tenant="claude-code", agent=name[:128])


def _index(rv: Reverie, scope: Scope) -> str:
    pages = rv.pages(scope, PageStatus.ACTIVE)
    pages.sort(key=lambda p: (-round(p.confidence, 4), p.title))
    if not pages:
        return ""
    lines = [f"- {quoted(p.title)} ({p.kind}, page {p.id})" for p in pages[:INDEX_LINES]]
    return "\n".join([header(), *lines, FENCE_CLOSE])  # titles are stored text: fenced


def session_start(rv: Reverie, hook: dict[str, Any], scope: Scope) -> dict[str, Any]:
    """The SessionStart hook's JSON answer: recall for the project as additional context."""
    cwd = str(hook.get("cwd") or ".")
    query = " ".join(_NAME.sub(" ", Path(cwd).resolve().name).split()) or scope.agent
    context = rv.recall(query, scope).text or _index(rv, scope)
    output: dict[str, Any] = {"hookEventName": "SessionStart"}
    if context:
        output["additionalContext"] = context
    return {"hookSpecificOutput": output}


def user_prompt(rv: Reverie, hook: dict[str, Any], scope: Scope) -> dict[str, Any]:
    """The UserPromptSubmit hook's JSON answer: recall for the prompt, when anything is relevant."""
    prompt = str(hook.get("prompt") or "").strip()
    context = rv.recall(prompt, scope).text if prompt else ""
    output: dict[str, Any] = {"hookEventName": "UserPromptSubmit"}
    if context:
        output["additionalContext"] = context
    return {"hookSpecificOutput": output}


def dream_is_due(rv: Reverie, scope: Scope, now: datetime) -> bool:
    """Whether the default schedule has a dream due for ``scope`` at ``now``."""
    state = ScheduleState.of(rv.store.schedule_record(scope, now))
    return next_due(state, ScheduleConfig(), now).ready(now)


def _dream_in_background(db: str, scope: Scope) -> None:
    command = [sys.executable, "-m", _MODULE, "dream-due", "--db", db, "--scope", scope.key]
    subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # outlives the hook, which Claude Code may kill at its timeout
    )


def _transcript(path: Path) -> list[str]:
    """The transcript's lines. Only a regular file is read (a FIFO or a device would block or
    never end), at most :data:`MAX_TRANSCRIPT_BYTES` of it, and a byte that is not UTF-8 costs
    its character, never the transcript."""
    path = path.expanduser()
    if not path.is_file():
        raise InvalidInput("transcript_path", f"{path} is not a regular file")
    with path.open("rb") as raw:
        data = raw.read(MAX_TRANSCRIPT_BYTES + 1)
    if len(data) > MAX_TRANSCRIPT_BYTES:
        data = data[: data.rfind(b"\n", 0, MAX_TRANSCRIPT_BYTES) + 1]  # whole lines only
    return data.decode("utf-8", errors="replace").splitlines()


def session_end(rv: Reverie, hook: dict[str, Any], scope: Scope) -> IngestResult:
    """Ingest the session's transcript (SessionEnd or Stop): one episode per tool call."""
    path = hook.get("transcript_path")
    if not path:
        raise InvalidInput("transcript_path", "the hook input names no transcript")
    numbered = [(n, line) for n, line in enumerate(_transcript(Path(str(path))), 1) if line.strip()]
    return rv.ingest(parse("coding-agent", numbered, scope=scope).items, scope=scope)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m reverie.integrations.claude_code",
        description="Reverie's Claude Code hooks: read the hook's JSON on stdin.",
    )
    parser.add_argument(
        "event", choices=["session-start", "user-prompt", "session-end", "stop", "dream-due"]
    )
    parser.add_argument("--db", help="the brain (default: REVERIE_DB, then the per-user one)")
    parser.add_argument("--scope", help="default: REVERIE_SCOPE, then claude-code/<project>")
    parser.add_argument(
        "--no-dream", action="store_true", help="session-end: never start a dream (workers do)"
    )
    return parser.parse_args(argv)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
    clock: Callable[[], datetime] | None = None,
) -> int:
    """Run one hook; always 0, so a memory problem never stops a Claude Code session."""
    args = _arguments(argv)
    env = os.environ if environ is None else environ
    out = stdout or sys.stdout
    try:
        hook = json.loads((stdin or sys.stdin).read() or "{}")
        scope = project_scope(str(hook.get("cwd") or "."), args.scope or env.get("REVERIE_SCOPE"))
        db = str(args.db or env.get("REVERIE_DB") or default_db_path())
        if args.event == "dream-due":
            run_daemon(db, Schedules(scopes=(scope.key,)), once=True)
            return 0
        with Reverie.open(db) as rv:
            if args.event in ("session-start", "user-prompt"):
                answer = session_start if args.event == "session-start" else user_prompt
                out.write(json.dumps(answer(rv, hook, scope)) + "\n")
                return 0
            session_end(rv, hook, scope)
            due = dream_is_due(rv, scope, (clock or rv.clock)())
        if due and not args.no_dream:
            _dream_in_background(db, scope)
    except Exception as exc:
        print(f"reverie hook {args.event} skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
