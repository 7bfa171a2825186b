"""Passwords a command line carries by its own syntax, where no name beside them says secret.

Each rule reads a *kind* of command line, not a list of examples:

* **a password fed to a reader of stdin** — ``echo X | sudo -S …``, ``printf '%s\\n' X |
  passwd --stdin u``, ``… --password-stdin <<< X``: a literal (not ``$VAR``) echoed into a
  command that reads a password from its input (``sudo -S``, ``passwd``, ``chpasswd``,
  ``kinit``, ``cryptsetup``, ``runas``, or any flag naming a password and stdin or a file
  descriptor);
* **a password flag after a user flag** — ``-u alice -p X``, ``-U sa -P X``, ``/u:alice /p:X``,
  ``/ru alice /rp X``, ``-u alice,X``: the user named, the next short flag carries their
  password (a number or ``8080:80`` is a port, not a password);
* **Windows** — ``net user alice X /add``, ``net use \\\\h\\s X /user:alice`` (a bare argument
  of ``net use`` is its password), ``/pass:X`` (an option named like a password),
  ``setx NAME X`` (an assignment by syntax), ``ConvertTo-SecureString "X" -AsPlainText``;
* **``user/password@db``** after an Oracle client (``sqlplus scott/X@orcl``);
* **an answer to a password prompt** — ``expect "password:"`` then ``send "X\\r"``
  (Tcl expect, an ``expect { "*assword*" { send … } }`` block, pexpect's ``sendline``);
* **a ``.pgpass`` line** — ``host:port:database:user:password``;
* **credentials after a user name, in words** — ``login alice / X``, ``creds are alice:X``,
  ``user alice pass X``, ``sign in as alice with X``: a login word, a user name, a separator
  (``/``, ``:``, ``pass``, ``with``), then the password (shaped like one unless the separator
  names it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from reverie.redaction.judge import name_strength, plainly_not_secret, secret_value

__all__ = ["find_logins", "find_pgpass"]

Found = Iterator[tuple[int, int, str]]

_ARG = r"""(?:(?P<q>["'])(?P<quoted>[^"'\n]{1,300})(?P=q)|(?P<bare>[^\s"'|;&<>]{1,300}))"""
_READS_STDIN = (
    r"(?:\bsudo\b[^\n|]*?(?<!\S)-(?:S|-stdin)\b|(?<!\S)--?[\w-]*(?:pass|pw)[\w-]*(?:stdin|fd)\b"
    r"|\b(?:passwd|chpasswd|kinit|cryptsetup|runas)\b|(?<!\S)--stdin\b)"
)
_PIPED = re.compile(
    rf"""(?x)\b(?:echo(?:[ \t]+-[neE]+)*|printf(?:[ \t]+(?:'[^'\n]*%[^'\n]*'|"[^"\n]*%[^"\n]*"))?)
    [ \t]+{_ARG}[ \t]*\|[^\n|]*?{_READS_STDIN}"""
)
_HERE_STRING = re.compile(rf"{_READS_STDIN}[^\n]*?<<<[ \t]*{_ARG}")
_USER_FLAG = re.compile(r"(?<!\S)(?:-u|-U|-l|--user(?:name)?|/u(?:ser)?:|/ru)(?:[ \t]*[=:]?[ \t]*)")
_PASSWORD_FLAG = re.compile(
    r"(?<!\S)(?:-p[ \t]+|-P[ \t]+|-pw[ \t]+|-w[ \t]+|-a[ \t]+|/p:|/rp[ \t]+|--password[ \t]+)"
    + _ARG
)
_USER_COMMA = re.compile(r"(?<!\S)(?:-u|--user)[ \t]+[^\s,:]+,(?P<bare>[^\s\"']+)")
_NET_USER = re.compile(
    r"(?i)\bnet[ \t]+user[ \t]+(?:/add[ \t]+)?[^\s/][^\s]*[ \t]+(?P<bare>[^\s/*][^\s]*)"
)
_NET_USE = re.compile(r"(?i)\bnet[ \t]+use\b(?P<args>[^\n]*)")
_SLASH_OPTION = re.compile(r"(?<!\S)/(?P<name>[A-Za-z]\w*)[:=]" + _ARG)
_SETX = re.compile(r"(?i)\bsetx[ \t]+(?P<name>[^\s=\"']+)[ \t]+" + _ARG)
_SECURE_STRING = re.compile(
    r"(?i)ConvertTo-SecureString(?P<plain>[ \t]+-AsPlainText)?[ \t]+(?:-String[ \t]+)?"
    r"(?P<q>[\"'])(?P<quoted>[^\"'\n]{1,300})(?P=q)(?(plain)|(?=[^\n]*-AsPlainText))"
)
_ASKS = r"""["'][^"'\n]*(?:assword|passphrase|passcode|\bPIN\b|token|secret)[^"'\n]*["']"""
_PROMPT = re.compile(
    rf"""(?ix)\bexpect\b[ \t(]*(?:-\w+[ \t]+)*[{{\s]*{_ASKS}
    | {_ASKS}(?=[ \t]*\{{[ \t]*send\b)"""
)
"""A prompt asking for a password: ``expect "password:"``, ``child.expect('Password:')``, or
a pattern of an ``expect { "*assword*" { send … } }`` block."""
_ANSWER = re.compile(
    r"""\bsend(?:line)?\b[ \t(]*(?P<q>["'])(?P<quoted>(?:(?!\\[rn])[^"'\n]){1,300})"""
    r"""(?:\\[rn])*(?P=q)"""
)
_PGPASS = re.compile(
    r"(?m)(?:^|(?<=\s))[\w.*-]+:(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:(?P<bare>(?:[^\s:\\]|\\.)+)$"
)
"""Five fields, the port a number or ``*``; a ``:`` inside a field is escaped (``\\:``)."""
_PORT_FIELD = re.compile(r":(?:\d{1,5}|\*):")
_LOGIN = re.compile(
    r"""(?ix)\b(?:log[ -]?(?:in|on)(?:[ \t]+(?:with|as))?|sign(?:ed)?[ -]?in(?:[ \t]+(?:with|as))?
      |creds?|credentials|account|use|user(?:name)?(?:/pass(?:word)?)?|u/p)
      (?:[ \t]+(?:are|is|for[ \t]+[^\s:]+))?:?[ \t]+
    (?P<user>[\w.@\\-]{2,64}?)
    (?P<sep>[ \t]+[/:][ \t]+|[/:]|,?[ \t]+(?:pass(?:word)?|pwd?)[ \t]*[:=]?[ \t]*
      |[ \t]+with[ \t]+(?:password[ \t]+)?)
    (?P<value>[^\s,;]{1,200})"""
)
_ORACLE = re.compile(
    r"\b(?:sqlplus|rman|expdp|impdp|sqlldr)[ \t]+(?:-\w+[ \t]+)*[^\s/@]+/(?P<bare>[^\s@/]+)"
    r"|\bjdbc:oracle:\w+:[^\s/@:]+/(?P<jdbc>[^\s/]+)@"
)


def find_logins(text: str) -> Found:
    """Every rule of the module docstring, in turn."""
    for rule, pattern in (("piped", _PIPED), ("piped", _HERE_STRING), ("user_comma", _USER_COMMA),
                          ("net_user", _NET_USER), ("secure_string", _SECURE_STRING),
                          ("oracle", _ORACLE)):  # fmt: skip
        for m in pattern.finditer(text):
            yield from _literal(m, rule)
    yield from _answers(text)
    yield from _after_user_flag(text)
    yield from _net_use(text)
    yield from _named_options(text)
    yield from _login_words(text)


def _login_words(text: str) -> Found:
    for m in _LOGIN.finditer(text):
        value = m.group("value").rstrip(".,:;)?")
        named = bool(re.search(r"(?i)p", m.group("sep")))
        if _password_like(value) and (named or _shaped(value)):
            yield m.start("value"), m.start("value") + len(value), "command:login"


def _shaped(value: str) -> bool:
    """Six or more characters, letters with digits or other signs: how passwords look."""
    return (
        len(value) >= 6
        and any(c.isalpha() for c in value)
        and bool(re.search(r"\d|[^A-Za-z0-9]|.[A-Z]", value))
    )


def find_pgpass(text: str) -> Found:
    """A ``.pgpass`` line, ``host:port:database:user:password`` (the port a number or ``*``)."""
    if _PORT_FIELD.search(text) is None:
        return
    for m in _PGPASS.finditer(text):
        yield from _literal(m, "pgpass")


def _answers(text: str) -> Found:
    """``expect "password:"`` then ``send "X\\r"`` (Tcl expect, pexpect, Ansible's
    ``expect``): the literal sent next, within a few lines of a prompt asking for a password."""
    if "send" not in text:
        return
    for prompt in _PROMPT.finditer(text):
        m = _ANSWER.search(text, prompt.end(), prompt.end() + 240)
        if m is not None:
            yield from _literal(m, "expect")


def _value(m: re.Match[str]) -> tuple[int, int, str] | None:
    groups = m.groupdict()
    if groups.get("jdbc"):
        return m.start("jdbc"), m.end("jdbc"), m.group("jdbc")
    group = "quoted" if groups.get("quoted") else "bare"
    value = m.group(group)
    return (m.start(group), m.end(group), value) if value else None


def _literal(m: re.Match[str], rule: str) -> Found:
    found = _value(m)
    if found is not None and _password_like(found[2]):
        yield found[0], found[1], f"command:{rule}"


def _password_like(value: str) -> bool:
    """Not a variable, a placeholder, a path or a port: what a person typed as a password."""
    if value.startswith(("$", "%", "[REDACTED", "-", "/", "~", "<")) or value == "*":
        return False
    if re.fullmatch(r"[\d:.]+", value):
        return False
    return not (len(value) >= 4 and plainly_not_secret(value) and not value.isalpha())


def _after_user_flag(text: str) -> Found:
    for user in _USER_FLAG.finditer(text):
        line_end = text.find("\n", user.end())
        end = len(text) if line_end < 0 else line_end
        m = _PASSWORD_FLAG.search(text, user.end(), end)
        if m is not None:
            yield from _literal(m, "user_password")


def _net_use(text: str) -> Found:
    """``net use [drive] \\\\host\\share [password] [/user:name] [password]``."""
    for m in _NET_USE.finditer(text):
        for arg in re.finditer(r"\S+", m.group("args")):
            word = arg.group(0)
            if word.startswith(("/", "\\")) or re.fullmatch(r"[A-Za-z]:|\*", word):
                continue
            if _password_like(word):
                start = m.start("args") + arg.start()
                yield start, start + len(word), "command:net_use"


def _named_options(text: str) -> Found:
    """``/pass:X``, ``/password:X``, ``setx DB_PASSWORD X``: a name that says password."""
    for pattern in (_SLASH_OPTION, _SETX):
        for m in pattern.finditer(text):
            strength = name_strength(m.group("name"))
            found = _value(m)
            if strength is not None and found is not None and secret_value(found[2], strength):
                yield found[0], found[1], f"command:{strength.value}"
