"""Secret redaction: keys, tokens and passwords never leave the process or land in a page.

:func:`redact` replaces what looks like a credential with ``[REDACTED]`` and keeps the text around
it, so a prompt or a claim still reads naturally ("export OPENAI_API_KEY=[REDACTED]"). It runs on
every text sent to a model (:mod:`reverie.dream.llm_distill`) and on every text a cycle writes
into a page (:func:`redact_plan`, called by :mod:`reverie.dream.cycle` for every distiller).

It errs towards redacting: a false positive costs a few characters of a page, a false negative
leaks a credential. Patterns match well-known token formats by their prefixes and lengths, PEM
private keys, credentials inside URLs, bearer/basic authorization values, and assignments whose
name says secret (``password=``, ``api_key:``, ``"token": "..."``). It never touches ids or
content hashes Reverie itself produces (``ep_...``, ``pg_...``, ``sha256:...``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reverie.dream.plan import Plan

__all__ = ["MARK", "redact", "redact_plan"]

MARK = "[REDACTED]"

_TOKENS = re.compile(
    r"""
    -----BEGIN[ A-Z0-9]*PRIVATE\ KEY(?:\ BLOCK)?-----.*?
        (?:-----END[ A-Z0-9]*PRIVATE\ KEY(?:\ BLOCK)?-----|\Z)
    | \bsk-ant-[A-Za-z0-9_-]{16,}
    | \bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}
    | \b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b
    | \bgh[pousr]_[A-Za-z0-9]{30,}
    | \bgithub_pat_[A-Za-z0-9_]{30,}
    | \bglpat-[A-Za-z0-9_-]{20,}
    | \bxox[abposr]-[A-Za-z0-9-]{10,}
    | \bAIza[0-9A-Za-z_-]{35}
    | \b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}
    | \bhf_[A-Za-z0-9]{30,}
    | \bnpm_[A-Za-z0-9]{36}
    | \beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}
    """,
    re.S | re.X,
)
_AUTH = re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{12,}", re.I)
_URL_PASSWORD = re.compile(r"\b([a-z][a-z0-9+.-]*://[^\s:/@\"']*:)[^\s@/\"']+(@)", re.I)
_SECRET_NAME = (
    r"[A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|api[_-]?key|apikey|access[_-]?key"
    r"|auth[_-]?token|access[_-]?token|refresh[_-]?token|private[_-]?key|client[_-]?secret"
    r"|token(?!s)|credentials?)[A-Za-z0-9_.-]*"
)
_ASSIGNMENT = re.compile(
    rf"""(?ix)
    (?P<head>["']?\b{_SECRET_NAME}["']?\s*(?:=>|:=|:|=)\s*)
    (?P<quote>["']?)
    (?P<value>(?(quote)[^"'\n]+|[^\s,;"'&)}}\]]+))
    """
)
_HARMLESS = re.compile(
    r"^(?:\[REDACTED\]|\*+|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|null|none|true|false|)$", re.I
)
_TEXT_FIELDS = frozenset({"title", "text", "reason"})


def _assignment(match: re.Match[str]) -> str:
    value = match.group("value")
    if value.startswith(MARK[:-1]) or _HARMLESS.match(value.strip()) or len(value.strip()) < 4:
        return match.group(0)
    return f"{match.group('head')}{match.group('quote')}{MARK}"


def redact(text: str) -> str:
    """``text`` with every credential-looking span replaced by ``[REDACTED]``."""
    if not text:
        return text
    if text in _CLEAN:  # recall redacts the same excerpts and titles again and again
        return text
    redacted = _redact(text)
    if redacted == text and len(text) <= _CLEAN_UP_TO:  # never keeps a text holding a secret
        if len(_CLEAN) >= _CLEAN_KEPT:
            _CLEAN.clear()
        _CLEAN.add(text)
    return redacted


_CLEAN: set[str] = set()
"""Short texts already found to hold nothing to redact."""
_CLEAN_UP_TO = 1024
_CLEAN_KEPT = 4096


def _redact(text: str) -> str:
    text = _TOKENS.sub(MARK, text)
    text = _AUTH.sub(lambda m: f"{m.group(1)} {MARK}", text)
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{MARK}{m.group(2)}", text)
    return _ASSIGNMENT.sub(_assignment, text)


def redact_value(value: Any) -> Any:
    """``value`` with :func:`redact` applied to every string inside it (dicts, lists, tuples)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


_LIMITS = {"title": 200, "text": 4000, "reason": 1000}


def _redact_fields(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _redact_fields(v, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_redact_fields(v, key) for v in value)
    if isinstance(value, str) and key in _TEXT_FIELDS:
        return redact(value)[: _LIMITS[key]]
    return value


def redact_plan(plan: Plan) -> Plan:
    """``plan`` with titles, claim texts and reasons redacted; ids and hashes untouched."""
    data = plan.model_dump(mode="python")
    cleaned = _redact_fields(data)
    return plan if cleaned == data else type(plan).model_validate(cleaned)
