"""The rules behind :mod:`reverie.redact`, one concern per module.

``formats`` (vendor token shapes), ``commands`` (flags, URLs, headers), ``context`` (assignments,
XML, SQL, prose, bare randomness), ``judge`` (does a name say secret, is a value one),
``entropy`` (does a string look random, where not to look), ``pii`` (e-mail, phone, card).
"""

from __future__ import annotations

__all__: list[str] = []
