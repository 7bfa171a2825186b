"""Does a string look random? The measure behind every rule that has no vendor prefix to go by.

A credential without a prefix is a string drawn at random from an alphabet; what it must not be
confused with is the structured noise of engineering text: git SHAs and content hashes (hex),
UUIDs, identifiers in camelCase, paths, version strings, base64 of ordinary text in a log line.
:func:`looks_random` separates them by four observations, each cheap:

* **alphabet** — pure hex and UUIDs are ids and digests far more often than secrets, so they
  count as random only where a caller's context says secret (``hex_ok``);
* **character classes** — a random base62 string of 20 or more characters almost surely mixes
  upper case, lower case and digits; identifiers and words do not;
* **Shannon entropy** per character, against a floor that grows with the length (a short string
  cannot reach the entropy of a long one);
* **words** — the share of the string inside runs of four or more lower-case letters: high for
  ``AbstractProxyFactory2Bean``, low for ``q7Xk2PzL9mW4``;
* **decodes to text** — base64 whose bytes are printable text, or a well-known file header, is a
  payload in a log line, not a key.

:func:`shielded` finds the spans where strings are known not to be secrets whatever they look
like: public keys and certificates, labelled digests (``sha256:…``, ``sha512-…``, ``h1:…``) and
Reverie's own ids. Only the context-free rule honours shields; a token with a vendor prefix is
redacted wherever it stands.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

__all__ = ["decode_base64", "looks_random", "shannon", "shielded", "wraps_credential"]

_HEX = re.compile(r"[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_WORDLIKE = re.compile(r"[a-z]{4,}|[A-Z][a-z]{3,}")
_SHIELDS = re.compile(
    r"""
    -----BEGIN\ (?:CERTIFICATE|PUBLIC\ KEY|RSA\ PUBLIC\ KEY|CERTIFICATE\ REQUEST|X509\ CRL
        |PGP\ PUBLIC\ KEY\ BLOCK|PGP\ SIGNATURE|SSH2\ PUBLIC\ KEY)-----
        [\s\S]*?(?:-----END[^-]*-----|\Z)
    | \b(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+
        |sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)\s+AAAA[A-Za-z0-9+/]+={0,3}
    | (?:\b(?i:sha(?:1|224|256|384|512)|md5|blake2[bs]?|b2|h1|xxh\d*|crc32c?)[-:=]
        |\bintegrity[=:]\s*["']?)
        [A-Za-z0-9+/_=-]{8,}
    | \b(?:ep|pg|rv|cy|pl)_[0-9a-f]{8,}\b
    | \bdata:(?:image|font|audio|video)/[\w.+-]+;base64,[A-Za-z0-9+/=]+
    | \bENC\[[A-Za-z0-9_]+,data:[^\]\s]*\]
    | \bpk_(?:live|test)_[A-Za-z0-9]+ | \bpk\.eyJ[\w.-]+
    """,
    re.X,
)
"""Public keys and certificates, labelled digests, Reverie's ids, files inlined as data URIs,
SOPS-encrypted values, publishable keys, and the public members of a JSON Web Key (``n``,
``e``, ``x``, ``y``; its private ``d``, ``p``, ``q`` are not shielded)."""
_JWK_PUBLIC = re.compile(r'"(?:n|e|x|y)"\s*:\s*"[\w-]+"')
_MAGIC = (
    b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"%PDF", b"PK\x03\x04", b"\x1f\x8b", b"RIFF",
    b"wOFF", b"wOF2", b"OggS", b"ID3", b"\x00\x00\x01\x00",
)  # fmt: skip
_LOGIN = re.compile(rb"[\w.@+-]{1,64}:(?P<password>[\x21-\x7e]{6,128})")
_PRIVATE_KEY = re.compile(rb"-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY")


def shannon(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _entropy_floor(length: int, hex_only: bool) -> float:
    """The entropy a random string of ``length`` characters almost always reaches, less a margin:
    about log2 of the expected number of distinct characters drawn."""
    alphabet = 16 if hex_only else 62
    distinct = alphabet * (1 - (1 - 1 / alphabet) ** length)
    return math.log2(distinct) - (0.55 if hex_only else 0.75)


def _word_share(text: str) -> float:
    return sum(len(m) for m in _WORDLIKE.findall(text)) / len(text)


def decode_base64(text: str) -> bytes | None:
    """The bytes ``text`` encodes as (standard or URL-safe) base64, if it is base64."""
    body = text.rstrip("=")
    if len(body) < 8 or not re.fullmatch(r"[A-Za-z0-9+/_-]+", body):
        return None
    padded = body.replace("-", "+").replace("_", "/") + "=" * (-len(body) % 4)
    try:
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def wraps_credential(text: str) -> bool:
    """Base64 whose bytes are themselves a credential: a private key (a kubeconfig's
    ``client-key-data``) or ``user:password`` (Docker's and npm's ``auth``, HTTP Basic), the
    password shaped like one (letters with digits or signs)."""
    raw = decode_base64(text)
    if raw is None:
        return False
    if _PRIVATE_KEY.match(raw):
        return True
    login = _LOGIN.fullmatch(raw)
    if login is None:
        return False
    password = login.group("password")
    return bool(re.search(rb"[A-Za-z]", password) and re.search(rb"[^A-Za-z]", password))


def _decodes_to_text(text: str) -> bool:
    if len(text.rstrip("=")) < 16:
        return False
    raw = decode_base64(text)
    if raw is None:
        return False
    if raw.startswith(_MAGIC):
        return True
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in raw)
    return printable >= 0.95 * len(raw)


def looks_random(value: str, *, hex_ok: bool = False, min_length: int = 16) -> bool:
    """Whether ``value`` reads as a randomly drawn credential rather than an id, word or digest.

    ``hex_ok``: a caller whose context already says secret accepts hex strings and UUIDs too.
    """
    core = value.strip("=")
    if len(core) < min_length:
        return False
    if _UUID.fullmatch(core) or _HEX.fullmatch(core):
        return hex_ok and shannon(core) >= _entropy_floor(len(core), hex_only=True)
    classes = sum(
        (
            any(c.islower() for c in core),
            any(c.isupper() for c in core),
            any(c.isdigit() for c in core),
        )
    )
    if classes < 3 or _word_share(core) > 0.45:
        return False
    if shannon(core) < _entropy_floor(len(core), hex_only=False):
        return False
    return not _decodes_to_text(core)


def shielded(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that hold public keys, labelled digests or Reverie ids."""
    if not any(mark in text for mark in ("-----BEGIN", "AAAA", ":", "-", "=", "_")):
        return []
    spans = [m.span() for m in _SHIELDS.finditer(text)]
    if '"kty"' in text:  # a JSON Web Key: its public members
        spans += [m.span() for m in _JWK_PUBLIC.finditer(text)]
    return spans
