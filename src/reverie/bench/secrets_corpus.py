"""A generated corpus of synthetic secrets, each labelled with its format and its exact span.

Every secret here is synthetic: a real format's prefix and alphabet with a body drawn from a
seeded :class:`random.Random`, so the corpus is the same for a seed and no credential is real.
A format comes with several contexts in which such a secret is pasted in practice (a shell
line, an env file, YAML, JSON, a log line, a sentence), and each :class:`Sample` records the
character span that redaction must remove (``text[start:end]`` is the secret), so recall counts
a secret as caught only when every character of it is gone.

The formats are data (``reverie/data/secrets/formats.toml``): each a pattern its secrets are
drawn from (:func:`draw`, the pattern language is described at the top of that file) and its
contexts. The look-alikes that must come back unchanged are
:mod:`reverie.bench.secrets_lookalikes`'.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

__all__ = ["ALPHABETS", "GENERATORS", "Sample", "draw", "fill", "positives", "rand", "read_data"]

B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = B62 + "+/"
URLSAFE = B62 + "-_"
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALPHABETS = {
    "b62": B62,
    "hex": HEX,
    "hex_upper": HEX.upper(),
    "b64": B64,
    "urlsafe": URLSAFE,
    "upper_digits": UPPER_DIGITS,
    "lower": string.ascii_lowercase,
    "pod_suffix": "bcdfghjklmnpqrstvwxz2456789",
    "nix_base32": "0123456789abcdfghijklmnpqrsvwxyz",
    "base32": string.ascii_uppercase + "234567",
    "b58": "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
}
"""The alphabets a pattern's ``{ALPHABET*N}`` pieces name."""


@dataclass(frozen=True)
class Sample:
    """One text; ``spans`` are the secrets in it (empty for a look-alike)."""

    text: str
    format: str
    spans: tuple[tuple[int, int], ...]


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


_SLOT = re.compile(r"\{s\}")


def fill(template: str, secret: str, fmt: str) -> Sample:
    """``template`` with each ``{s}`` replaced by ``secret``, the spans recorded."""
    parts, spans, at = [], [], 0
    for m in _SLOT.finditer(template):
        parts.append(template[at : m.start()])
        start = sum(len(p) for p in parts)
        parts.append(secret)
        spans.append((start, start + len(secret)))
        at = m.end()
    parts.append(template[at:])
    return Sample("".join(parts), fmt, tuple(spans))


def _pem(rng: random.Random, spec: str) -> str:
    label, _, lines = spec.partition(":")
    if "|" in label:
        label = rng.choice(label.split("|"))
    body = "\n".join(rand(rng, B64, 64) for _ in range(int(lines or 6)))
    return f"-----BEGIN {label}-----\n{body}\n{rand(rng, B64, 20)}==\n-----END {label}-----"


def _jwt(rng: random.Random, _: str) -> str:
    def enc(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    head = enc({"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"})
    claims = {"sub": rand(rng, HEX, 12), "iat": rng.randrange(1_600_000_000, 1_800_000_000)}
    return f"{head}.{enc(claims)}.{rand(rng, URLSAFE, 43)}"


def _password(rng: random.Random, _: str) -> str:
    words = ["Summer", "Tiger", "Blue", "Rocket", "Maple", "Falcon", "Orbit", "Delta"]
    return rng.choice(
        [
            rng.choice(words) + str(rng.randrange(10, 9999)) + rng.choice("!#$%*"),
            rand(rng, B62 + "!#%*", rng.randrange(10, 20)),
            rand(rng, string.ascii_lowercase, 3) + rand(rng, string.digits, 3) + rand(rng, B62, 6),
        ]
    )


def _login_b64(rng: random.Random, _: str) -> str:
    """``user:password`` in base64, as Docker's and npm's ``auth`` hold it."""
    user = rand(rng, string.ascii_lowercase, rng.randrange(3, 10))
    return base64.b64encode(f"{user}:{_password(rng, '')}".encode()).decode()


def _pem_b64(rng: random.Random, _: str) -> str:
    """A PEM private key in base64, as a kubeconfig's ``client-key-data`` holds it."""
    label = rng.choice(["RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY"])
    return base64.b64encode((_pem(rng, f"{label}:{rng.randrange(3, 8)}") + "\n").encode()).decode()


def _session_id(rng: random.Random, _: str) -> str:
    """A session id as web frameworks mint them: lower case and digits, upper-case hex, base62."""
    return rng.choice(
        [
            rand(rng, string.ascii_lowercase + string.digits, rng.randrange(26, 41)),
            rand(rng, HEX.upper(), 32),
            rand(rng, B62, 32),
        ]
    )


def _number(text: str) -> int:
    base, _, power = text.partition("**")
    return int(base) ** int(power) if power else int(base)


def _int(rng: random.Random, spec: str) -> str:
    low, _, high = spec.partition("..")
    return str(rng.randrange(_number(low), _number(high)) if high else rng.randrange(_number(low)))


def _pick(rng: random.Random, spec: str) -> str:
    return rng.choice(spec.split("|"))


Generator = Callable[[random.Random, str], str]
"""A named piece of a pattern: the generator and the text after the piece's ``:``."""

GENERATORS: dict[str, Generator] = {
    "int": _int,
    "pick": _pick,
    "pem": _pem,
    "jwt": _jwt,
    "password": _password,
    "login_b64": _login_b64,
    "pem_b64": _pem_b64,
    "session_id": _session_id,
}

_PIECE = re.compile(
    r"\{(?P<alphabet>[a-z0-9_]+)(?:\+(?P<extra>[^*{}]+))?\*(?P<length>[0-9.|]+)\}"
    r"|\{(?P<name>[a-z0-9_]+)(?::(?P<arg>[^{}]*))?\}"
)


def _length(rng: random.Random, spec: str) -> int:
    if ".." in spec:
        low, high = spec.split("..")
        return rng.randrange(int(low), int(high))
    if "|" in spec:
        return rng.choice([int(n) for n in spec.split("|")])
    return int(spec)


def _piece(m: re.Match[str], rng: random.Random, generators: Mapping[str, Generator]) -> str:
    if m["alphabet"]:
        alphabet = ALPHABETS[m["alphabet"]] + (m["extra"] or "")
        return rand(rng, alphabet, _length(rng, m["length"]))
    if m["name"] not in generators:
        raise ValueError(f"unknown pattern piece {m[0]!r}")
    return generators[m["name"]](rng, m["arg"] or "")


def draw(pattern: str, rng: random.Random, generators: Mapping[str, Generator] = GENERATORS) -> str:
    """``pattern`` with each ``{…}`` piece drawn from ``rng``, left to right; braces that name
    no piece (``{{ .Values }}``, JSON) are literal text."""
    parts, at = [], 0
    for m in _PIECE.finditer(pattern):
        parts += [pattern[at : m.start()], _piece(m, rng, generators)]
        at = m.end()
    parts.append(pattern[at:])
    return "".join(parts)


def read_data(name: str) -> dict[str, Any]:
    """A TOML file of ``reverie/data/secrets``."""
    text = (files("reverie") / "data" / "secrets" / name).read_text(encoding="utf-8")
    return tomllib.loads(text)


@dataclass(frozen=True)
class SecretFormat:
    """A format: the pattern its secrets are drawn from and the contexts they are pasted in."""

    name: str
    pattern: str
    contexts: tuple[str, ...]
    escape_newlines: bool = False

    def secret(self, rng: random.Random) -> str:
        drawn = draw(self.pattern, rng)
        return drawn.replace("\n", "\\n") if self.escape_newlines else drawn


@cache
def formats() -> tuple[SecretFormat, ...]:
    """The formats of ``formats.toml``, in its order."""
    return tuple(
        SecretFormat(
            name,
            str(spec["secret"]),
            tuple(str(c) for c in spec["contexts"]),
            bool(spec.get("escape_newlines", False)),
        )
        for name, spec in read_data("formats.toml").items()
    )


_WRAPPERS = [
    "{x}",
    "deploy failed; {x}",
    "lesson: never paste {x} into the chat",
    "$ {x}\n",
    "```\n{x}\n```",
    "2026-03-04T10:12:01Z INFO config loaded: {x} (commit 3f2a9c1d4e5b6a7f8e9d0c1b2a3f4e5d6c7)",
    "  {x}  # fixed in v2.14.0",
]


def positives(seed: int = 0, per_format: int = 5) -> list[Sample]:
    """``per_format`` samples of every format, each a context of that format, wrapped in text."""
    rng = random.Random(seed)
    out: list[Sample] = []
    for fmt in formats():
        for i in range(per_format):
            context = fmt.contexts[i % len(fmt.contexts)]
            wrapper = rng.choice(_WRAPPERS)
            template = wrapper.replace("{x}", context) if "\n" not in context else context
            out.append(fill(template, fmt.secret(rng), fmt.name))
    return out
