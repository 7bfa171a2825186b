"""An offline estimate of how many LLM tokens a text costs.

Recall must never overrun the prompt budget an agent gives it, yet Reverie cannot download a
tokenizer (no network, no model files) and must not depend on one vendor's vocabulary. So this
module mimics the *pre-tokenizer* of GPT-style byte-level BPE tokenizers (cl100k and its kin)
and charges each piece a conservative price instead of running the merges:

- a run of ASCII letters (with the one leading space those tokenizers glue to a word) costs
  ``1 + (len - 1) // 5``: common words of up to five letters are one token, longer or rarer
  words (identifiers, ``kubectl``, ``camelCaseNames``) are priced as if split every 5 letters;
- a run of digits costs one token per three digits (cl100k splits numbers that way);
- ASCII punctuation costs one token per character (real tokenizers often merge ``://`` or
  ``...``, so this errs high);
- anything non-ASCII (accented words, CJK, emoji) costs one token per two UTF-8 bytes;
- each run of whitespace other than the single space before a word costs one token.

How close it is could not be measured here: neither ``tiktoken`` nor ``tokenizers`` is installed,
and their vocabularies cannot be fetched offline, so no worst-case error against cl100k is claimed.
By construction it matches a real count on prose of short common words, errs high on long words
that real vocabularies hold whole ("configuration" is one cl100k token, three here), on
punctuation runs and on digit-letter ids (every run is charged), and can err LOW only on rare
letter strings of five letters or fewer (random base64, made-up names), which real tokenizers
split into pieces. It never exceeds the UTF-8 byte count, the hard ceiling of byte-level BPE.

The estimate is additive over lines: pieces never span a newline, so for texts that neither end
nor start with whitespace ``count_tokens(a + "\\n" + b) == count_tokens(a) + 1 + count_tokens(b)``.
:mod:`reverie.recall.pack` relies on that to price a rendered section line by line.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["count_tokens"]

_PIECE = re.compile(
    r" ?([A-Za-z]+)"  # 1: an ASCII word, with its leading space
    r"| ?([0-9]+)"  # 2: a number
    r"| ?([!-/:-@\[-`{-~]+)"  # 3: ASCII punctuation
    r"|(\s+)"  # 4: whitespace not glued to a word
    r"| ?([^\x00-\x7f]+)"  # 5: non-ASCII text
    r"|([\x00-\x08\x0e-\x1f\x7f])"  # 6: control characters
)
_CACHED_BELOW = 512


def _word(n: int) -> int:
    return 1 + (n - 1) // 5


def _price(m: re.Match[str]) -> int:
    word, digits, punct, _space, other, _control = m.groups()
    if word is not None:
        return _word(len(word))
    if digits is not None:
        return (len(digits) + 2) // 3
    if punct is not None:
        return len(punct)
    if other is not None:
        return (len(other.encode("utf-8")) + 1) // 2
    return 1


def _count(text: str) -> int:
    return sum(_price(m) for m in _PIECE.finditer(text))


@lru_cache(maxsize=8192)
def _count_cached(text: str) -> int:
    return _count(text)


def count_tokens(text: str) -> int:
    """Estimate the tokens ``text`` costs in a GPT-style prompt; 0 only for ``""``.

    Deterministic, offline and biased high (see the module docstring). Short texts are cached,
    because recall prices the same rendered lines more than once.
    """
    if len(text) < _CACHED_BELOW:
        return _count_cached(text)
    return _count(text)
