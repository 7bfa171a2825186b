"""Personal data that is not a credential: e-mail addresses, phone numbers, payment card numbers.

Whether these leave a page is a choice, not a rule (``RedactionConfig``): an agent may need to
remember where alerts go. Each class is found precisely enough to be worth a policy:

* **e-mail** — ``local@domain.tld``, not the ``user:pass@host`` of a URL (that is a password);
* **phone** — international numbers written with ``+`` and a country code, and North American
  numbers written with separators (``(415) 555-0132``, ``415-555-0132``); bare digit runs are
  too often ids, ports or timestamps to call phone numbers;
* **card** — 13 to 19 digits, optionally grouped by spaces or dashes, with an issuer's prefix
  (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay) and a valid Luhn check digit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["PII_CLASSES", "find_pii"]

PII_CLASSES = ("email", "phone", "card")

_EMAIL = re.compile(
    r"(?<![\w.%+:/-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b"
)
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){2,4}"
    r"|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}|\b\d{3}[.-]\d{3}[.-]\d{4})(?![\w.-]*\d)"
)
_CARD = re.compile(r"(?<![\w.-])(?:\d[ -]?){12,18}\d(?![\w-])")
_ISSUER = re.compile(
    r"4|5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)|3[47]|3(?:0[0-5]|[68])|6(?:011|5|4[4-9]|2)|35"
)


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _card(candidate: str) -> bool:
    digits = re.sub(r"[ -]", "", candidate)
    groups = re.split(r"[ -]", candidate)
    if len(groups) > 1 and len({len(g) for g in groups[:-1]}) > 2:
        return False  # 4-4-4-4 or 4-6-5 groups, not a date or a list of numbers
    return 13 <= len(digits) <= 19 and bool(_ISSUER.match(digits)) and _luhn(digits)


def find_pii(text: str, classes: frozenset[str]) -> Iterator[tuple[int, int, str]]:
    """``(start, end, class)`` of the personal data of ``classes`` in ``text``."""
    if "email" in classes and "@" in text:
        for m in _EMAIL.finditer(text):
            yield m.start(), m.end(), "email"
    if "phone" in classes:
        for m in _PHONE.finditer(text):
            if sum(c.isdigit() for c in m.group(0)) >= 10:
                yield m.start(), m.end(), "phone"
    if "card" in classes:
        for m in _CARD.finditer(text):
            if _card(m.group(0)):
                yield m.start(), m.end(), "card"
