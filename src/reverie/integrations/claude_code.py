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
* ``session-end`` (also right for ``Stop``, which fires after every answer) reads the transcript
  at ``transcript_path`` with the ``coding-agent`` adapter: one episode per tool call, ids from
  the session and the call, so reading the same transcript again stores only the new calls.

The brain is ``--db`` / ``REVERIE_DB`` / the per-user default; the scope is ``--scope`` /
``REVERIE_SCOPE``, else ``claude-code/<project folder name>``. A hook never fails the session:
on any error it prints nothing, writes one line to stderr and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from reverie.adapters import parse
from reverie.config import default_db_path
from reverie.engine import Reverie
from reverie.errors import InvalidInput
from reverie.intake import IngestResult
from reverie.models import PageStatus, Scope

__all__ = ["INDEX_LINES", "main", "project_scope", "session_end", "session_start"]

INDEX_LINES = 20
"""Pages listed at session start when recall finds nothing specific to the project."""
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
    lines = [f"- {p.title} ({p.kind}, `reverie page {p.id}`)" for p in pages[:INDEX_LINES]]
    head = f"## Reverie memory ({scope})\nWhat this project's brain knows, most confident first:"
    return head + "\n" + "\n".join(lines)


def session_start(rv: Reverie, hook: dict[str, Any], scope: Scope) -> dict[str, Any]:
    """The SessionStart hook's JSON answer: recall for the project as additional context."""
    cwd = str(hook.get("cwd") or ".")
    query = " ".join(_NAME.sub(" ", Path(cwd).resolve().name).split()) or scope.agent
    context = rv.recall(query, scope).text or _index(rv, scope)
    output: dict[str, Any] = {"hookEventName": "SessionStart"}
    if context:
        output["additionalContext"] = context
    return {"hookSpecificOutput": output}


def session_end(rv: Reverie, hook: dict[str, Any], scope: Scope) -> IngestResult:
    """Ingest the session's transcript (SessionEnd or Stop): one episode per tool call."""
    path = hook.get("transcript_path")
    if not path:
        raise InvalidInput("transcript_path", "the hook input names no transcript")
    with Path(str(path)).expanduser().open(encoding="utf-8") as lines:
        numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    return rv.ingest(parse("coding-agent", numbered, scope=scope).items, scope=scope)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m reverie.integrations.claude_code",
        description="Reverie's Claude Code hooks: read the hook's JSON on stdin.",
    )
    parser.add_argument("event", choices=["session-start", "session-end", "stop"])
    parser.add_argument("--db", help="the brain (default: REVERIE_DB, then the per-user one)")
    parser.add_argument("--scope", help="default: REVERIE_SCOPE, then claude-code/<project>")
    return parser.parse_args(argv)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Run one hook; always 0, so a memory problem never stops a Claude Code session."""
    args = _arguments(argv)
    env = os.environ if environ is None else environ
    out = stdout or sys.stdout
    try:
        hook = json.loads((stdin or sys.stdin).read() or "{}")
        scope = project_scope(str(hook.get("cwd") or "."), args.scope or env.get("REVERIE_SCOPE"))
        with Reverie.open(args.db or env.get("REVERIE_DB") or default_db_path()) as rv:
            if args.event == "session-start":
                out.write(json.dumps(session_start(rv, hook, scope)) + "\n")
            else:
                session_end(rv, hook, scope)
    except Exception as exc:
        print(f"reverie hook {args.event} skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
