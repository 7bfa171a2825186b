"""Secret redaction: keys, tokens and passwords never leave the process or land in a page.

:func:`redact` replaces what looks like a credential with ``[REDACTED]`` and keeps the text around
it, so a prompt or a claim still reads naturally ("export OPENAI_API_KEY=[REDACTED]"). It runs on
every text sent to a model (:mod:`reverie.llm.prompts`), on every text a cycle writes into a page
(:func:`redact_plan`, called by :mod:`reverie.dream.cycle` for every distiller), on recall's
episode excerpts, on Markdown import and on the training export.

A secret is found in one of three ways (the rules live in :mod:`reverie.redaction`):

1. by **shape** — a vendor's documented prefix and alphabet (``ghp_…``, ``AKIA…``, Slack and
   Discord webhook URLs, PEM private key blocks, JWTs; :mod:`~reverie.redaction.formats`);
2. by **context** — a name that says secret next to a value that is not plainly something else
   (``DB_PASSWORD=…``, ``--api-key …``, ``mysql -pX``, ``curl -u user:pass``,
   ``postgres://u:pass@h``, ``Authorization: …``, "the password is …", "Das Passwort lautet …";
   :mod:`~reverie.redaction.context`, :mod:`~reverie.redaction.commands`,
   :mod:`~reverie.redaction.judge`);
3. by **randomness** alone — a long string whose alphabet, character classes and entropy say it
   was drawn at random, outside public keys, labelled digests and Reverie's own ids
   (:mod:`~reverie.redaction.entropy`); or by what base64 wraps (a private key, ``user:pass``).

Every rule reports the span of the secret only; overlapping spans are merged and each replaced
once, so redacting is idempotent (``redact(redact(t)) == redact(t)``). Personal data (e-mail,
phone, card numbers) follows :class:`reverie.config.RedactionConfig`: kept by default, tagged
(``[EMAIL]``) or redacted. The figures on a generated corpus are ``reverie bench redact``'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from reverie.config import RedactionConfig
from reverie.redaction.commands import (
    find_auth_headers,
    find_command_secrets,
    find_cookies,
    find_flags,
    find_login_tokens,
    find_url_credentials,
)
from reverie.redaction.context import (
    find_assignments,
    find_grouped_keys,
    find_keyed_calls,
    find_name_value,
    find_named_arguments,
    find_prose,
    find_random,
    find_sql,
    find_terraform,
    find_xml,
)
from reverie.redaction.formats import find_formats
from reverie.redaction.judge import name_strength, secret_value
from reverie.redaction.languages import find_prose_languages
from reverie.redaction.logins import find_logins, find_pgpass
from reverie.redaction.pii import PII_CLASSES, find_pii

if TYPE_CHECKING:
    from reverie.models import Episode
    from reverie.models.plan import Plan

__all__ = ["DEFAULT", "MARK", "Redactor", "Span", "redact", "redact_plan", "redact_value"]

MARK = "[REDACTED]"

Finder = Callable[[str], Iterator[tuple[int, int, str]]]
_NAME_CUES = (
    "pass",
    "pw",
    "pin",
    "secret",
    "token",
    "key",
    "cred",
    "bearer",
    "pat",
    "connection",
    "sig",
    "salt",
    "session",
    "sid",
    "cookie",
    "auth",
    "hmac",
    "dsn",
    "webhook",
    "nonce",
    "seed",
    "psk",
)
"""Every name :mod:`reverie.redaction.judge` reads as secret holds one of these (lower case)."""
_COMMAND_CUES = (
    "mysql",
    "mariadb",
    "mycli",
    "sshpass",
    "redis-cli",
    "login",
    "mongo",
    "ldap",
    "smbclient",
    "rpcclient",
    "smbmap",
    "sqlcmd",
    "bcp",
    "osql",
    "openssl",
    "htpasswd",
    "zip ",
    "zipcloak",
    "7z ",
    "7za ",
    "rar ",
    "oathtool",
    "mc alias",
    "mc config",
    "curl",
    "wget",
    "http ",
    "https ",
    "xh ",
    "aria2c",
    "lynx",
)
_LOGIN_CUES = (
    "echo", "printf", "<<<", "-u", "-l ", "/u", "/ru", "net ", "setx", "securestring", "sqlplus",
    "rman", "expdp", "impdp", "sqlldr", "/p", "/secret", "/token", "/key", "/auth", "/cred",
    "log", "sign", "cred", "account", "use", "u/p", "expect", "jdbc:oracle",
)  # fmt: skip
_FINDERS: tuple[tuple[Finder, tuple[str, ...] | None], ...] = (
    (find_formats, None),
    (find_url_credentials, ("://",)),
    (find_auth_headers, ("authori", "bearer", "basic", "token")),
    (find_flags, _NAME_CUES),
    (find_command_secrets, _COMMAND_CUES),
    (find_login_tokens, (" login ",)),
    (find_cookies, ("cookie", "-b ")),
    (find_logins, _LOGIN_CUES),
    (find_pgpass, (":",)),
    (find_assignments, _NAME_CUES),
    (find_name_value, ("value:",)),
    (find_xml, ("</", "value=", "value =")),
    (find_terraform, ("variable",)),
    (find_named_arguments, ("('", '("', "( '", '( "')),
    (find_keyed_calls, ("hmac", "totp", "hotp", "fernet", "aes.", "aesgcm", "aesccm")),
    (find_grouped_keys, ("key", "code", "secret", "seed", "otp")),
    (find_sql, ("identified", "password", "insert")),
    (find_prose, _NAME_CUES),
    (find_prose_languages, None),
    (find_random, None),
)
"""Each finder with the lower-case strings one of which a text must hold for it to find
anything (None: always run); the cues keep ordinary sentences cheap."""
_CUE_PATTERNS = {
    cues: re.compile("|".join(map(re.escape, cues))) for _, cues in _FINDERS if cues is not None
}
_SECRET_FINDERS = [
    (finder, None if cues is None else _CUE_PATTERNS[cues]) for finder, cues in _FINDERS
]
"""Finders sharing cues share one pattern, searched once per text (:meth:`Redactor.spans`)."""
_TEXT_FIELDS = frozenset({"title", "text", "reason"})
_LIMITS = {"title": 200, "text": 4000, "reason": 1000}
_CLEAN_UP_TO = 1024
_CLEAN_KEPT = 4096


class Span(NamedTuple):
    """``text[start:end]`` gives way to ``replacement``; ``rule`` says which rule found it."""

    start: int
    end: int
    rule: str
    replacement: str


class Redactor:
    """Redaction under one :class:`~reverie.config.RedactionConfig`.

    Keeps a bounded set of short texts already found clean: recall redacts the same excerpts
    and titles again and again. A text that held anything to redact is never remembered.
    """

    def __init__(self, config: RedactionConfig | None = None) -> None:
        self.config = config or RedactionConfig()
        policies = {name: getattr(self.config, name) for name in PII_CLASSES}
        self._pii = frozenset(name for name, policy in policies.items() if policy != "off")
        self._pii_mark = {
            name: MARK if policy == "redact" else f"[{name.upper()}]"
            for name, policy in policies.items()
        }
        self._clean: set[str] = set()

    @property
    def handles_personal_data(self) -> bool:
        """Whether any personal-data class is tagged or redacted (not ``off``)."""
        return bool(self._pii)

    def spans(self, text: str) -> list[Span]:
        """The merged spans of ``text`` to replace, in order, none overlapping."""
        low = text.lower()
        held: dict[re.Pattern[str], bool] = {}
        found: list[Span] = []
        for finder, cues in _SECRET_FINDERS:
            if cues is not None:
                hit = held.get(cues)
                if hit is None:
                    hit = held[cues] = cues.search(low) is not None
                if not hit:
                    continue
            found += [Span(s, e, rule, MARK) for s, e, rule in finder(text) if e > s]
        if self._pii:
            found += [Span(s, e, c, self._pii_mark[c]) for s, e, c in find_pii(text, self._pii)]
        return _merge(found)

    def text(self, text: str) -> str:
        """``text`` with every credential (and personal data, by policy) replaced."""
        if not text or text in self._clean:
            return text
        spans = self.spans(text)
        if not spans:
            if len(text) <= _CLEAN_UP_TO:
                if len(self._clean) >= _CLEAN_KEPT:
                    self._clean.clear()
                self._clean.add(text)
            return text
        return _replace(text, spans)

    def value(self, value: Any, name: str = "") -> Any:
        """``value`` redacted inside its parsed form: every string (dicts, lists, tuples) on
        its own, so a mark never eats the quote or bracket of the JSON that encodes it.

        A string under a key is also judged with the key as its name, as an assignment is
        (``{"password": "hunter2"}``), but never by the name alone: the value must be one token
        that is not plainly something else (:func:`~reverie.redaction.judge.secret_value`), so
        ``{"secret": "the sauce is ketchup"}`` stays as written. Keys are kept: they are a
        structure's names, not its data.
        """
        if isinstance(value, str):
            return self._named(name, value)
        if isinstance(value, dict):
            return {k: self.value(v, str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v, name) for v in value]
        return value

    def _named(self, name: str, value: str) -> str:
        strength = name_strength(name) if name else None
        single = bool(value) and not any(ch.isspace() for ch in value.strip())
        if strength is not None and single and secret_value(value, strength):
            return MARK
        return self.text(value)

    def episode(self, episode: Episode) -> Episode:
        """``episode`` as it may leave Reverie: its free texts, entities and metadata redacted
        (:meth:`text`, :meth:`value`); ids, scope, dates and tools kept. The stored episode is
        raw evidence and stays so; this is the one policy every read surface applies
        (docs/security.md)."""
        update: dict[str, Any] = {
            "situation": self.text(episode.situation),
            "action": self.text(episode.action),
            "entities": [self.text(e) for e in episode.entities],
            "metadata": self.value(episode.metadata),
        }
        for name in ("outcome_details", "error", "lesson", "category"):
            if (text := getattr(episode, name)) is not None:
                update[name] = self.text(text)
        changed = {k: v for k, v in update.items() if v != getattr(episode, k)}
        return episode.model_copy(update=changed) if changed else episode

    def plan(self, plan: Plan) -> Plan:
        """``plan`` with titles, claim texts and reasons redacted; ids and hashes untouched."""
        data = plan.model_dump(mode="python")
        cleaned = self._fields(data)
        return plan if cleaned == data else type(plan).model_validate(cleaned)

    def _fields(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self._fields(v, k) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self._fields(v, key) for v in value)
        if isinstance(value, str) and key in _TEXT_FIELDS:
            return self.text(value)[: _LIMITS[key]]
        return value


def _merge(spans: list[Span]) -> list[Span]:
    """Overlapping spans become one; a secret's mark wins over a personal-data tag."""
    merged: list[Span] = []
    for span in sorted(spans):
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            mark = MARK if MARK in (last.replacement, span.replacement) else last.replacement
            merged[-1] = Span(last.start, max(last.end, span.end), last.rule, mark)
        else:
            merged.append(span)
    return merged


def _replace(text: str, spans: list[Span]) -> str:
    parts, at = [], 0
    for span in spans:
        parts += [text[at : span.start], span.replacement]
        at = span.end
    parts.append(text[at:])
    return "".join(parts)


DEFAULT = Redactor()
"""The redactor of the default :class:`~reverie.config.RedactionConfig` (personal data kept)."""


def redact(text: str) -> str:
    """``text`` with every credential-looking span replaced by ``[REDACTED]``."""
    return DEFAULT.text(text)


def redact_value(value: Any) -> Any:
    """``value`` redacted inside its parsed form (:meth:`Redactor.value`)."""
    return DEFAULT.value(value)


def redact_plan(plan: Plan) -> Plan:
    """``plan`` with titles, claim texts and reasons redacted; ids and hashes untouched."""
    return DEFAULT.plan(plan)
