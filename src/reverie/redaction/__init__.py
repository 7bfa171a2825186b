"""Secrets (and, by policy, personal data) never land in a page, the mirror or recall.

:mod:`reverie.redaction.redactor` finds and masks them; the rules behind it are one concern per
module: ``formats`` (vendor token shapes), ``commands`` (flags, URLs, headers, cookies),
``context`` (assignments, XML, SQL, calls, prose, bare randomness), ``languages`` (prose in other
languages), ``logins`` (command lines, prompts and their answers), ``judge`` (does a name say
secret, is a value one), ``entropy`` (does a string look random, what base64 wraps, where not to
look), ``pii`` (e-mail, phone, card).
"""

from __future__ import annotations

from reverie.redaction.redactor import (
    DEFAULT,
    MARK,
    Redactor,
    Span,
    redact,
    redact_plan,
    redact_value,
)

__all__ = ["DEFAULT", "MARK", "Redactor", "Span", "redact", "redact_plan", "redact_value"]
