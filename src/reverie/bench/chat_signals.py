"""``reverie bench chat --signals``: can a signal of the embedder tell a question a person's
messages answer from one they never answer?

Recall's answer gate (:mod:`reverie.recall.hybrid`) leaves a section empty unless its evidence
says the brain holds an answer. Before tuning a threshold on a signal, this asks how well the
signal separates the two at any threshold: over each person's raw user messages (what the
``dense`` baseline ranks), every question is scored by the signal, the questions about a stated
slot against the never-said ones (a slot the person never stated, or what no one says). For
each signal it prints the AUC (the chance that an answerable question outscores a never-said
one) and the share of answerable questions that pass at the threshold leaving 90% (the target)
and 78% of never-said questions empty. A signal with an AUC of 0.84 cannot give both 90%
answered and 90% empty; one that could would need an AUC near 0.97.

The question is what recall's embedder reads (:func:`reverie.recall.query.unnamed`: the
person's own name taken out). Signals, each from the similarities alone, so none knows the
generator's words:

* ``best``: the best cosine of the question with the person's messages (today's gate);
* ``best − mean``: how far the best stands out from the question's own similarities to the
  person's messages; ``z-score``: the same in standard deviations; ``gap to second``: best
  minus the second best;
* ``CSLS``: cross-domain similarity local scaling, ``2·cos(q, u) − r(u) − r(q)``, the best
  over the person's messages, ``r`` the mean cosine of a text with its :data:`NEIGHBOURS`
  nearest texts of the whole brain (so a message near every question opens no gate);
* ``best − others' best``: the best against the person's own messages minus the best against
  every other person's (a question alike to what anyone says, not to what this one said).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reverie.bench.chat_gen import ChatConfig, ChatData, Question, generate
from reverie.embed import Embedder, cosine_matrix, resolve_embedder
from reverie.errors import InvalidInput
from reverie.recall.query import owner_words, unnamed

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from rich.console import Console

    Matrix = NDArray[np.float32]

__all__ = [
    "NEIGHBOURS",
    "SIGNALS",
    "Separation",
    "auc",
    "passing",
    "render_signals",
    "run_signals",
    "separations",
]

NEIGHBOURS = 5
"""Nearest texts whose mean cosine is a text's hubness (CSLS)."""
_ANSWERABLE = ("said", "changed")
_NEVER = ("unstated", "never")


@dataclass(frozen=True)
class _Asked:
    """One question's similarities: ``own`` to the person's messages, ``others`` to everyone
    else's, and the hubness of each of the person's messages and of the question."""

    own: Matrix
    others: Matrix
    hub_own: Matrix
    hub_query: float


def _best(a: _Asked) -> float:
    return float(a.own.max())


def _over_mean(a: _Asked) -> float:
    return float(a.own.max() - a.own.mean())


def _z_score(a: _Asked) -> float:
    return float((a.own.max() - a.own.mean()) / max(float(a.own.std()), 1e-9))


def _gap_second(a: _Asked) -> float:
    top = sorted((float(c) for c in a.own), reverse=True)
    return top[0] - top[1] if len(top) > 1 else top[0]


def _csls(a: _Asked) -> float:
    return float((2 * a.own - a.hub_own - a.hub_query).max())


def _over_others(a: _Asked) -> float:
    return float(a.own.max() - (a.others.max() if a.others.size else 0.0))


SIGNALS: tuple[tuple[str, Callable[[_Asked], float]], ...] = (
    ("best", _best),
    ("best − mean", _over_mean),
    ("z-score", _z_score),
    ("gap to second", _gap_second),
    ("CSLS", _csls),
    ("best − others' best", _over_others),
)


@dataclass(frozen=True)
class Separation:
    """One signal's separation of answerable from never-said questions (module docstring)."""

    signal: str
    auc: float
    at_90: float
    at_78: float


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """The chance a positive outscores a negative, ties counting half (0.5 if either is empty)."""
    if not positive or not negative:
        return 0.5
    wins = sum((p > n) + 0.5 * (p == n) for p in positive for n in negative)
    return wins / (len(positive) * len(negative))


def passing(positive: Sequence[float], negative: Sequence[float], empty: float) -> float:
    """Share of ``positive`` over the lowest threshold that leaves at least ``empty`` of
    ``negative`` under or at it (the gate: a score must exceed the threshold)."""
    if not positive:
        return 0.0
    ranked = sorted(negative)
    need = -(-round(empty * len(ranked) * 1000) // 1000)  # ceil, robust to float error
    line = ranked[need - 1] if ranked and need > 0 else float("-inf")
    return sum(p > line for p in positive) / len(positive)


def _hubness(sims: Matrix, exclude_self: bool) -> Matrix:
    """Mean of each row's :data:`NEIGHBOURS` largest entries (its own column left out)."""
    import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

    work = np.array(sims, dtype=np.float32)
    if exclude_self:
        np.fill_diagonal(work, -np.inf)
    k = max(min(NEIGHBOURS, work.shape[1] - int(exclude_self)), 1)
    top = np.sort(work, axis=1)[:, ::-1][:, :k]
    return np.asarray(top.mean(axis=1), dtype=np.float32)


def _asked(data: ChatData, embedder: Embedder) -> list[tuple[Question, _Asked]]:
    """Every answerable or never-said question with its similarities (:class:`_Asked`)."""
    import numpy as np  # noqa: PLC0415 (numpy stays out of `import reverie`)

    owners = [c.user for c in data.chats for _ in c.user_texts]
    texts = [t for c in data.chats for t in c.user_texts]
    vectors = embedder.embed(texts)
    hub = _hubness(cosine_matrix(vectors, vectors), exclude_self=True)
    owner = np.asarray(owners)
    asked = [q for q in data.questions if q.kind in _ANSWERABLE + _NEVER]
    meant = [unnamed(q.query, owner_words(q.user)) for q in asked]
    sims = cosine_matrix(embedder.embed(meant), vectors)
    hub_query = _hubness(sims, exclude_self=False)
    out = []
    for i, q in enumerate(asked):
        own = owner == q.user
        out.append((q, _Asked(sims[i][own], sims[i][~own], hub[own], float(hub_query[i]))))
    return out


def separations(asked: Sequence[tuple[Question, _Asked]]) -> list[Separation]:
    """Each of :data:`SIGNALS` scored on ``asked``."""
    out = []
    for name, signal in SIGNALS:
        pos = [signal(a) for q, a in asked if q.kind in _ANSWERABLE]
        neg = [signal(a) for q, a in asked if q.kind in _NEVER]
        out.append(Separation(name, auc(pos, neg), passing(pos, neg, 0.9), passing(pos, neg, 0.78)))
    return out


def run_signals(config: ChatConfig | None = None, *, embedder: str = "minilm") -> dict[str, Any]:
    """The separations on ``config``'s chats with ``embedder`` (module docstring), as a dict."""
    data = generate(config)
    model = resolve_embedder(embedder)
    if model is None:
        raise InvalidInput("embedder", f"{embedder!r} embeds nothing")
    asked = _asked(data, model)
    return {
        "seed": data.config.seed,
        "embedder": model.model_id,
        "answerable": sum(q.kind in _ANSWERABLE for q, _ in asked),
        "never_said": sum(q.kind in _NEVER for q, _ in asked),
        "signals": [vars(s) for s in separations(asked)],
    }


def render_signals(result: Mapping[str, Any], console: Console) -> None:
    """``result`` of :func:`run_signals` as a table."""
    from rich.table import Table  # noqa: PLC0415 (rich stays out of `import reverie`)

    table = Table(
        title=f"seed {result['seed']}, {result['embedder']}: {result['answerable']} answerable,"
        f" {result['never_said']} never-said questions"
    )
    for column in ("signal", "AUC", "passing at 90% empty", "passing at 78% empty"):
        table.add_column(column, justify="left" if column == "signal" else "right")
    for row in result["signals"]:
        table.add_row(
            row["signal"], f"{row['auc']:.3f}", f"{row['at_90']:.3f}", f"{row['at_78']:.3f}"
        )
    console.print(table)
