"""``reverie bench redact``: recall and precision of :func:`reverie.redaction.redact` on a corpus.

The corpus is :mod:`reverie.bench.secrets_corpus` (synthetic secrets, each with its span),
:mod:`reverie.bench.secrets_phrasings` (prose and shell phrasings assembled from random parts,
and their look-alikes) and :mod:`reverie.bench.secrets_lookalikes` (text that must survive).
Figures:

* **recall** — the share of secrets whose every character is gone;
* **precision** — the share of redacted spans that touch a secret (a span over a look-alike or
  over the ordinary text around a secret is a false positive);
* **look-alikes kept** — the share of look-alike texts that come back byte for byte;
* **throughput** in characters per second over the whole corpus, next to the baseline measured in
  the same process: the vendor-prefix pass alone (one compiled alternation,
  :func:`reverie.redaction.formats.find_formats`), which is what any redactor pays at least.

detect-secrets, when importable, is scored on the same corpus as a second baseline (its plugins
report secret values per line; their spans are where those values occur in the line).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from reverie.bench.redact_detect_secrets import detect_secrets_spans
from reverie.bench.secrets_corpus import Sample, positives
from reverie.bench.secrets_lookalikes import lookalikes
from reverie.bench.secrets_phrasings import phrasing_lookalikes, phrasings
from reverie.redaction import Redactor
from reverie.redaction.formats import find_formats

__all__ = ["RedactResult", "SystemFigure", "corpus", "render_redact", "run_redact", "score"]

Spans = Callable[[str], Sequence[tuple[int, int]]]
RECALL_TARGET = 0.98
PRECISION_TARGET = 0.95


@dataclass
class SystemFigure:
    name: str
    recall: float
    precision: float
    lookalikes_kept: float
    chars_per_s: float
    misses: dict[str, int] = field(default_factory=dict)
    false_positives: dict[str, int] = field(default_factory=dict)


@dataclass
class RedactResult:
    secrets: int
    formats: int
    lookalikes: int
    systems: list[SystemFigure]
    throughput_ratio: float

    @property
    def passed(self) -> bool:
        main = self.systems[0]
        return main.recall >= RECALL_TARGET and main.precision >= PRECISION_TARGET

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "passed": self.passed}


def corpus(seed: int = 0) -> tuple[list[Sample], list[Sample]]:
    """(secrets, look-alikes) of ``seed``: vendor formats in their contexts, and prose and
    shell phrasings assembled from random parts (:mod:`reverie.bench.secrets_phrasings`)."""
    return positives(seed) + phrasings(seed), lookalikes(seed) + phrasing_lookalikes(seed)


def _covered(span: tuple[int, int], found: Sequence[tuple[int, int]]) -> bool:
    start, end = span
    for s, e in sorted(found):
        if s <= start < e:
            start = e
        if start >= end:
            return True
    return False


def score(spans_of: Spans, samples: Sequence[Sample]) -> SystemFigure:
    """Recall, precision and look-alike survival of ``spans_of`` on ``samples``."""
    misses: Counter[str] = Counter()
    false_positives: Counter[str] = Counter()
    secrets = caught = true_spans = all_spans = kept = clean = 0
    for sample in samples:
        found = [(s, e) for s, e in spans_of(sample.text)]
        for secret in sample.spans:
            secrets += 1
            if _covered(secret, found):
                caught += 1
            else:
                misses[sample.format] += 1
        for s, e in found:
            all_spans += 1
            if any(s < b and a < e for a, b in sample.spans):
                true_spans += 1
            else:
                false_positives[sample.format] += 1
        if not sample.spans:
            clean += 1
            kept += not found
    return SystemFigure(
        name="",
        recall=round(caught / max(secrets, 1), 4),
        precision=round(true_spans / max(all_spans, 1), 4),
        lookalikes_kept=round(kept / max(clean, 1), 4),
        chars_per_s=0.0,
        misses=dict(misses.most_common()),
        false_positives=dict(false_positives.most_common()),
    )


def _throughput(run: Callable[[str], object], texts: Sequence[str], rounds: int) -> float:
    chars = sum(map(len, texts)) * rounds
    began = time.perf_counter()
    for _ in range(rounds):
        for text in texts:
            run(text)
    return round(chars / max(time.perf_counter() - began, 1e-9))


def _reverie_spans(text: str) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in Redactor().spans(text)]


def _prefix_spans(text: str) -> list[tuple[int, int]]:
    return [(s, e) for s, e, _name in find_formats(text)]


def run_redact(seed: int = 0, rounds: int = 3, detect_secrets: bool = True) -> RedactResult:
    """Score Reverie, the vendor-prefix baseline and (if installed) detect-secrets."""
    secrets, looks = corpus(seed)
    samples = [*secrets, *looks]
    texts = [s.text for s in samples]
    systems = []
    for name, spans_of, timed in (
        ("reverie", _reverie_spans, lambda t: Redactor().text(t)),
        ("vendor prefixes only", _prefix_spans, _prefix_spans),
    ):
        figure = score(spans_of, samples)
        figure.name, figure.chars_per_s = name, _throughput(timed, texts, rounds)
        systems.append(figure)
    if detect_secrets:
        finder = detect_secrets_spans()
        if finder is not None:
            figure = score(finder, samples)
            figure.name, figure.chars_per_s = "detect-secrets 1.x", _throughput(finder, texts, 1)
            systems.append(figure)
    return RedactResult(
        secrets=sum(len(s.spans) for s in secrets),
        formats=len({s.format for s in secrets}),
        lookalikes=len(looks),
        systems=systems,
        throughput_ratio=round(systems[0].chars_per_s / max(systems[1].chars_per_s, 1), 3),
    )


def render_redact(result: RedactResult) -> str:
    lines = [
        f"corpus: {result.secrets} secrets in {result.formats} formats,"
        f" {result.lookalikes} look-alikes",
    ]
    for fig in result.systems:
        lines.append(
            f"{fig.name:<22} recall {fig.recall:.4f}  precision {fig.precision:.4f}"
            f"  look-alikes kept {fig.lookalikes_kept:.4f}  {fig.chars_per_s / 1e6:.2f} M chars/s"
        )
    main = result.systems[0]
    lines.append(f"throughput vs vendor prefixes only: {result.throughput_ratio:.3f}x")
    lines.append("misses by format: " + (_counts(main.misses) or "none"))
    lines.append("false positives by family: " + (_counts(main.false_positives) or "none"))
    target = f"targets recall >= {RECALL_TARGET}, precision >= {PRECISION_TARGET}"
    lines.append(f"{target}: {'met' if result.passed else 'NOT met'}")
    return "\n".join(lines)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items())
