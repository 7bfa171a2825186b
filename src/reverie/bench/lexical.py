"""The word budget and the BM25 baseline that the recall benchmarks share.

Every system a benchmark compares is judged on the same cut: its lines, in its own order, are
taken while they fit a budget of whitespace words (a line that does not fit is skipped so that
shorter ones behind it can use the room), so a system cannot win by writing denser lines than
the unit of the budget counts. The baseline is Okapi BM25 over whatever raw texts the benchmark
renders, ranked best first; it has no relevance floor (any shared content term ranks a text).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from reverie.recall.query import STOP_WORDS

__all__ = ["BM25", "content_tokens", "cut_words", "fit_lines"]

_TOKEN = re.compile(r"[a-z0-9]+")


def content_tokens(text: str) -> list[str]:
    """Lowercased letters-and-digits words, stop words removed."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS]


def fit_lines(lines: Sequence[str], budget: int) -> list[int]:
    """Positions of the lines taken, in order, while they fit ``budget`` whitespace words."""
    taken: list[int] = []
    used = 0
    for i, line in enumerate(lines):
        n = len(line.split())
        if n and used + n <= budget:
            taken.append(i)
            used += n
    return taken


def cut_words(lines: Sequence[str], budget: int) -> str:
    """The lines :func:`fit_lines` takes, joined; never more than ``budget`` words."""
    text = "\n".join(lines[i] for i in fit_lines(lines, budget))
    words = text.split()
    return text if len(words) <= budget else " ".join(words[:budget])


class BM25:
    """Okapi BM25 (k1 1.2, b 0.75 by default) over ``docs``, on :func:`content_tokens`."""

    def __init__(self, docs: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.tfs = [Counter(content_tokens(d)) for d in docs]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.avg = sum(self.lengths) / max(len(docs), 1) or 1.0
        df = Counter(t for tf in self.tfs for t in tf)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.k1, self.b = k1, b

    def rank(self, query: str) -> list[int]:
        """Positions of the docs sharing a content term with ``query``, best first."""
        terms = set(content_tokens(query))
        scores = []
        for i, tf in enumerate(self.tfs):
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)
            s = sum(self.idf[t] * tf[t] * (self.k1 + 1) / (tf[t] + norm) for t in terms if t in tf)
            scores.append(s)
        return [i for i in sorted(range(len(scores)), key=lambda i: -scores[i]) if scores[i] > 0]
