"""detect-secrets (Yelp) as a baseline for ``reverie bench redact``, when it is installed.

detect-secrets scans files line by line; each plugin reports the secret *values* it finds in a
line, and its filters drop likely false positives. Here every plugin of its default settings
(keyword, entropy and vendor-format plugins, default filters) scans a text's lines offline as
``detect-secrets scan`` scans a file's (its line-based scanner, with the file's lines as
context), and a reported value becomes the spans where it occurs in that line. It is not a
dependency of Reverie: the benchmark scores it only to show what a well-kept scanner finds on the
same corpus (``pip install detect-secrets`` to include it).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

__all__ = ["detect_secrets_spans"]


def detect_secrets_spans() -> Callable[[str], Sequence[tuple[int, int]]] | None:
    """A span finder backed by detect-secrets, or None when it is not importable."""
    try:
        scan = importlib.import_module("detect_secrets.core.scan")
        settings = importlib.import_module("detect_secrets.settings")
    except ImportError:
        return None
    scan_lines, default_settings = scan._process_line_based_plugins, settings.default_settings

    def spans(text: str) -> list[tuple[int, int]]:
        lines = text.split("\n")
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        out: list[tuple[int, int]] = []
        with default_settings():
            for found in scan_lines(list(enumerate(lines, 1)), filename="episode.txt"):
                value, n = found.secret_value or "", found.line_number - 1
                at = lines[n].find(value) if value else -1
                while value and at >= 0:
                    out.append((starts[n] + at, starts[n] + at + len(value)))
                    at = lines[n].find(value, at + len(value))
        return out

    return spans
