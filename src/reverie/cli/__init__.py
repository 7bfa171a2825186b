"""The command line: one module per group of commands, shared options in common.

:func:`main` is the console script. ``reverie --help``, and ``reverie`` alone (exit 2, a usage
error), are answered from :mod:`reverie.cli.roothelp`'s index of the commands without importing
them; everything else runs the Typer app in :mod:`reverie.cli.app`.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Console-script entry point."""
    from reverie.cli import roothelp

    args = sys.argv[1:]
    if roothelp.wanted(args) and roothelp.show():
        sys.exit(0 if args else 2)  # as the app does: no command at all is a usage error
    from reverie.cli.app import main as run_app

    run_app()
