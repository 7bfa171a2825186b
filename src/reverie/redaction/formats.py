"""Credentials recognised by their shape alone: a vendor prefix, an alphabet and a length.

A token format is listed when its issuer documents (or its tokens plainly show) a fixed prefix or
a fixed layout that ordinary text does not have: ``ghp_`` and 36 base62 characters, ``AKIA`` and
16 upper-case letters or digits, a Slack webhook path. Such a match is a secret wherever it
stands, so these rules need no context and are the precise half of the redactor; what a shape
cannot decide (a bare 40-character hex string, ``password: hunter2``) is left to
:mod:`reverie.redaction.context` and :mod:`reverie.redaction.entropy`.

All formats are one alternation with one named group each, so a text is scanned once and a match
says which format it was (``match.lastgroup``). Bodies are matched generously (``{20,}`` rather
than an exact length) because issuers lengthen tokens over time; the prefixes keep that precise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["FORMATS", "find_formats"]

_B62 = "A-Za-z0-9"
_URLSAFE = r"A-Za-z0-9_\-"

FORMATS: dict[str, str] = {
    # private keys: a PEM, OpenSSH or PGP block (to its end, or to the end of the text), PuTTY, age
    "private_key_block": (
        r"-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
        r"[\s\S]*?(?:-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----|\Z)"
    ),
    "putty_private_key": r"PuTTY-User-Key-File-\d:[\s\S]*?(?:Private-MAC: ?[0-9a-f]+|\Z)",
    "age_secret_key": r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}",
    # cloud providers
    "aws_access_key_id": r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
    "google_api_key": rf"\bAIza[{_URLSAFE}]{{35}}(?![{_URLSAFE}])",
    "google_oauth_token": rf"\bya29\.[{_URLSAFE}.]{{20,}}",
    "azure_ad_client_secret": r"(?<![\w~.-])[\w~.-]{3}\dQ~[\w~.-]{31,34}(?![\w~.-])",
    "digitalocean_token": r"\bdo[opr]_v1_[a-f0-9]{64}\b",
    "alibaba_access_key": r"\bLTAI[A-Za-z0-9]{16,24}\b",
    "tencent_secret_id": r"\bAKID[A-Za-z0-9]{32}\b",
    # source hosting, registries and CI
    "github_token": rf"\bgh[pousr]_[{_B62}]{{30,}}",
    "github_fine_grained_token": r"\bgithub_pat_[A-Za-z0-9_]{30,}",
    "gitlab_token": (
        r"\b(?:glpat|gldt|glrt|glptt|glft|glimt|glagent|glcbt|glsoat|gloas)-[A-Za-z0-9_-]{20,}"
        r"|\bGR1348941[A-Za-z0-9_-]{20,}"
    ),
    "bitbucket_app_password": r"\bATBB[A-Za-z0-9]{28,}",
    "atlassian_api_token": r"\bATATT3[A-Za-z0-9_=-]{40,}",
    "npm_token": rf"\bnpm_[{_B62}]{{36}}\b",
    "pypi_token": rf"\bpypi-AgE[{_URLSAFE}]{{40,}}",
    "rubygems_token": r"\brubygems_[a-f0-9]{48}\b",
    "nuget_api_key": r"\boy2[a-z0-9]{43}\b",
    "docker_hub_token": rf"\bdckr_(?:pat|oat)_[{_URLSAFE}]{{20,}}",
    "buildkite_token": r"\bbkua_[a-f0-9]{40}\b",
    "terraform_cloud_token": rf"\b[{_B62}]{{14}}\.atlasv1\.[{_URLSAFE}]{{60,}}",
    "vault_token": rf"\bhv[sbr]\.[{_URLSAFE}]{{24,}}",
    "pulumi_token": r"\bpul-[a-f0-9]{40}\b",
    "jfrog_token": rf"\b(?:AKCp[{_B62}]{{60,}}|cmVmdGtuOjA[{_B62}]{{50,}})",
    "doppler_token": rf"\bdp\.(?:pt|st|sa|ct|scim)\.[{_B62}]{{40,}}",
    # chat and webhooks
    "slack_token": r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Z0-9]+-\d+-[a-f0-9]{20,}",
    "slack_webhook": (
        r"\bhttps?://hooks\.slack(?:-gov)?\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"
    ),
    "discord_webhook": (
        r"\bhttps?://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}"
    ),
    "teams_webhook": (
        r"\bhttps://[\w.-]*(?:webhook\.office\.com|outlook\.office(?:365)?\.com)"
        r"/webhook(?:b2)?/[^\s\"'<>]{30,}"
        r"|\bhttps://[\w.-]+\.logic\.azure\.com[^\s\"'<>]*[?&]sig=[^\s\"'<>&]{20,}"
    ),
    "telegram_bot_token": r"(?<!\d)\d{8,10}:AA[A-Za-z0-9_-]{32,33}(?![\w-])",
    "discord_bot_token": r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b",
    # AI providers and SaaS APIs
    "anthropic_key": r"\bsk-ant-[A-Za-z0-9_-]{16,}",
    "openai_key": r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}",
    "huggingface_token": rf"\bhf_[{_B62}]{{30,}}",
    "stripe_key": rf"\b(?:sk|rk)_(?:live|test)_[{_B62}]{{16,}}",
    "stripe_webhook_secret": rf"\bwhsec_[{_B62}]{{24,}}",
    "sendgrid_key": rf"\bSG\.[{_URLSAFE}]{{16,32}}\.[{_URLSAFE}]{{16,64}}",
    "twilio_key": r"\bSK[0-9a-f]{32}\b",
    "mailgun_key": r"\bkey-[0-9a-f]{32}\b",
    "mailchimp_key": r"\b[0-9a-f]{32}-us\d{1,2}\b",
    "shopify_token": r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
    "square_token": rf"\b(?:sq0atp|sq0csp|sq0idp)-[{_URLSAFE}]{{22,43}}|\bEAAA[{_URLSAFE}]{{60}}",
    "sentry_token": rf"\bsntr[ysu]_[{_B62}+/=_]{{40,}}",
    "newrelic_key": r"\bNR(?:AK|II|JS|RA|AA)-[A-Za-z0-9]{20,}",
    "launchdarkly_key": (
        r"\b(?:sdk|mob|api)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
    ),
    "tailscale_key": r"\btskey-(?:auth|client|api|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}",
    "linear_key": rf"\blin_(?:api|oauth)_[{_B62}]{{32,}}",
    "notion_token": rf"\b(?:ntn_[{_B62}]{{40,}}|secret_[{_B62}]{{43}}\b)",
    "postman_key": r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",
    "databricks_token": r"\bdapi[a-f0-9]{32}(?:-\d)?\b",
    "grafana_token": rf"\b(?:glc_[{_B62}+/=]{{32,}}|glsa_[{_B62}]{{32}}_[a-f0-9]{{8}})",
    "okta_token": r"\b00[A-Za-z0-9_-]{40}\b(?=\s|$|[\"',;])",
    "facebook_token": r"\bEAA[A-Za-z0-9]{100,}",
    "twitter_bearer": r"\bA{20,24}[A-Za-z0-9%]{60,}",
    "mapbox_secret": rf"\bsk\.eyJ[{_URLSAFE}]+\.[{_URLSAFE}]{{20,}}",
    "supabase_token": r"\bsbp_[a-f0-9]{40}\b",
    "planetscale_token": rf"\bpscale_(?:tkn|pw|oauth)_[{_URLSAFE}.]{{32,}}",
    "flyio_token": rf"\bfm\d_[{_URLSAFE}+/=]{{50,}}|\bfo1_[{_URLSAFE}]{{39,}}",
    "reverie_api_key": r"\brvk_[0-9a-f]{16}_[A-Za-z0-9_-]{20,}",
    # signed tokens
    "jwt": rf"\beyJ[{_URLSAFE}]{{10,}}\.[{_URLSAFE}]{{10,}}\.[{_URLSAFE}]{{10,}}",
}

_BLOCKS = frozenset({"private_key_block", "putty_private_key"})
"""Formats that span lines; every other one is a single run of non-blank characters."""
_BLOCK = re.compile("|".join(f"(?P<{n}>{FORMATS[n]})" for n in FORMATS if n in _BLOCKS))
_TOKEN = re.compile("|".join(f"(?P<{n}>{b})" for n, b in FORMATS.items() if n not in _BLOCKS))
_RUN = re.compile(r"[^\s\"'<>()\[\]{},;`]{16,}")
_STARTS = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]|(?<=[a-z])(?=\d{8,10}:AA)")


def find_formats(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, format name)`` of every well-known credential in ``text``.

    The alternation of all formats is slow to try at every position, so it is tried only where
    a word starts inside a run of 16 or more non-blank characters (every single-line format is
    such a run, and starts a word); a sentence of ordinary words costs one cheap scan.
    """
    if "-----BEGIN" in text or "PuTTY-User-Key-File" in text:
        for match in _BLOCK.finditer(text):
            yield match.start(), match.end(), match.lastgroup or "private_key"
    for run in _RUN.finditer(text):
        start, end = run.span()
        for head in _STARTS.finditer(text, start, end):
            if head.start() < start:
                continue  # inside the format matched before
            token = _TOKEN.match(text, head.start(), end)
            if token is not None:
                yield token.start(), token.end(), token.lastgroup or "token"
                start = token.end()
