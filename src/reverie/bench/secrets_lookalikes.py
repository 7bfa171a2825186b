"""Look-alikes: engineering text that resembles a secret and must survive redaction byte for byte.

Each family is a thing a redactor is tempted by: field names that say secret while their value
is a reference (Kubernetes ``imagePullSecrets``, ``secretKeyRef``, ``password_file``), ids and
digests (git SHAs, UUIDs, sha256 in an error line, Docker digests, npm integrity strings),
version strings, URLs without credentials, base64 of ordinary text in a log line, public keys
and certificates, prose about passwords and tokens, and command flags that are not passwords
(``docker run -p 8080:80``). The families are data (``reverie/data/secrets/lookalikes.toml``):
patterns of :func:`reverie.bench.secrets_corpus.draw`, with the pieces below, drawn from a
seeded :class:`random.Random`.
"""

from __future__ import annotations

import base64
import random
import uuid
from functools import cache

from reverie.bench.secrets_corpus import (
    B62,
    B64,
    GENERATORS,
    Generator,
    Sample,
    draw,
    rand,
    read_data,
)

__all__ = ["lookalikes"]

_WORDS = tuple(
    [
        "deploy",
        "retry",
        "cache",
        "timeout",
        "worker",
        "queue",
        "build",
        "image",
        "cluster",
        "node",
        "pod",
        "service",
        "config",
        "release",
        "branch",
        "commit",
        "merge",
        "test",
        "lint",
        "schema",
        "migration",
        "index",
        "replica",
        "backup",
        "restore",
    ]
)


def _word(rng: random.Random, _: str = "") -> str:
    return rng.choice(_WORDS)


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _uuid(rng: random.Random, _: str) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128)))


def _b64_text(rng: random.Random, _: str) -> str:
    payload = rng.choice(
        [
            f'{{"user": "{_word(rng)}", "action": "{_word(rng)}", "ok": true}}',
            _sentence(rng, 10),
            f"job={_word(rng)} status=done retries={rng.randrange(5)}",
        ]
    )
    return base64.b64encode(payload.encode()).decode()


def _certificate(rng: random.Random, _: str) -> str:
    body = "\n".join(rand(rng, B64, 64) for _ in range(5))
    return f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----"


def _ca_bundle(rng: random.Random, _: str) -> str:
    return base64.b64encode(b"-----BEGIN CERTIFICATE-----" + rand(rng, B62, 30).encode()).decode()


def _woff2(rng: random.Random, _: str) -> str:
    """A web font as a data URI holds it: the ``wOF2`` header, then compressed bytes."""
    return base64.b64encode(b"wOF2" + rng.randbytes(90)).decode()


_GENERATORS: dict[str, Generator] = {
    **GENERATORS,
    "word": _word,
    "sentence": lambda rng, n: _sentence(rng, int(n)),
    "uuid": _uuid,
    "b64_text": _b64_text,
    "certificate": _certificate,
    "ca_bundle": _ca_bundle,
    "woff2": _woff2,
}


@cache
def _families() -> tuple[tuple[str, str], ...]:
    """(family, pattern) of ``lookalikes.toml``, family by family, in its order."""
    data = read_data("lookalikes.toml")
    return tuple((family, str(p)) for family, patterns in data.items() for p in patterns)


def lookalikes(seed: int = 0, total: int = 320) -> list[Sample]:
    """``total`` look-alikes, drawn family by family in turn; none holds a secret."""
    rng = random.Random(seed + 1)
    makers = _families()
    out: list[Sample] = []
    for i in range(total):
        family, pattern = makers[i % len(makers)]
        out.append(Sample(draw(pattern, rng, _GENERATORS), family, ()))
    return out
