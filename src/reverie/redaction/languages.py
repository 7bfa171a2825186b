"""Passwords given in prose in languages other than English.

"Das Passwort lautet …", "数据库密码是 …", "Пароль от сервера: …", "パスワードは … です": the same
structure as the English rule of :mod:`reverie.redaction.context` — a credential's name, what
it is of or for (up to three words), a link, the value — read with a small lexicon per language:
the word for *password* (what a credential's name is, in the languages people write) and the
copulas that link it to its value. Signs (``:``, ``：``, ``=``, a dash) link in every language;
a language's copulas link only its own names, so the Finnish *on* never turns "the password on
staging" into a value. A name in a JSON string may be escaped (``contrase\\u00f1a``).

Ordinary words of these languages are not known here, so the value must be shaped like a
password unless it is quoted: six or more characters, a letter, and a digit, a sign or a
capital inside ("Das Passwort ist erforderlich" stays).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from reverie.redaction.judge import plainly_not_secret, reads_as_code

__all__ = ["find_prose_languages"]

Found = Iterator[tuple[int, int, str]]

_LEXICON: dict[str, tuple[str, str]] = {
    "de": ("passwort|kennwort", "ist lautet lauten war"),
    "fr": ("mot de passe", "est était"),
    "es": ("contraseña|clave", "es era"),
    "pt": ("senha", "é era"),
    "it": ("password|parola d'ordine", "è era"),
    "nl": ("wachtwoord", "is was luidt"),
    "pl": ("hasło|hasła", "to jest brzmi"),
    "tr": ("şifre", "şudur"),
    "ru, uk": ("пароль|пароля", "это є"),
    "cs, sk": ("heslo", "je bylo"),
    "sv": ("lösenord", "är var"),
    "da, no": ("adgangskode|passord", "er var"),
    "fi": ("salasana", "on oli"),
    "hu": ("jelszó|jelszava", "pedig"),
    "ro": ("parola|parolă", "este"),
    "vi": ("mật khẩu", "là"),
    "id, ms": ("kata sandi|kata laluan", "adalah ialah"),
    "el": ("κωδικός|συνθηματικό", "είναι ήταν"),
    "ar": ("كلمة المرور|كلمة السر", "هي هو"),
    "he": ("סיסמה|סיסמא", "היא הוא"),
    "fa": ("رمز عبور", "است"),
    "hi": ("पासवर्ड", "है"),
    "th": ("รหัสผ่าน", "คือ"),
    "zh": ("密码|密碼|口令", "是 为 為"),
    "ja": ("パスワード|暗証番号", "は"),
    "ko": ("비밀번호|패스워드|암호", "는 은"),
}
"""Per language (ISO 639-1): the names of a password, and the copulas that link a name to its
value."""


def _escapable(word: str) -> str:
    """``word`` as a pattern that also matches its JSON escapes (``ñ`` or ``\\u00f1``)."""
    return "".join(
        f"(?:{re.escape(c)}|\\\\u{ord(c):04x})" if ord(c) > 127 else re.escape(c) for c in word
    )


def _glued(word: str) -> bool:
    """Scripts written without spaces between words (CJK, Japanese kana, Hangul, Thai)."""
    return any(0x0E00 <= ord(c) <= 0x0E7F or ord(c) >= 0x2E80 for c in word)


def _name(word: str) -> str:
    if _glued(word):
        return _escapable(word)
    return rf"(?<!\w){_escapable(word)}\w{{0,3}}(?!\w)"  # inflections: Lösenordet, sandinya


def _copula(word: str) -> str:
    return (
        rf"[ \t]*{_escapable(word)}[ \t]*" if _glued(word) else rf"[ \t]+{_escapable(word)}[ \t]+"
    )


_SIGN = r"[ \t]*(?:[:：=]|[-\u2013\u2014](?=[ \t]))[ \t]*"
_VALUE = r"""(?P<value>"[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s,;，。、]{1,200})"""
_QUALIFIER = r"(?:[ \t]+[^\s:：=,;，。]{1,30}){1,3}?"


def _language(names: str, copulas: str) -> str:
    name = "|".join(_name(n) for n in names.split("|"))
    link = "|".join([_SIGN, *(_copula(c) for c in copulas.split())])
    return rf"(?:{name})(?:(?P<link>{link})|{_QUALIFIER}(?P<far>{link})|(?P<bare>[ \t]+))"


_PATTERNS = [
    re.compile(f"(?:{_language(names, copulas)}){_VALUE}", re.I)
    for names, copulas in _LEXICON.values()
]
_NAMES = re.compile(
    "|".join(
        f"(?P<l{i}>{'|'.join(_escapable(n) for n in names.split('|'))})"
        for i, (names, _) in enumerate(_LEXICON.values())
    ),
    re.I,
)
"""Every language's names, one group per language: one scan finds where a rule may start (the
rule itself checks the name's word boundaries)."""
_FORMS = [
    (i, name.lower()) for i, (names, _) in enumerate(_LEXICON.values()) for name in names.split("|")
]
_ASCII_FORMS = [(i, name) for i, name in _FORMS if name.isascii() and name != "password"]
"""The names a text of ASCII alone can hold: the Italian *password* is linked by *è*, beyond
ASCII (its signs are the English rule's)."""
_TRAILING = ".,:;)?"


def find_prose_languages(text: str) -> Found:
    """A password named in another language and linked to its value (module docstring)."""
    for language, at in _name_starts(text):
        m = _PATTERNS[language].match(text, at)
        if m is not None:
            raw = m.group("value")
            quoted = raw[0] in "\"'"
            value = raw[1:-1] if quoted else raw.rstrip(_TRAILING)
            start = m.start("value") + (1 if quoted else 0)
            if _secret(value, quoted=quoted):
                yield start, start + len(value), "prose_language"


def _name_starts(text: str) -> Iterator[tuple[int, int]]:
    """(language, offset) of every name in ``text``: found by plain search of the lower-cased
    text, which is much cheaper than one pattern of every name; by that pattern where JSON
    escapes may hide a name or lower-casing changes the text's length."""
    low = text.lower()
    if "\\u" in text or len(low) != len(text):
        for m in _NAMES.finditer(text):
            yield int((m.lastgroup or "l0")[1:]), m.start()
        return
    for language, name in _ASCII_FORMS if text.isascii() else _FORMS:
        at = low.find(name)
        while at >= 0:
            yield language, at
            at = low.find(name, at + 1)


def _secret(value: str, *, quoted: bool) -> bool:
    if plainly_not_secret(value) or reads_as_code(value) or value.startswith(("$", "%", "-")):
        return False
    if quoted:
        return True
    signs = any(unicodedata.category(c)[0] in "PS" for c in value)  # not a vowel sign (Mn, Mc)
    return (
        len(value) >= 6
        and any(c.isalpha() for c in value)
        and (signs or any(c.isdigit() for c in value) or bool(re.search(r".[A-Z]", value)))
    )
