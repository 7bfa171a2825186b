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
  ``Bearer``/``Basic``/``Token`` scheme word anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from reverie.redaction.entropy import looks_random
from reverie.redaction.judge import name_strength, plainly_not_secret, secret_value

__all__ = ["find_auth_headers", "find_command_secrets", "find_flags", "find_url_credentials"]

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
        re.compile(rf"(?<!\S)(?:-k[ \t]+|-pass(?:in|out)?[ \t]+pass:){_VALUE}"),
    ),
    (
        re.compile(r"\bhtpasswd\b"),
        re.compile(rf"(?<!\S)-\w*b\w*[ \t]+\S+[ \t]+\S+[ \t]+{_VALUE}"),
    ),
    (re.compile(r"\bwandb[ \t]+login\b"), re.compile(r"[ \t](?P<bare>[0-9a-f]{40})\b")),
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
    """``--password X``, ``--api-key=X``, ``-storepass X``."""
    if "-" not in text:
        return
    for m in _FLAG.finditer(text):
        strength = name_strength(m.group("flag").lstrip("-"))
        group = "quoted" if m.group("quoted") is not None else "bare"
        if strength is not None and secret_value(m.group(group), strength):
            yield m.start(group), m.end(group), f"flag:{strength.value}"


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
