"""Secrets found by what stands next to them: a name that says secret, or nothing but randomness.

Each finder yields ``(start, end, rule)`` for the value alone, so the name stays readable
("``DB_PASSWORD=[REDACTED]``"). The judgement of names and values is
:mod:`reverie.redaction.judge`'s; this module only knows the shapes in which a name meets a value:

* assignments in code, config and env files, headers and query strings — ``name = value``,
  ``name: value``, ``"name": "value"``, ``name => value``, ``?name=value&``, ``Name=value;``;
  and a compound name followed by a space (``aws_secret_access_key wJalr…``);
* XML elements (``<password>…</password>``) and attributes (``<add key="…" value="…"/>``), SQL
  (``IDENTIFIED [WITH plugin] BY '…'``, ``WITH PASSWORD '…'``, the literal of a secret-saying
  column in ``INSERT … VALUES``), a Terraform variable's ``default``;
* calls — a first argument naming the second (``define('DB_PASSWORD', '…')``), a literal handed
  to a function that takes a key (``hmac.new(b'…')``, ``pyotp.TOTP('…')``);
* prose — "the password is …", "token for prod was …";
* nothing at all: a long string that looks random (:func:`reverie.redaction.entropy.looks_random`)
  outside the shielded spans and not labelled as an id or as public is a high-entropy secret by
  itself; so is base64 that wraps a private key, and a base32 key printed in groups of four.

A value that is code is no value: ``env("KEY")``, ``os.environ["KEY"]``, ``%(name)s``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from reverie.redaction.entropy import looks_random, shielded, wraps_credential
from reverie.redaction.judge import (
    Strength,
    is_ordinary_word,
    name_strength,
    names_a_resource,
    plainly_not_secret,
    reads_as_code,
    secret_value,
    split_words,
)

__all__ = [
    "find_assignments",
    "find_grouped_keys",
    "find_keyed_calls",
    "find_name_value",
    "find_named_arguments",
    "find_prose",
    "find_random",
    "find_sql",
    "find_terraform",
    "find_xml",
]

Found = Iterator[tuple[int, int, str]]

_VALUE = r"""
    (?=\\?(?P<quote>["'`])(?P<quoted>(?:(?!(?P=quote)).){1,500}?)\\?(?P=quote)
      | (?P<bare>[^\s,;"'`&)}\]<>]{1,500}) )
"""
_CUE = re.compile(
    r"(?i)pass|pw|pin|secret|token|key|cred|bearer|pat|connection|sig|salt|session|sid|cookie"
    r"|auth|hmac|dsn|webhook|nonce|seed|psk"
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
    r"(?i)\b(?:IDENTIFIED\s+(?:WITH\s+\w+\s+)?BY(?:\s+PASSWORD)?|PASSWORD)\s+"
    r"(['\"])(?P<value>[^'\"\n]{1,200})\1"
)
_INSERT = re.compile(
    r"(?i)\bINSERT\s+INTO\s+[\w.`\"\[\]]+\s*\((?P<columns>[^()]{1,500})\)\s*VALUES\s*\("
)
_SQL_ITEM = re.compile(r"\s*(?:'(?P<quoted>(?:[^'\n]|'')*)'|(?P<other>[^,()'\n]*))\s*(?P<sep>[,)])")
_KEYED_CALL = re.compile(
    r"(?i)\b[\w.]*(?:hmac|totp|hotp|fernet|aes)[\w.]*\((?P<args>[^()\n]{1,600})\)?"
)
_LITERAL = re.compile(r"""(?:\b[rb]{1,2})?(?P<q>["'])(?P<value>[^"'\n]{8,500})(?P=q)""")
_ALGORITHM = re.compile(r"(?i)sha-?\d+|md5|blake2\w*|sha3[-_]\d+|aes-\d+-\w+")
_GROUPED_KEY = re.compile(r"[A-Z2-7]{4} [A-Z2-7]{4} [A-Z2-7]{4}(?: [A-Z2-7]{4})+")
_ATTRIBUTES = re.compile(
    r"<[\w:.-]+\s[^<>]*?\b(?:key|name)\s*=\s*\"(?P<name>[^\"<>]{1,80})\"[^<>]*?"
    r"\bvalue\s*=\s*\"(?P<value>[^\"<>\n]{1,500})\""
)
_TERRAFORM = re.compile(
    r"\bvariable\s+\"(?P<name>[\w-]{1,80})\"\s*\{[^{}]*?\bdefault\s*=\s*\"(?P<value>[^\"\n]{1,500})\""
)
_NAMED_ARGUMENTS = re.compile(
    r"(?<=[\w.])\(\s*(?P<q>[\"'])(?P<name>[A-Za-z_][\w.-]{1,80})(?P=q)\s*,\s*"
    r"(?P<v>[\"'])(?P<value>[^\"'\n]{1,500})(?P=v)"
)
_PROSE = re.compile(
    r"""(?ix)
    (?<![:/\w-])(?P<name>(?:api|access|secret|private|auth|master|license|account)[ -]?key
      |pass(?:word|phrase|code)s?|passwd|pwd|pw|pass|secret|token
      |pin(?:[ -]?(?:code|number))?|key)(?![\w-])
    """
)
"""A credential's name in prose; what links it to its value is read after it (:data:`_LINK`)."""
_QUALIFIER = re.compile(r"(?i)[ \t]+(?:for|of|on|to|at|in|with)[ \t]+")
_AUX = (
    r"(?:is|was|are|were|has|have|had|got|gets|will|would|should|must|shall|can|now|still"
    r"|currently|just|again|also|been|be)"
)
"""Auxiliaries and adverbs a link may open with (a closed class of English, not a domain's)."""
_LINK = re.compile(
    rf"""(?ix)
      [ \t]+(?:{_AUX}[ \t]+)+[a-z]+[ \t]+(?:to|as)[ \t]+
    | [ \t]+[a-z]+ed[ \t]+(?:to|as)[ \t]+
    | [ \t]+(?:{_AUX}[ \t]+)*(?:is|was|are|were|be|been|now|still|reads?|says|became|becomes
        |stays|remains|equals)[ \t]+
    | [ \t]*(?:=>|->|:=|=|:|[-\u2013\u2014](?=[ \t])|\([a-z]+\):?)[ \t]*
    """
)
"""What links a name to its value: a verb phrase ending in a copula or in ``… to``/``… as``
(``is``, ``has been changed to``, ``got reset to``), or a sign (``:``, ``=``, ``->``)."""
_PROSE_VALUE = re.compile(r""""[^"\n]{1,200}"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s,;]{1,200}""")
_CANDIDATE = re.compile(r"(?<![\w+/=.-])(?!//)[A-Za-z0-9+/_-]{32,}={0,3}(?![\w+/=-])")
_LONG_BASE64 = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{120,}={0,2}")
"""Long enough to hold a private key (an Ed25519 key's PEM is about 160 base64 characters)."""
_TRAILING = ".,:;)!?"


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
        yield from _assigned(text, start, done)


def _name_around(text: str, at: int) -> tuple[int, int] | None:
    """The span of the identifier holding ``text[at]``, if it can be a name (not a flag, not
    the inside of a URL or an ARN)."""
    start = at
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    found = _NAME.match(text, start)
    if found is None or not (text[start].isalpha() or text[start] == "_"):
        return None
    if start > 0 and text[start - 1] in ":/" and not text.endswith(("$env:", "/:"), 0, start):
        return (
            None  # inside a URL or an ARN; PowerShell's $env:NAME, .npmrc's //host/:NAME are names
        )
    return start, found.end()


def _assigned(text: str, start: int, end: int) -> Found:
    name = text[start:end]
    strength = name_strength(name)
    if strength is None:
        return
    m = _AFTER_NAME.match(text, end)
    spaced = m is None
    if m is None and (_COMPOUND.fullmatch(name) or _directive(text, start)):
        m = _AFTER_SPACED_NAME.match(text, end)
    if m is None or _between_strings(text, start, m):
        return
    group = "quoted" if m.group("quoted") is not None else "bare"
    value = m.group(group)
    if group == "bare":  # "…with KEY=abc123: it failed" — the colon ends the sentence's clause
        if _elided(value) or _is_code(text, m.end("bare"), value):
            return  # "sk_live_...": an elided example; env("KEY"), os.environ[…]: code
        value = value.rstrip(".:") or value
    if spaced and not _spaced_value(value):
        return
    if group == "bare" and (_reads_as_prose(text, m, value) or _nested(value)):
        return
    if group == "bare" and (_runs_a_command(text, m, value) or _then_password(text, m, value)):
        return
    if secret_value(value, strength):
        yield m.start(group), m.start(group) + len(value), f"assignment:{strength.value}"


_ELIDED = re.compile(r".{1,11}(?:\.{3}|…)")


def _elided(value: str) -> bool:
    """``sk_live_...``, ``AKIA…``: a prefix and an ellipsis, an example of a key's shape (a
    secret is longer than the eleven characters before the dots)."""
    return bool(_ELIDED.fullmatch(value))


def _directive(text: str, start: int) -> bool:
    """``requirepass X`` alone on its line: a config file's directive and its argument."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    return not text[line_start:start].strip() and len(line.split()) == 2


def _between_strings(text: str, start: int, m: re.Match[str]) -> bool:
    """``expect "Password:"; send …``: the name ends its own string, so the "value" in quotes
    after it is the gap between two strings."""
    quote = m.group("quote")
    before = text[start - 1 : start] if start else ""
    return quote is not None and before == quote and quote not in text[start : m.start("quote")]


_CODE = re.compile(r"[A-Za-z_][\w.]*[(\[]|%\(\w+")


def _is_code(text: str, end: int, value: str) -> bool:
    """A call or a subscript (``env(``, ``os.environ[``, ``getpass.getpass(``) or a format
    field (``%(db_password)s``) whose argument follows in quotes or parentheses."""
    return bool(_CODE.fullmatch(value)) and text[end : end + 1] in ('"', "'", ")", "")


def _runs_a_command(text: str, m: re.Match[str], value: str) -> bool:
    """``$env:TOKEN = Get-Content C:\\t.txt``: a PowerShell cmdlet (Verb-Noun) with arguments
    after it reads the value from elsewhere."""
    rest = text[m.start("bare") + len(value) : m.start("bare") + len(value) + 2]
    return bool(re.fullmatch(r"[A-Z][a-z]+-[A-Z][A-Za-z]+", value)) and rest[:1] == " "


_PASSWORD_NEXT = re.compile(
    r"(?i)[ \t]+(?:with[ \t]+)?(?:pass(?:word)?|pwd?)\b|[ \t]+[/:][ \t]+\S|/\S"
)


def _then_password(text: str, m: re.Match[str], value: str) -> bool:
    """``credentials: alice with password …``, ``creds: alice / …``: the value is the user
    name, and the password follows it (:mod:`reverie.redaction.logins` finds that)."""
    return bool(_PASSWORD_NEXT.match(text, m.start("bare") + len(value)))


_ASSIGNMENT = re.compile(r"[A-Za-z_][\w.-]*=[^=]")


def _nested(value: str) -> bool:
    """``SharedAccessSignature=sv=2022-11-02&sig=…``: the value is itself an assignment."""
    return "=" in value and bool(_ASSIGNMENT.match(value))


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


def find_terraform(text: str) -> Found:
    """``variable "heroku_api_key" { default = "…" }``: a variable's default, under its name."""
    yield from _judged(_TERRAFORM, text, "terraform")


def find_named_arguments(text: str) -> Found:
    """``define('DB_PASSWORD', '…')``, ``os.environ.setdefault("API_TOKEN", "…")``: a call
    whose first argument names the second."""
    yield from _judged(_NAMED_ARGUMENTS, text, "argument")


def find_keyed_calls(text: str) -> Found:
    """``hmac.new(b'…', msg, sha256)``, ``pyotp.TOTP('…')``, ``Fernet(b'…')``: a literal handed
    to a function that takes a key (an algorithm's name is not one)."""
    for call in _KEYED_CALL.finditer(text):
        for m in _LITERAL.finditer(call.group("args")):
            value = m.group("value")
            if _ALGORITHM.fullmatch(value) or plainly_not_secret(value) or " " in value:
                continue
            start = call.start("args") + m.start("value")
            yield start, start + len(value), "keyed_call"
            break


def find_grouped_keys(text: str) -> Found:
    """``U5PZ NSSU KMQJ TBFY``: a base32 key in groups of four, as authenticator set-up
    pages print a TOTP seed to type by hand (a digit in it, and many distinct characters)."""
    for m in _GROUPED_KEY.finditer(text):
        key = m.group(0).replace(" ", "")
        alone = not _word_char(text, m.start() - 1) and not _word_char(text, m.end())
        if alone and re.search(r"[2-7]", key) and len(set(key)) >= 10:
            yield m.start(), m.end(), "grouped_key"


def _word_char(text: str, at: int) -> bool:
    return 0 <= at < len(text) and (text[at].isalnum() or text[at] in "_-")


def _judged(pattern: re.Pattern[str], text: str, rule: str) -> Found:
    for m in pattern.finditer(text):
        strength = name_strength(m.group("name"))
        if strength is not None and secret_value(m.group("value"), strength):
            yield m.start("value"), m.end("value"), f"{rule}:{strength.value}"


def find_xml(text: str) -> Found:
    """``<password>…</password>``, ``<ApiKey>…</ApiKey>``; ``<add key="API_TOKEN" value="…"/>``
    (a .NET setting: the name in one attribute, the value in another)."""
    if "</" in text:
        for m in _XML.finditer(text):
            strength = name_strength(m.group("name").rpartition(":")[2])
            if strength is not None and secret_value(m.group("value"), strength):
                yield m.start("value"), m.end("value"), f"xml:{strength.value}"
    if "value" in text:
        yield from _judged(_ATTRIBUTES, text, "xml_attribute")


def find_sql(text: str) -> Found:
    """``CREATE USER … IDENTIFIED [WITH plugin] BY '…'``, ``ALTER ROLE … WITH PASSWORD '…'``;
    ``INSERT INTO t (…, password) VALUES (…, '…')``: the literal in a secret-saying column."""
    for m in _SQL.finditer(text):
        if not plainly_not_secret(m.group("value")):
            yield m.start("value"), m.end("value"), "sql_password"
    for m in _INSERT.finditer(text):
        columns = [c.strip(' `"[]') for c in m.group("columns").split(",")]
        at = m.end()
        for column in columns:
            item = _SQL_ITEM.match(text, at)
            if item is None:
                break
            at = item.end()
            strength = name_strength(column)
            value = item.group("quoted")
            if strength is not None and value is not None and secret_value(value, strength):
                yield item.start("quoted"), item.end("quoted"), f"sql_insert:{strength.value}"
            if item.group("sep") == ")":
                break


def find_prose(text: str) -> Found:
    """ "the password is S3cr3t!", "the token for prod was abc123…", "pwd: hunter2", "the root
    password of the X account has been changed to …": a credential's name, what it is of or
    for, a link (a verb phrase ending in a copula or ``… to``, or ``:``, ``=``, ``->``), the
    value; or the name and a password-shaped value with nothing between."""
    for m in _PROSE.finditer(text):
        found = _linked_value(text, m)
        if found is None:
            continue
        start, raw, linked = found
        quoted = raw[0] in "\"'`"
        value = raw[1:-1] if quoted else raw.rstrip(_TRAILING.replace("!", ""))
        start += 1 if quoted else 0
        label = ":" in text[m.end() : start]  # "Secret: restart the pod twice"
        if not quoted and label and _label_then_sentence(text, start, value):
            continue
        if m.group("name").lower().startswith("pin") and not value.isdigit():
            continue  # a PIN is digits; "pin numpy==1.26" pins a version
        if m.group("name").lower() == "key":
            linked = False  # a key is often not a secret: only a value shaped like one
        if m.group("name").lower() == "pass" and not linked:
            continue  # "pass" alone is also a verb: only a linked value is its value
        if _prose_secret(value, quoted=quoted, linked=linked):
            yield start, start + len(value), "prose"


def _linked_value(text: str, m: re.Match[str]) -> tuple[int, str, bool] | None:
    """(start, raw value, whether a link joined it) after the name ``m``: an
    optional qualifier (a preposition and up to three words) must be followed by a link."""
    at = m.end()
    q = _QUALIFIER.match(text, at)
    if q is not None:
        for end in _word_ends(text, q.end(), 3):
            link = _LINK.match(text, end)
            if link is not None:
                return _value_at(text, link, linked=True)
        return None
    link = _LINK.match(text, at)
    if link is not None:
        return _value_at(text, link, linked=True)
    for end in _word_ends(text, at + 1, 4):  # "the token we use for CI is …": a clause between
        link = _LINK.match(text, end)
        if link is not None and re.search(r"[a-z]", link.group(0)):
            return _value_at(text, link, linked=False)  # judged by its shape alone
    bare = re.compile(r"[ \t]+").match(text, at)
    return _value_at(text, bare, linked=False) if bare is not None else None


def _word_ends(text: str, at: int, most: int) -> list[int]:
    ends: list[int] = []
    for w in re.finditer(r"[^\s,;:]+(?::\d+)?", text[at : at + 200]):
        if len(ends) == most or (ends and w.start() != ends[-1] - at + 1):
            break
        ends.append(at + w.end())
    return ends


def _value_at(text: str, link: re.Match[str], *, linked: bool) -> tuple[int, str, bool] | None:
    v = _PROSE_VALUE.match(text, link.end())
    return None if v is None else (v.start(), v.group(0), linked)


def _label_then_sentence(text: str, start: int, value: str) -> bool:
    """``Secret: restart the pod twice`` — a label, then a sentence that goes on."""
    if not re.fullmatch(r"[A-Za-z][a-z]+", value):
        return False
    rest = text[start + len(value) : start + len(value) + 2]
    return rest.startswith(" ") and rest[1:].isalpha()


_VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:[-+][\w.]+)?")
_ID = re.compile(
    r"(?i)[0-9a-f]{7,}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|(?:[a-z][a-z0-9.]*-)+[0-9a-f]{16,}"
)
"""A commit, a fingerprint, a UUID, or words naming a digest (``Linux-pip-<sha256>``)."""


def _prose_secret(value: str, *, quoted: bool, linked: bool) -> bool:
    if plainly_not_secret(value) or names_a_resource(value):
        return False
    if not quoted and value.startswith("-"):
        return False  # a flag of the command the name belongs to (passwd --stdin)
    if reads_as_code(value):
        return False
    if _VERSION.fullmatch(value) or (not linked and _ID.fullmatch(value)):
        return False  # "the token manager upgraded to v2.14.0"; a commit or a UUID
    if quoted or linked:
        return not (re.fullmatch(r"[A-Za-z][a-z]+", value) and is_ordinary_word(value))
    has_digit = any(c.isdigit() for c in value)
    has_other = bool(re.search(r"[^A-Za-z0-9_.-]", value))  # snake_case, dotted, CamelCase: names
    return len(value) >= 6 and any(c.isalpha() for c in value) and (has_digit or has_other)


def find_random(text: str) -> Found:
    """Long strings that look random by themselves, outside public keys, digests and Reverie ids;
    and base64 that decodes to a private key, wherever it stands."""
    if len(text) >= 120:
        for m in _LONG_BASE64.finditer(text):
            if wraps_credential(m.group(0)):
                yield m.start(), m.end(), "wrapped_credential"
    shields = None
    for m in _CANDIDATE.finditer(text):
        candidate = m.group(0)
        if not looks_random(candidate, min_length=32):
            continue
        if shields is None:
            shields = shielded(text)
        if any(s <= m.start() and m.end() <= e for s, e in shields):
            continue
        if not _labelled_public(text, m.start()):
            yield m.start(), m.end(), "high_entropy"


_ID_ENDINGS = frozenset({"id", "ids", "identifier"})


def _labelled_public(text: str, at: int) -> bool:
    """``"id": "chatcmpl-…"``, ``x-amz-id-2: …``, ``PublicKey = …``: a name that says
    identifier or public labels the random string; unless the name also says secret."""
    end = at
    while end > 0 and text[end - 1] in " \t\"'":
        end -= 1
    if end == 0 or text[end - 1] not in ":=":
        return False
    end -= 1
    while end > 0 and text[end - 1] in " \t\"']":
        end -= 1
    start = end
    while start > max(0, end - 60) and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    name = text[start:end]
    words = [w for w in split_words(name) if not w.isdigit()]
    if not words or name_strength(name) is Strength.STRONG:
        return False
    return words[-1] in _ID_ENDINGS or (name_strength(name) is None and "public" in words)
