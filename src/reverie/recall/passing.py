"""A name said in passing before a change of value: the older side of that change.

"Greetings from Lisbon, where it has rained all week" states no relation, so no later
statement of where the speaker lives replaces it by slot (:mod:`reverie.recall.answers`,
``current_statements``). Yet once the same speaker says "we just moved to Adelaide", the
earlier line is the older side of a move: the value of a one-value attribute was named in
passing before the speaker's newest statement of that attribute gave another value *of the
same kind*. So a unit is stale when

* it names a name (a capitalised word inside a sentence, :func:`passing_names`) that it does
  not state as a value of its own and that the newest statement does not hold;
* it was said by the speaker of a newer statement of a one-value attribute;
* and that statement's value is the name's nearest among the speaker's newest one-value
  values, by the embedder's cosine of the bare names, at least :data:`KIN_COSINE` (two cities
  are close; a city and a child's name, a language or an editor are not).

Kind is meaning, so this needs an embedder: without one a name in passing stays as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from reverie.embed import Embedder
from reverie.text.stated import durable_statements, sentences

__all__ = ["KIN_COSINE", "Kin", "kin_of", "nearest_kind", "passing_names"]

KIN_COSINE = 0.35
"""Least cosine of two bare names for them to be values of one kind (chosen on ``bench chat``
seed 0: two place names 0.24-0.59, a place against a person's, a language's or a product's
name mostly under 0.3)."""

Kin = Callable[[str, Sequence[str]], list[float]]
"""The cosine of a name to each of some values."""

_CAPITALISED = re.compile(r"(?<![\w'-])[A-Z][a-z][\w-]*")
_DETERMINED = re.compile(r"\b(?:the|a|an|my|our|your|his|her|their|this|that)\s+$", re.IGNORECASE)
"""A determiner before a name: the name modifies the noun after it ("the Valencia marathon",
"our Paris trip"), which is not a place, a company or a person."""


def kin_of(embedder: Embedder) -> Kin:
    """A :data:`Kin` reading ``embedder``, caching each name's vector for its own life."""
    vectors: dict[str, np.ndarray] = {}

    def cosines(name: str, values: Sequence[str]) -> list[float]:
        wanted = [t for t in dict.fromkeys((name, *values)) if t not in vectors]
        if wanted:
            vectors.update(zip(wanted, embedder.embed(wanted), strict=True))
        return [float(np.dot(vectors[name], vectors[v])) for v in values]

    return cosines


def passing_names(text: str) -> list[str]:
    """The names ``text`` mentions without stating them as a value: capitalised words that do
    neither open a sentence nor follow a determiner, but those a durable statement of the
    text holds."""
    stated = {w.casefold() for s in durable_statements(text) for w in s.value.split()}
    out: list[str] = []
    for sentence in sentences(text):
        for m in _CAPITALISED.finditer(sentence):
            word = m.group(0)
            if m.start() == 0 or _DETERMINED.search(sentence[: m.start()]):
                continue
            if word.casefold() not in stated and word not in out:
                out.append(word)
    return out


def nearest_kind(name: str, values: Mapping[str, str], kin: Kin) -> str | None:
    """The key of ``values`` (slot to value) whose value is of ``name``'s kind: the nearest
    one by ``kin``, if at least :data:`KIN_COSINE`; none when ``name`` is one of them (it is
    current)."""
    if not values or any(v.casefold() == name.casefold() for v in values.values()):
        return None
    slots = list(values)
    cosines = kin(name, [values[s] for s in slots])
    best = int(np.argmax(cosines))
    return slots[best] if cosines[best] >= KIN_COSINE else None
