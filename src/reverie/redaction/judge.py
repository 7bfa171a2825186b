"""Whether a *name* says secret and whether the *value* given to it is one.

Context rules (:mod:`reverie.redaction.context`, :mod:`reverie.redaction.commands`) find a name
next to a value — ``DB_PASSWORD=…``, ``--api-key …``, ``"the password is …"`` — and ask two
questions here.

**What does the name say?** It is split into words (``imagePullSecrets`` → image, pull,
secrets; ``aws_secret_access_key`` → aws, secret, access, key) and read by words, never by
substring, so ``passwordless`` and ``tokenizer`` say nothing. A name is

* ``STRONG`` when its words name one credential: password, secret, token, api key, client
  secret, account key… Its value is redacted unless it is plainly not a secret;
* ``WEAK`` when it is about credentials without holding one: a plural (``imagePullSecrets``,
  ``max_tokens``), a reference or a measure (``secretName``, ``password_file``,
  ``token_url``, ``password_min_length``), or a word that is only sometimes secret (``key``,
  ``signature``, ``session``). Its value is redacted only when it looks random
  (:func:`reverie.redaction.entropy.looks_random`);
* nothing otherwise.

**Is the value plainly not a secret?** Placeholders (``<token>``, ``${DB_PASSWORD}``,
``****``, ``[REDACTED]``), references to where a secret is kept (paths, ``vault:``, ``op://``,
ARNs, ``!Ref``, an environment variable's name), booleans and null, and ordinary words
("the password is *required*") are kept. Erring the other way leaks a credential, so anything
else given to a strong name goes.
"""

from __future__ import annotations

import functools
import itertools
import re
from enum import Enum

from reverie.redaction.entropy import looks_random, wraps_credential

_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")

__all__ = [
    "Strength",
    "is_ordinary_word",
    "name_strength",
    "names_a_resource",
    "plainly_not_secret",
    "reads_as_code",
    "secret_value",
    "split_words",
]


def _words(text: str) -> list[str]:
    return text.split()


class Strength(Enum):
    STRONG = "strong"
    WEAK = "weak"


_STRONG_WORDS = frozenset(
    _words(
        "password passwd passphrase passcode pwd pass pw secret token apikey apitoken authtoken "
        "accesstoken accountkey credential credentials storepass keypass srcstorepass "
        "deststorepass privatekey secretkey clientsecret sharedaccesskey sharedaccesssignature "
        "bearer pat psk authkey"
    )
)
_STRONG_PAIRS = frozenset(
    {
        ("api", "key"),
        ("access", "key"),
        ("secret", "key"),
        ("private", "key"),
        ("account", "key"),
        ("client", "secret"),
        ("app", "secret"),
        ("consumer", "secret"),
        ("shared", "access"),
        ("master", "key"),
        ("encryption", "key"),
        ("signing", "key"),
        ("auth", "key"),
        ("subscription", "key"),
        ("license", "key"),
        ("webhook", "secret"),
        ("connection", "string"),
        ("session", "token"),
        ("id", "token"),
        ("refresh", "token"),
    }
)
_WEAK_WORDS = frozenset(
    _words(
        "secrets tokens passwords credentials keys key sig signature salt session sessionid sid "
        "cookie auth hmac dsn webhook nonce seed"
    )
)
_REFERENCE_ENDINGS = frozenset(
    _words(
        "name names ref refs file files path dir url uri endpoint id ids arn env var vars type "
        "kind "
        "length len size count ttl expiry expires expiration lifetime age timeout policy policies "
        "header prefix suffix format mode enabled disabled required store provider manager "
        "rotation "
        "version min max hash hashed digest stdin location source from field fields label selector "
        "mount volume template key"
    )
)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_PLACEHOLDER = re.compile(
    r"""(?ix)^(?:
      \[REDACTED\] | \[?redacted\]? | \[[A-Z_]+\] | \*+ | x{3,} | \.{3,} | … | -+ | _+ | \#+
    | <[^>]*> | \{\{.*\}\} | \{[A-Za-z_][\w.]*\} | \$\{?[A-Za-z_][\w.:-]*\}? | %[\w.-]+%
    | %\([\w]+\)s
    | \$\(.* | \([A-Za-z][\w.-]* | `.*` | env\(.*\) | .{1,11}(?:\.{3}|…)
    | ![A-Za-z]+(?:\s.*)? | &[A-Za-z_][\w-]* | ENC\[.*\]
    | null | nil | none | true | false | yes | no | on | off | undefined | empty | unset | n/?a
    | (?:your|my|the|an?|some|example|dummy|fake|sample|test)[_-]?(?:api[_-]?)?
      (?:key|token|secret|password|pass|pwd|value)(?:[_-]?here)?
    | changeme | placeholder | secret | password | token | redacted | hidden | masked | omitted
    )$"""
)
_REFERENCE = re.compile(
    r"""(?ix)^(?:
      [/~] | \.{1,2}/ | [a-z]:\\ | file: | env: | vault: | op:// | sm:// | ssm: | arn: | awskms:
    | gcpkms: | azurekeyvault: | keyvault: | secretsmanager: | projects/[^/]+/secrets/ | kms:
    | secret/ | secrets/ | kv/ | https?://(?![^/\s]*@)
    | (?:sha(?:1|224|256|384|512)|md5|blake2[bs]?)[:=-]
    | pk_(?:live|test)_ | pk\.eyJ
    )"""
)
"""References, labelled digests (``SHA256:…`` fingerprints) and publishable keys, which their
issuers mean to be embedded in public code (Stripe ``pk_live_…``, Mapbox ``pk.eyJ…``)."""
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_RESOURCE_NAME = re.compile(
    r"^[a-z0-9]+(?:[-.][a-z0-9]+)*[-.](?:creds?|credentials|secrets?|tokens?|tls|certs?|keys?"
    r"|keypair|passwords?|auth|sa|config|env|registry|pull)$"
)
_REFERENCE_OPENINGS = frozenset(
    {"existing", "use", "from", "ref", "next", "page", "continuation", "pagination", "cursor"}
)
"""A name opening with one of these refers to a secret or is a pagination cursor
(``nextPageToken``): a name about a token, not one."""
_PUBLIC_WORDS = frozenset({"public", "publishable", "pub"})
"""A name holding one of these says its value is meant to be seen (``PublicKey``,
``public_key_id``, ``NEXT_PUBLIC_STRIPE_KEY``)."""
_COMMON = frozenset(
    _words(
        """a an the this that these those it its is was be been being are were will would should
        can could may might must not no now still also only just never always usually sometimes
        then here there what which who whom whose when where why how all any some each every
        both either neither same different other another such so too very quite rather less more
        most least much many few one two new old wrong right correct incorrect invalid valid
        expired expiring missing empty blank short long weak strong good bad fine ok okay
        secure insecure unknown set unset saved cached hidden visible sensitive mandatory
        optional required needed shown masked hashed encrypted rotated revoked generated given
        provided available unavailable stored kept managed read written sent passed used
        reused shared leaked exposed changed reset updated deleted removed created issued
        accepted rejected denied refused ignored case in on at by for from of to with via into
        onto under over inside within without about after before during per as if but or and
        nor yet because since until unless while whether out up down off back away again
        ready done gone broken stale fresh active inactive disabled enabled locked unlocked
        correctly incorrectly somewhere something nothing anything everything elsewhere
        different unique random default configured unchanged identical similar
        stolen compromised safe unsafe public private rejected working failing wrong"""
    )
)
_WORDY_ENDING = re.compile(r"(?:ed|ing|ly|able|ible|tion|sion|ment|ness|ity|ous|ive|ful|less)$")


def split_words(name: str) -> list[str]:
    """``"imagePullSecrets"`` → ``["image", "pull", "secrets"]``."""
    return [w.lower() for w in _WORD.findall(name)]


@functools.lru_cache(maxsize=4096)
def name_strength(name: str) -> Strength | None:
    """What ``name`` says about the value given to it (see the module docstring)."""
    words = split_words(name)
    if not words or any(w in _PUBLIC_WORDS for w in words):
        return None
    if _says_strong(words):
        if words[0] in _REFERENCE_OPENINGS:
            return Strength.WEAK
        if words[-1] in _REFERENCE_ENDINGS and not _ends_in_key_pair(words):
            return Strength.WEAK
        return Strength.STRONG
    return Strength.WEAK if any(w in _WEAK_WORDS for w in words) else None


_GLUED_ENDINGS = (
    "password",
    "authkey",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "secretkey",
    "accesskey",
    "privatekey",
    "accountkey",
)


def _says_strong(words: list[str]) -> bool:
    """A strong word, a strong pair, or a strong word glued to the end of another
    (``PGPASSWORD``, ``csrftoken``; never a glued start: ``passwordless``, ``tokenizer``)."""
    if any(w in _STRONG_WORDS or w.endswith(_GLUED_ENDINGS) or _glued_pass(w) for w in words):
        return True
    return any(pair in _STRONG_PAIRS for pair in itertools.pairwise(words))


_NOT_PASS = frozenset(
    _words("bypass compass encompass overpass underpass surpass trespass multipass")
)


def _glued_pass(word: str) -> bool:
    """``requirepass``, ``rootpass``: ``pass`` glued to the end of another word (not
    ``bypass``)."""
    return len(word) > 6 and word.endswith("pass") and word not in _NOT_PASS


def _ends_in_key_pair(words: list[str]) -> bool:
    """``secret_key``, ``api_key``: ``key`` ends the name but is the credential, not its label."""
    return words[-1] == "key" and len(words) >= 2 and (words[-2], "key") in _STRONG_PAIRS


def plainly_not_secret(value: str) -> bool:
    """Placeholders, references, booleans and ordinary words (see the module docstring)."""
    bare = value.strip().strip("\"'").strip()
    if len(bare) < 4 or bare.startswith("[REDACTED"):
        return True
    if _PLACEHOLDER.match(bare) or _REFERENCE.match(bare) or _ENV_NAME.match(bare):
        return True
    return is_ordinary_word(bare)


_CALL = re.compile(r"""[A-Za-z_][\w.]*[(\[](?:["'][^"']*(?:["'][)\]]*)?)?""")


def reads_as_code(value: str) -> bool:
    """``os.environ["DB_PASSWORD"]``, ``getpass.getpass("…``: code that fetches the value."""
    return bool(_CALL.fullmatch(value))


def names_a_resource(value: str) -> bool:
    """``db-credentials``, ``cluster-token``: the name of an object (a Kubernetes Secret) that
    holds a secret, as prose mentions it ("kubectl get secret cluster-token")."""
    return bool(_RESOURCE_NAME.match(value))


def is_ordinary_word(value: str) -> bool:
    """A lower-case (or Capitalised) English-looking word: ``required``, ``rotated``, ``Valid``."""
    if not re.fullmatch(r"[A-Za-z][a-z]+", value):
        return False
    low = value.lower()
    return low in _COMMON or bool(_WORDY_ENDING.search(low))


def secret_value(value: str, strength: Strength) -> bool:
    """Whether ``value``, given to a name of ``strength``, is to be redacted."""
    if plainly_not_secret(value):
        return False
    if strength is Strength.STRONG:
        return True
    bare = value.strip("\"'")
    if _UUID.fullmatch(bare):
        return False  # a weak name's UUID is an id (a message key, a session's id in a log)
    return looks_random(bare, hex_ok=True, min_length=16) or wraps_credential(bare)
