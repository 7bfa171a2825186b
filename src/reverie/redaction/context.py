"""Secrets found by what stands next to them: a name that says secret, or nothing but randomness.

Each finder yields ``(start, end, rule)`` for the value alone, so the name stays readable
("``DB_PASSWORD=[REDACTED]``"). The judgement of names and values is
:mod:`reverie.redaction.judge`'s; this module only knows the shapes in which a name meets a value:

* assignments in code, config and env files, headers and query strings — ``name = value``,
  ``name: value``, ``"name": "value"``, ``name => value``, ``?name=value&``, ``Name=value;``;
  and a compound name followed by a space (``aws_secret_access_key wJalr…``);
* XML elements (``<password>…</password>``) and SQL (``IDENTIFIED BY '…'``,
  ``WITH PASSWORD '…'``);
* prose — "the password is …", "token for prod was …";
* nothing at all: a long string that looks random (:func:`reverie.redaction.entropy.looks_random`)
  outside the shielded spans is a high-entropy secret by itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from reverie.redaction.entropy import looks_random, shielded
from reverie.redaction.judge import (
    is_ordinary_word,
    name_strength,
    names_a_resource,
    plainly_not_secret,
    secret_value,
)

__all__ = [
    "find_assignments",
    "find_name_value",
    "find_prose",
    "find_random",
    "find_sql",
    "find_xml",
]

Found = Iterator[tuple[int, int, str]]

_VALUE = r"""
    (?=\\?(?P<quote>["'`])(?P<quoted>(?:(?!(?P=quote)).){1,500}?)\\?(?P=quote)
      | (?P<bare>[^\s,;"'`&)}\]<>]{1,500}) )
"""
_CUE = re.compile(
    r"(?i)pass|pw|pin|secret|token|key|cred|bearer|pat|connection|sig|salt|session|sid|cookie"
    r"|auth|hmac|dsn|webhook|nonce|seed"
)
"""Every name the judge reads as secret holds one of these; names are looked for around them."""
_NAME = re.compile(r"[\w.-]{1,81}")
_AFTER_NAME = re.compile(r"\\?[\"']?\]?(?P<sep>\s*(?:=>|:=|=|:)\s*)" + _VALUE, re.X)
_AFTER_SPACED_NAME = re.compile(r"[ \t]+" + _VALUE, re.X)
_COMPOUND = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+")
_XML = re.compile(
    r"<(?P<name>[A-Za-z_][\w:.-]{1,60})(?:\s[^>]*)?>(?P<value>[^<\n]{1,500})</(?P=name)>"
)
_SQL = re.compile(
    r"(?i)\b(?:IDENTIFIED\s+BY(?:\s+PASSWORD)?|PASSWORD)\s+(['\"])(?P<value>[^'\"\n]{1,200})\1"
)
_PROSE = re.compile(
    r"""(?ix)
    (?<![:/])\b(?P<name>pass(?:word|phrase|code)s?|passwd|pwd|pw|pin|secret|token
      |(?:api|access|secret|private|auth|master|license|account)[ -]?key)\b
    (?P<link>(?:[ \t]+(?:for|of|on|to)[ \t]+[\w@./:-]{1,60})?
      (?:[ \t]*(?:\bis\b|\bwas\b|\bare\b|=|:|->|\b(?:set|changed|reset)[ \t]+to\b
        |\bbecame\b|\breads?\b|\bof\b)[ \t]*|[ \t]+))
    (?P<value>"[^"\n]{1,200}"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s,;]{1,200})
    """
)
_CANDIDATE = re.compile(r"(?<![\w+/=.-])[A-Za-z0-9+/_-]{32,}={0,3}(?![\w+/=-])")
_TRAILING = ".,:;)!?"
_HAS_VERB = re.compile(r"(?i)\b(?:is|was|are|set|changed|reset|became|reads?|of)\b|[=:]|->")


def find_assignments(text: str) -> Found:
    """Values given to a secret-saying name by ``=``, ``:``, ``=>`` or (compound names) a space."""
    done = 0
    for cue in _CUE.finditer(text):
        if cue.start() < done:
            continue  # a cue inside the name just read
        name = _name_around(text, cue.start())
        if name is None:
            continue
        start, done = name
        yield from _assigned(text, text[start:done], done)


def _name_around(text: str, at: int) -> tuple[int, int] | None:
    """The span of the identifier holding ``text[at]``, if it can be a name (not a flag, not
    the inside of a URL or an ARN)."""
    start = at
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    found = _NAME.match(text, start)
    if found is None or not (text[start].isalpha() or text[start] == "_"):
        return None
    if start > 0 and text[start - 1] in ":/" and not text.endswith("$env:", 0, start):
        return None  # inside a URL or an ARN; PowerShell's $env:NAME is a name
    return start, found.end()


def _assigned(text: str, name: str, end: int) -> Found:
    strength = name_strength(name)
    if strength is None:
        return
    m = _AFTER_NAME.match(text, end)
    spaced = m is None
    if m is None and _COMPOUND.fullmatch(name):
        m = _AFTER_SPACED_NAME.match(text, end)
    if m is None:
        return
    group = "quoted" if m.group("quoted") is not None else "bare"
    value = m.group(group)
    if group == "bare":  # "…with KEY=abc123: it failed" — the colon ends the sentence's clause
        value = value.rstrip(".:") or value
    if spaced and not _spaced_value(value):
        return
    if group == "bare" and (_reads_as_prose(text, m, value) or _nested(value)):
        return
    if secret_value(value, strength):
        yield m.start(group), m.start(group) + len(value), f"assignment:{strength.value}"


def _nested(value: str) -> bool:
    """``SharedAccessSignature=sv=2022-11-02&sig=…``: the value is itself an assignment."""
    return bool(re.search(r"=[^=]", value))


def _spaced_value(value: str) -> bool:
    """``aws_secret_access_key wJalr…``: only a value shaped like a key, never a word."""
    return looks_random(value, hex_ok=True, min_length=12) or bool(
        re.search(r"\d", value) and re.search(r"[A-Za-z]", value) and len(value) >= 8
    )


def _reads_as_prose(text: str, m: re.Match[str], value: str) -> bool:
    """``Secret: restart the pod twice`` — a word after a colon, and the sentence goes on."""
    sep = m.groupdict().get("sep") or ""
    if ":" not in sep or "=" in sep:
        return False
    if not re.fullmatch(r"[A-Za-z][a-z]+", value):
        return False
    rest = text[m.end("bare") : m.end("bare") + 2]  # the lookahead ends the match at the sep
    return rest.startswith(" ") and rest[1:].isalpha()


_NAME_VALUE = re.compile(
    r"\bname:[ \t]*[\"']?(?P<name>[A-Za-z_][\w.-]{0,80})[\"']?[ \t]*\n[ \t]*-?[ \t]*value:[ \t]*"
    r"(?:(?P<q>[\"'])(?P<quoted>[^\"'\n]{1,500})(?P=q)|(?P<bare>[^\s#]{1,500}))"
)


def find_name_value(text: str) -> Found:
    """A Kubernetes env entry: ``- name: DB_PASSWORD`` then ``value: …`` on the next line."""
    for m in _NAME_VALUE.finditer(text):
        strength = name_strength(m.group("name"))
        group = "quoted" if m.group("quoted") is not None else "bare"
        if strength is not None and secret_value(m.group(group), strength):
            yield m.start(group), m.end(group), f"name_value:{strength.value}"


def find_xml(text: str) -> Found:
    """``<password>…</password>``, ``<ApiKey>…</ApiKey>``."""
    if "</" not in text:
        return
    for m in _XML.finditer(text):
        strength = name_strength(m.group("name").rpartition(":")[2])
        if strength is not None and secret_value(m.group("value"), strength):
            yield m.start("value"), m.end("value"), f"xml:{strength.value}"


def find_sql(text: str) -> Found:
    """``CREATE USER … IDENTIFIED BY '…'``, ``ALTER ROLE … WITH PASSWORD '…'``."""
    for m in _SQL.finditer(text):
        if not plainly_not_secret(m.group("value")):
            yield m.start("value"), m.end("value"), "sql_password"


def find_prose(text: str) -> Found:
    """ "the password is S3cr3t!", "the token for prod was abc123…", "pwd: hunter2"."""
    for m in _PROSE.finditer(text):
        raw = m.group("value")
        quoted = raw[0] in "\"'`"
        value = raw[1:-1] if quoted else raw.rstrip(_TRAILING.replace("!", ""))
        start = m.start("value") + (1 if quoted else 0)
        if not quoted and _label_then_sentence(text, m):
            continue
        if m.group("name").lower() == "pin" and not value.isdigit():
            continue  # a PIN is digits; "pin numpy==1.26" pins a version
        if _prose_secret(value, quoted=quoted, verb=bool(_HAS_VERB.search(m.group("link")))):
            yield start, start + len(value), "prose"


def _label_then_sentence(text: str, m: re.Match[str]) -> bool:
    """``Secret: restart the pod twice`` — a label, then a sentence that goes on."""
    if ":" not in m.group("link") or not re.fullmatch(r"[A-Za-z][a-z]+", m.group("value")):
        return False
    rest = text[m.end("value") : m.end("value") + 2]
    return rest.startswith(" ") and rest[1:].isalpha()


def _prose_secret(value: str, *, quoted: bool, verb: bool) -> bool:
    if plainly_not_secret(value) or names_a_resource(value):
        return False
    if quoted or verb:
        return not (re.fullmatch(r"[A-Za-z][a-z]+", value) and is_ordinary_word(value))
    has_digit = any(c.isdigit() for c in value)
    has_other = bool(re.search(r"[^A-Za-z0-9]", value)) or bool(re.search(r".[A-Z]", value))
    return len(value) >= 6 and any(c.isalpha() for c in value) and (has_digit or has_other)


def find_random(text: str) -> Found:
    """Long strings that look random by themselves, outside public keys, digests and Reverie ids."""
    shields = None
    for m in _CANDIDATE.finditer(text):
        if not looks_random(m.group(0), min_length=32):
            continue
        if shields is None:
            shields = shielded(text)
        if not any(s <= m.start() and m.end() <= e for s, e in shields):
            yield m.start(), m.end(), "high_entropy"
