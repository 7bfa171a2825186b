"""Secrets in command lines, URLs and HTTP headers.

* **flags** whose name says secret: ``--password X``, ``--password=X``, ``--api-key X``,
  ``-storepass X``; a flag that names where the secret is (``--password-file``,
  ``--password-stdin``) is not one (:mod:`reverie.redaction.judge`);
* **short flags** that carry a password only for their own command: ``mysql -pX`` / ``-p X``,
  ``sshpass -p``, ``redis-cli -a``, ``docker login -p``, ``mongosh -p``, ``ldapsearch -w``,
  ``smbclient -U user%pass``, and the password half of ``curl -u user:pass`` (``-p 8080:80``
  elsewhere is a port, so a short flag is read only after its command on the same line);
* **URLs** with credentials: the password of ``scheme://user:pass@host``, and a token standing
  alone as the user (``https://<key>@o1.ingest.sentry.io``, ``https://x-token@host``);
* **authorization headers**: everything after ``Authorization:`` and the value after a
  ``Bearer``/``Basic``/``Token`` scheme word anywhere;
* **cookies** (``Cookie:``, ``Set-Cookie:``, ``curl -b``): a session's cookie, whatever its
  alphabet, and any cookie whose name says secret or whose value looks random;
* **a login subcommand's key** (``cargo login <token>``) and archive passwords (``zip -P``,
  ``7z -p…``), OTP keys given to ``oathtool``, ``mc alias set NAME URL USER PASSWORD``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from reverie.redaction.entropy import looks_random
from reverie.redaction.judge import (
    Strength,
    name_strength,
    names_a_resource,
    plainly_not_secret,
    secret_value,
)

__all__ = [
    "find_auth_headers",
    "find_command_secrets",
    "find_cookies",
    "find_flags",
    "find_login_tokens",
    "find_url_credentials",
]

Found = Iterator[tuple[int, int, str]]

_FLAG = re.compile(
    r"""(?x)(?<![\w-])(?P<flag>--?[A-Za-z][\w-]{1,60})
    (?:=|[ \t]+)(?!-)
    (?:(?P<quote>["'])(?P<quoted>[^"'\n]{1,300})(?P=quote)|(?P<bare>[^\s"']{1,300}))"""
)
_VALUE = r"""(?:(?P<q>["'])(?P<quoted>[^"'\n]{1,300})(?P=q)|(?P<bare>[^\s"'|;&]{1,300}))"""
_SHORT_FLAGS = [
    (
        re.compile(r"\b(?:mysql\w*|mariadb\w*|mysqldump|mysqladmin|mysqlsh|mycli)\b"),
        re.compile(rf"(?<!\S)-p(?:[ \t]+(?!-)|(?=[^\s-]))?{_VALUE}"),
    ),
    (re.compile(r"\bsshpass\b"), re.compile(rf"(?<!\S)-p[ \t]*{_VALUE}")),
    (re.compile(r"\bredis-cli\b"), re.compile(rf"(?<!\S)-a[ \t]+{_VALUE}")),
    (
        re.compile(r"\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|az)\b[^\n]*\blogin\b"),
        re.compile(rf"(?<!\S)-p[ \t]+(?!-){_VALUE}"),
    ),
    (
        re.compile(r"\bmongo(?:sh|dump|restore|import|export)?\b"),
        re.compile(rf"(?<!\S)-p[ \t]+(?!-){_VALUE}"),
    ),
    (
        re.compile(r"\bldap(?:search|add|modify|delete|passwd|whoami)\b"),
        re.compile(rf"(?<!\S)-w[ \t]+{_VALUE}"),
    ),
    (re.compile(r"\b(?:sqlcmd|bcp|osql)\b"), re.compile(rf"(?<!\S)-P[ \t]+{_VALUE}")),
    (
        re.compile(r"\bopenssl\b"),
        re.compile(rf"(?<!\S)(?:-[kK][ \t]+|-pass(?:in|out)?[ \t]+pass:){_VALUE}"),
    ),
    (
        re.compile(r"\bhtpasswd\b"),
        re.compile(rf"(?<!\S)-\w*b\w*(?:[ \t]+-\w+)*[ \t]+[^\s-]\S*[ \t]+\S+[ \t]+{_VALUE}"),
    ),
    (re.compile(r"\b(?:zip|zipcloak)\b"), re.compile(rf"(?<!\S)-P[ \t]+{_VALUE}")),
    (re.compile(r"\b(?:7z|7za|7zr|rar|unrar)\b"), re.compile(rf"(?<!\S)-p{_VALUE}")),
    (
        re.compile(r"\boathtool\b"),
        re.compile(r"(?<!\S)(?P<bare>[A-Za-z2-7]{16,}=*|[0-9A-Fa-f]{16,})(?!\S)"),
    ),
    (
        re.compile(r"\bmc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)\b"),
        re.compile(rf"[ \t]\w+://\S+[ \t]+\S+[ \t]+{_VALUE}"),
    ),
    (
        re.compile(r"\b(?:smbclient|rpcclient|smbmap)\b"),
        re.compile(r"(?<!\S)-U[ \t]+[^\s%]+%(?P<bare>\S+)"),
    ),
    (
        re.compile(r"\b(?:curl|wget|xh|httpie|aria2c|lynx)\b|\bhttps?(?=[ \t])"),
        re.compile(
            r"(?:(?<!\S)-u[ \t]*|--(?:proxy-)?user[= \t]+)[\"']?[^\s:\"']*:(?P<bare>[^\s\"']+)"
        ),
    ),
]
_URL_USERINFO = re.compile(
    r"\b[a-z][a-z0-9+.-]{1,20}://(?P<user>[^\s:/@\"'<>]{0,200})"
    r"(?::(?P<password>[^\s/\"'<>]{1,300}))?@(?=[\w\[])",
    re.I,
)
_AUTHORIZATION = re.compile(
    r"(?i)\b(?:proxy-)?authori[sz]ation\b[\"']?\s*[:=]\s*[\"']?"
    r"(?:(?:Bearer|Basic|Token|Digest|Bot|SSWS|ApiKey|Key|OAuth|Negotiate|NTLM"
    r"|[A-Z0-9-]*HMAC[\w-]*)[ \t]+)?"
    r"(?P<value>[^\s\"'][^\n\"']*)"
)
_SCHEME_VALUE = re.compile(r"\b(?:Bearer|Basic|Token)[ \t]+(?P<value>[A-Za-z0-9._~+/=-]{12,})")


def find_flags(text: str) -> Found:
    """``--password X``, ``--api-key=X``, ``-storepass X``; not a help text's metavar
    (``--password TEXT``) nor the name of a stored secret (``--secret=api-key``)."""
    if "-" not in text:
        return
    for m in _FLAG.finditer(text):
        strength = name_strength(m.group("flag").lstrip("-"))
        group = "quoted" if m.group("quoted") is not None else "bare"
        value = m.group(group)
        if group == "bare" and (re.fullmatch(r"[A-Z][A-Z_-]*", value) or names_a_resource(value)):
            continue
        if strength is not None and secret_value(value, strength):
            yield m.start(group), m.end(group), f"flag:{strength.value}"


_LOGIN_ARGUMENT = re.compile(r"\b[\w-]+[ \t]+login[ \t]+(?P<bare>[A-Za-z0-9_]{20,})(?=\s|$)")


def find_login_tokens(text: str) -> Found:
    """``cargo login <token>``, ``wandb login <key>``: a ``login`` subcommand's argument,
    when it is shaped like a key (a host or a user name is not)."""
    for m in _LOGIN_ARGUMENT.finditer(text):
        value = m.group("bare")
        mixed = sum(bool(re.search(c, value)) for c in ("[a-z]", "[A-Z]", "[0-9]")) >= 2
        if looks_random(value, hex_ok=True, min_length=20) or (mixed and len(value) >= 24):
            yield m.start("bare"), m.end("bare"), "login_token"


_COOKIE_HEADER = re.compile(
    r"(?i)(?:\b(?:set-)?cookie[\"']?\s*[:=]\s*|(?<!\S)(?:-b|--cookie)[ \t]+)"
    r"[\"']?(?P<pairs>[^\n\"']+)"
)
_COOKIE = re.compile(r"(?:^|;)\s*(?P<name>[^=;\s]{1,80})=(?P<value>[^;\s]{1,500})")
_SESSION = re.compile(r"(?i)sess|sid|auth|token|remember|login")


def find_cookies(text: str) -> Found:
    """``Cookie: sessionid=…``, ``Set-Cookie: session=…``, ``curl -b 'PHPSESSID=…'``: a
    cookie that holds a session is its bearer's login; another cookie goes when its name
    says secret (``csrftoken``) or its value looks random."""
    for header in _COOKIE_HEADER.finditer(text):
        for m in _COOKIE.finditer(header.group("pairs")):
            name, value = m.group("name"), m.group("value")
            session = bool(_SESSION.search(name)) and len(value) >= 16
            strength = name_strength(name) or Strength.WEAK
            if session or secret_value(value, strength):
                start = header.start("pairs") + m.start("value")
                yield start, start + len(value), "cookie"


_COMMANDS = re.compile(
    "|".join(f"(?P<c{i}>{cmd.pattern})" for i, (cmd, _) in enumerate(_SHORT_FLAGS))
)


def find_command_secrets(text: str) -> Found:
    """Short flags that carry a password for their own command (see the module docstring)."""
    for command in _COMMANDS.finditer(text):
        flag = _SHORT_FLAGS[int((command.lastgroup or "c0")[1:])][1]
        line_end = text.find("\n", command.end())
        for m in flag.finditer(text, command.end(), len(text) if line_end < 0 else line_end):
            group = "quoted" if m.groupdict().get("quoted") else "bare"
            value = m.group(group)
            if value and not value.startswith("[REDACTED") and not _placeholder(value):
                yield m.start(group), m.end(group), "command_flag"


def _placeholder(value: str) -> bool:
    return len(value) >= 4 and plainly_not_secret(value) and not value.isalpha()


def find_url_credentials(text: str) -> Found:
    """The password of ``scheme://user:pass@host``; a token standing alone as the user."""
    if "://" not in text:
        return
    for m in _URL_USERINFO.finditer(text):
        password, user = m.group("password"), m.group("user")
        if password is not None:
            if not password.startswith("[REDACTED") and not _url_placeholder(password):
                yield m.start("password"), m.end("password"), "url_password"
        elif looks_random(user, hex_ok=True, min_length=16):
            yield m.start("user"), m.end("user"), "url_token"


def _url_placeholder(password: str) -> bool:
    return bool(
        re.fullmatch(
            r"\*+|x+|<[^>]*>|\$\{?\w+\}?|%\w+%|\{\{.*\}\}|password|pass|secret", password, re.I
        )
    )


def find_auth_headers(text: str) -> Found:
    """``Authorization: …`` to the end of its value; ``Bearer …`` / ``Basic …`` anywhere."""
    for m in _AUTHORIZATION.finditer(text):
        value = m.group("value").rstrip()
        if len(value) >= 8 and not plainly_not_secret(value.split()[0]):
            yield m.start("value"), m.start("value") + len(value), "authorization"
    for m in _SCHEME_VALUE.finditer(text):
        value = m.group("value")
        if not re.fullmatch(r"[a-z]+", value) and not plainly_not_secret(value):
            yield m.start("value"), m.end("value"), "auth_scheme"
