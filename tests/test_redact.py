"""Secret redaction against a corpus: what must go, and what must stay exactly as it was."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reverie import Reverie
from reverie.config import Config, RedactionConfig
from reverie.errors import InvalidInput
from reverie.models import Claim, PageKind
from reverie.models.plan import CreatePage, Plan, RetirePage
from reverie.redaction import MARK, Redactor, redact, redact_plan
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
    ("the card PIN is 4821", "4821"),
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
    "pin numpy==1.26 before the upgrade",
    "pin urllib3<2 in requirements.txt",
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
    redactor = Redactor()
    secret = "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456"
    clean = "kubectl rollout status deployment/api --timeout=10m"
    assert redactor.text(secret) != secret and redactor.text(clean) == clean
    assert secret not in redactor._clean and clean in redactor._clean
    assert redactor.text(secret) != secret  # asked again: still redacted


# the escapes reported against the redactor: each reached a page, the mirror and recall
ESCAPES = [
    ("mysql -u root --password S3cr3tPassw0rd!", "S3cr3tPassw0rd!"),
    ("mysql -u root -pS3cr3tPassw0rd shop", "S3cr3tPassw0rd"),
    ("mysql -u root -p S3cr3tPassw0rd", "S3cr3tPassw0rd"),
    ("curl -u admin:Adm1nPa55word https://ci.example.com/api", "Adm1nPa55word"),
    (
        "posted to https://hooks.slack.com/services/T0AB12CD3/B0AB12CD3EF/" + "Zx9" * 8,
        "https://hooks.slack.com/services/T0AB12CD3/B0AB12CD3EF/" + "Zx9" * 8,
    ),
    ("the password is S3cr3tPassw0rd!", "S3cr3tPassw0rd!"),
    ("the password is swordfish", "swordfish"),
    (
        "aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=logs;AccountKey=" + "Qk9" * 29 + "a==;"
        "EndpointSuffix=core.windows.net",
        "Qk9" * 29 + "a==",
    ),
    ("REVERIE_API_KEY=rvk_0123456789abcdef_" + "Tk3_" * 10 + "xyz", "Tk3_" * 10),
    ("minted rvk_0123456789abcdef_" + "Tk3-" * 10 + "xyz for acme", "Tk3-" * 10),
]


@pytest.mark.parametrize(("text", "secret"), ESCAPES)
def test_reported_escapes_are_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and MARK in out


def test_the_name_of_a_flag_or_user_stays() -> None:
    assert redact("mysql -u root --password S3cr3t!x") == f"mysql -u root --password {MARK}"
    assert redact("curl -u admin:pa55w0rd http://x") == f"curl -u admin:{MARK} http://x"
    assert redact("mysql -uroot -pS3cr3tx") == f"mysql -uroot -p{MARK}"


# harmless text the redactor once ate or is tempted by; each must come back byte for byte
LOOKALIKES = [
    "imagePullSecrets: regcred",
    "imagePullSecrets:\n  - name: regcred",
    "secretName: api-tls",
    "valueFrom:\n  secretKeyRef:\n    name: db-credentials\n    key: password",
    "existingSecret: postgres-creds",
    "password_file: /run/secrets/db_password",
    "token_url: https://auth.example.com/oauth/token",
    "api_key_env: OPENAI_API_KEY",
    'password: "{{ .Values.db.password }}"',
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "DB_PASSWORD=$(cat /run/secrets/db)",
    "token_type: bearer",
    "kubectl get secret cluster-token -o yaml",
    "secret_arn: arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf",
    "docker run -p 8080:80 nginx",
    "docker run -u 1000:1000 image",
    "mysql -u root -p",
    "ssh-keygen: SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 bob@host",
    '"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUd'
    'BeoGlODJ6+SfaPg=="',
    "received payload=eyJ1c2VyIjogImJvYiIsICJhY3Rpb24iOiAiZGVwbG95In0= from queue",
    "Secret: restart the pod twice before paging",
    "the tokenizer splits on whitespace",
    "passwordless login is enabled",
    "upgraded to v2.14.0-rc.1+build.5",
]


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalikes_survive(text: str) -> None:
    assert redact(text) == text


def test_redaction_is_idempotent() -> None:
    for text, _secret in [*POSITIVES, *ESCAPES]:
        once = redact(text)
        assert redact(once) == once


def test_personal_data_follows_its_policy() -> None:
    text = "page ops@example.com or +1 415 555 0132; card 4111 1111 1111 1111"
    assert Redactor().text(text) == text  # off by default
    tagged = Redactor(RedactionConfig(email="tag", phone="tag", card="tag")).text(text)
    assert tagged == "page [EMAIL] or [PHONE]; card [CARD]"
    gone = Redactor(RedactionConfig(email="redact", phone="off", card="redact")).text(text)
    assert gone == f"page {MARK} or +1 415 555 0132; card {MARK}"


def test_personal_data_is_found_precisely() -> None:
    redactor = Redactor(RedactionConfig(email="tag", phone="tag", card="tag"))
    kept = [
        "postgres://app:pw@db.example.com/x".replace("pw", MARK),
        "order 4111111111111112 shipped",  # fails the Luhn check
        "released 2026-03-04 at 10:12, build 20260304101200",
        "version 1.2.3.4 on port 8080",
    ]
    for text in kept:
        assert redactor.text(text) == text
    assert redactor.text("amex 3782 822463 10005") == "amex [CARD]"


def test_a_policy_outside_off_tag_redact_is_refused() -> None:
    with pytest.raises(InvalidInput, match=r"redaction\.email"):
        RedactionConfig(email="hide")  # type: ignore[arg-type]


def test_a_secret_wins_over_a_personal_data_tag() -> None:
    redactor = Redactor(RedactionConfig(email="tag"))
    assert redactor.text("https://bob:hunter2x@example.com") == f"https://bob:{MARK}@example.com"


def test_the_engine_applies_its_policy_to_pages_and_recall(make_episode: EpisodeFactory) -> None:
    config = Config(redaction=RedactionConfig(email="tag"))
    with Reverie.open(":memory:", config=config) as rv:
        lesson = "mail the release notes to ops-team@example.com before tagging"
        rv.ingest([make_episode(lesson=lesson) for _ in range(3)])
        rv.dream("acme/coder", now=datetime(2026, 11, 10, tzinfo=UTC))
        page = rv.pages("acme/coder")[0].to_markdown()
        assert "ops-team@example.com" not in page and "[EMAIL]" in page
        found = rv.recall("release notes mail before tagging", "acme/coder")
        assert found.items and "ops-team@example.com" not in found.text
    with Reverie.open(":memory:") as rv:  # the default keeps personal data
        rv.ingest([make_episode(lesson=lesson) for _ in range(3)])
        rv.dream("acme/coder", now=datetime(2026, 11, 10, tzinfo=UTC))
        assert "ops-team@example.com" in rv.pages("acme/coder")[0].to_markdown()


# other shapes of the same leaks: names read by words, commands with their own password flags
MORE_CONTEXTS = [
    ('  - name: DB_PASSWORD\n    value: "pr0d-Passw0rd-2026"', "pr0d-Passw0rd-2026"),
    ("PGPASSWORD='s3cr3t-Pa55' psql -h db -U app", "s3cr3t-Pa55"),
    ('$env:API_TOKEN = "f3A9kL2mQ8xZ1pW7vB4n"', "f3A9kL2mQ8xZ1pW7vB4n"),
    ("az login --service-principal -u http://app -p Zx8~Qw7.Er6-Ty5_Ui4", "Zx8~Qw7.Er6-Ty5_Ui4"),
    ("sqlcmd -S db -U sa -P 'Str0ng!Pass'", "Str0ng!Pass"),
    ("openssl enc -aes-256-cbc -k MyS3cr3tK3y! -in f", "MyS3cr3tK3y!"),
    ("htpasswd -b .htpasswd admin Sup3rS3cret", "Sup3rS3cret"),
    ("redis-cli -h cache -a Sup3rS3cr3t! ping", "Sup3rS3cr3t!"),
    ("docker run -e POSTGRES_PASSWORD=hunter2hunter2 postgres", "hunter2hunter2"),
    ("Password=P@ssw0rd123;Encrypt=true", "P@ssw0rd123"),
    ("sentry_dsn = 'https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/1'",
     "0123456789abcdef0123456789abcdef"),
    ("X-Amz-Signature=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
     "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("with X-Amz-Signature=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08: ok",
     "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "secret"), MORE_CONTEXTS)
def test_other_contexts_are_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and MARK in out
