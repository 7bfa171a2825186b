"""Writing a file so that a reader sees the old bytes or the new, and nothing else is touched.

Every file Reverie writes (the Markdown mirror, archive bundles, the training export) goes
through :func:`write_atomically`:

- the bytes go to a temporary file created in the target's own folder under a fresh random
  name with ``O_CREAT | O_EXCL | O_NOFOLLOW``, so a link or file planted at a guessable name
  is never followed or reused;
- the target must be a regular file or absent: a link, a folder, a FIFO or a device is
  refused with :class:`~reverie.errors.InvalidInput` before a byte is written;
- the temporary file is fsynced, renamed over the target, and the folder fsynced; on any
  failure it is removed, so nothing is left behind.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from reverie.errors import InvalidInput

__all__ = ["temporary_name", "write_atomically"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def temporary_name(target: Path) -> Path:
    """``.<name>.<random>.tmp`` next to ``target``."""
    return target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _refuse_odd_target(target: Path, field: str) -> None:
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise InvalidInput(
            field,
            f"{target} is {_kind(mode)}; Reverie only replaces regular files (name a new or"
            " regular file instead)",
        )


def _write_new(tmp: Path, data: bytes) -> None:
    fd = os.open(tmp, _FLAGS, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _sync_folder(folder: Path) -> None:
    if not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(
    target: Path,
    data: bytes,
    *,
    field: str = "path",
    before_replace: Callable[[Path], None] | None = None,
) -> None:
    """Replace ``target`` with ``data`` (see the module docstring); ``field`` names the input
    an error blames. ``before_replace`` is called with the complete temporary file just before
    the rename (the crash harness kills there)."""
    _refuse_odd_target(target, field)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(field, f"cannot create the folder of {target}: {exc.strerror}") from None
    tmp = temporary_name(target)
    try:
        _write_new(tmp, data)
        if before_replace is not None:
            before_replace(tmp)
        _refuse_odd_target(target, field)  # planted while we wrote: still refuse it
        os.replace(tmp, target)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InvalidInput(field, f"cannot write {target}: {exc.strerror or exc}") from None
        raise
    _sync_folder(target.parent)
