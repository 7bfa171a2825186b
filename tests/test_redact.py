"""Secret redaction against a corpus: what must go, and what must stay exactly as it was."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reverie import Reverie
from reverie.dream.plan import CreatePage, Plan, RetirePage
from reverie.models import Claim, PageKind
from reverie.redact import MARK, redact, redact_plan
from tests.conftest import EpisodeFactory

AWS = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq0\nabcDEF123==\n"
    "-----END RSA PRIVATE KEY-----"
)

# (text, the secret that must disappear)
POSITIVES = [
    ("key is sk-" + "a" * 48, "sk-" + "a" * 48),
    ("OPENAI_API_KEY=sk-proj-" + "Ab3_" * 10, "sk-proj-" + "Ab3_" * 10),
    ("sk-svcacct-" + "Z9y8X7w6" * 4 + " used", "sk-svcacct-" + "Z9y8X7w6" * 4),
    ("anthropic sk-ant-api03-" + "q" * 40, "sk-ant-api03-" + "q" * 40),
    (f"aws_access_key_id = {AWS}", AWS),
    ("creds ASIA" + "Y3FAKEKEY0000001 expired", "ASIAY3FAKEKEY0000001"),
    (f"token {GITHUB} leaked", GITHUB),
    ("gho_" + "x" * 36, "gho_" + "x" * 36),
    ("github_pat_" + "11ABCDEFG0" * 5, "github_pat_" + "11ABCDEFG0" * 5),
    ("gitlab glpat-" + "abcdEFGH1234ijklMNOP", "glpat-abcdEFGH1234ijklMNOP"),
    ("slack xoxb-123456789012-abcdefABCDEF", "xoxb-123456789012-abcdefABCDEF"),
    ("xoxp-1111-2222-3333-abcd", "xoxp-1111-2222-3333-abcd"),
    (
        "maps key AIza" + "SyA1234567890abcdefghijklmnopqrstuv",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    ),
    ("stripe sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("hf token hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123"),
    (f"jwt {JWT}", JWT),
    ("Authorization: Bearer abc.def-123_456~xyz", "abc.def-123_456~xyz"),
    ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='", "dXNlcjpwYXNzd29yZA=="),
    ("postgres://admin:hunter2hunter2@db:5432/app", "hunter2hunter2"),
    ("https://user:p%40ssw0rd@example.com/x", "p%40ssw0rd"),
    ("redis://:topsecret99@cache:6379", "topsecret99"),
    ("password=correcthorse", "correcthorse"),
    ("PASSWORD: Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("db_password = 's3cr3t-value'", "s3cr3t-value"),
    ('{"api_key": "abcd1234efgh5678"}', "abcd1234efgh5678"),
    ("client_secret: 8f7e6d5c4b3a", "8f7e6d5c4b3a"),
    ("secret: my-very-secret", "my-very-secret"),
    ("export AUTH_TOKEN=zzzzyyyyxxxx", "zzzzyyyyxxxx"),
    ("access_token=ya29.a0AfH6SMBx", "ya29.a0AfH6SMBx"),
    ("private_key => 'MIIBOgIBAAJ'", "MIIBOgIBAAJ"),
    (f"key file:\n{PEM}\ndone", "MIIEpAIBAAKCAQEA7bq0"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n", "b3BlbnNzaC1rZXk"),
    ("login with pwd=qwerty123 failed", "qwerty123"),
    ("set apikey: 0123456789abcdef", "0123456789abcdef"),
]

# texts that must come back unchanged
NEGATIVES = [
    "deploy service 3 to the staging cluster",
    "TimeoutError: timed out waiting for the condition",
    "ep_0123456789abcdef0123456789abcdef",
    "pg_0a1b2c3d4e5f6a7b8c9d",
    "sha256:" + "ab12" * 16,
    "commit 3f2a9c1d4e5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "https://example.com/docs/api/keys",
    "postgres://db.internal:5432/app",
    "the password was rotated yesterday",
    "password: <redacted>",
    "password=${DB_PASSWORD}",
    "password: ****",
    "token: null",
    "max_tokens: 4000 and input_tokens=120",
    "task-runner finished risk-assessment",
    "Bearer tokens expire after an hour",
    "ask kubectl for the pods",
    "skip the sk- prefix check",
    "AKIA is the prefix of AWS access keys",
    "",
]


@pytest.mark.parametrize(("text", "secret"), POSITIVES)
def test_secret_is_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and MARK in out


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_text_is_kept(text: str) -> None:
    assert redact(text) == text


def test_corpus_size() -> None:
    assert len(POSITIVES) + len(NEGATIVES) >= 40


def test_redaction_keeps_the_context() -> None:
    assert redact("export OPENAI_API_KEY=sk-" + "b" * 40 + " then run") == (
        f"export OPENAI_API_KEY={MARK} then run"
    )
    assert redact("postgres://bob:pw12345@h/db") == f"postgres://bob:{MARK}@h/db"


def test_redact_plan_touches_text_not_ids() -> None:
    secret = "sk-" + "c" * 40
    claim = Claim(text=f"use {secret}", episode_ids=("ep-1",))
    create = CreatePage(
        topic_key="t",
        title=f"key {secret}",
        kind=PageKind.FACT,
        confidence=0.5,
        claims=(claim,),
        valid_from=datetime(2026, 1, 1, tzinfo=UTC),
    )
    retire = RetirePage(page_id="pg_1", expected_hash="sha256:00", reason=f"leaked {secret}")
    clean = redact_plan(Plan(operations=(create, retire), distiller="x"))
    dumped = clean.model_dump_json()
    assert secret not in dumped and "ep-1" in dumped and "sha256:00" in dumped
    plain = Plan(
        operations=(
            create.model_copy(
                update={"title": "t", "claims": (Claim(text="x", episode_ids=("e",)),)}
            ),
        )
    )
    assert redact_plan(plain) is plain


def test_extractive_pages_are_redacted_by_the_cycle(
    rv: Reverie, make_episode: EpisodeFactory
) -> None:
    key = "ghp_" + "Zq9" * 12
    rv.ingest([make_episode(lesson=f"log in to the registry with {key} first") for _ in range(3)])
    report = rv.dream("acme/coder", now=datetime(2026, 11, 10, tzinfo=UTC))
    assert report.created == 1
    page = rv.pages("acme/coder")[0]
    assert key not in page.to_markdown() and MARK in page.to_markdown()
    again = rv.dream("acme/coder", now=datetime(2026, 11, 11, tzinfo=UTC))
    assert again.revised == 0


def test_only_texts_with_nothing_to_redact_are_remembered() -> None:
    from reverie import redact as module

    secret = "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456"
    clean = "kubectl rollout status deployment/api --timeout=10m"
    assert module.redact(secret) != secret and module.redact(clean) == clean
    assert secret not in module._CLEAN and clean in module._CLEAN
    assert module.redact(secret) != secret  # asked again: still redacted
