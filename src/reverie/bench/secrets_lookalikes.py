"""Look-alikes: engineering text that resembles a secret and must survive redaction byte for byte.

Each family is a thing a redactor is tempted by: field names that say secret while their value
is a reference (Kubernetes ``imagePullSecrets``, ``secretKeyRef``, ``password_file``), ids and
digests (git SHAs, UUIDs, sha256 in an error line, Docker digests, npm integrity strings),
version strings, URLs without credentials, base64 of ordinary text in a log line, public keys
and certificates, prose about passwords and tokens, and command flags that are not passwords
(``docker run -p 8080:80``). Bodies are drawn from a seeded :class:`random.Random`.
"""

from __future__ import annotations

import base64
import random
import uuid
from collections.abc import Callable

from reverie.bench.secrets_corpus import B62, B64, HEX, Sample, rand

__all__ = ["lookalikes"]

_WORDS = tuple(
    [
        "deploy",
        "retry",
        "cache",
        "timeout",
        "worker",
        "queue",
        "build",
        "image",
        "cluster",
        "node",
        "pod",
        "service",
        "config",
        "release",
        "branch",
        "commit",
        "merge",
        "test",
        "lint",
        "schema",
        "migration",
        "index",
        "replica",
        "backup",
        "restore",
    ]
)


def _sentence(rng: random.Random, n: int = 8) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128)))


def _b64_text(rng: random.Random) -> str:
    payload = rng.choice(
        [
            f'{{"user": "{rng.choice(_WORDS)}", "action": "{rng.choice(_WORDS)}", "ok": true}}',
            _sentence(rng, 10),
            f"job={rng.choice(_WORDS)} status=done retries={rng.randrange(5)}",
        ]
    )
    return base64.b64encode(payload.encode()).decode()


def _cert(rng: random.Random) -> str:
    body = "\n".join(rand(rng, B64, 64) for _ in range(5))
    return f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----"


Family = Callable[[random.Random], str]

FAMILIES: dict[str, list[Family]] = {
    "kubernetes_fields": [
        lambda r: "imagePullSecrets: regcred",
        lambda r: "imagePullSecrets:\n  - name: " + rng_word(r) + "-registry",
        lambda r: f"secretName: {rng_word(r)}-tls",
        lambda r: "valueFrom:\n  secretKeyRef:\n    name: db-credentials\n    key: password",
        lambda r: f"existingSecret: {rng_word(r)}-creds",
        lambda r: "envFrom:\n  - secretRef:\n      name: app-secrets",
        lambda r: f"serviceAccountName: {rng_word(r)}-sa\nautomountServiceAccountToken: false",
        lambda r: "kubectl create secret generic app-secrets --from-env-file=.env",
        lambda r: f"kubectl get secret {rng_word(r)}-token -o yaml",
        lambda r: "tokenSecretRef:\n  name: vault-token\n  key: token",
    ],
    "secret_references": [
        lambda r: "password_file: /run/secrets/db_password",
        lambda r: f"token_url: https://auth.example.com/oauth/{rng_word(r)}/token",
        lambda r: "api_key_env: OPENAI_API_KEY",
        lambda r: (
            "secret_arn: arn:aws:secretsmanager:eu-west-1:"
            f"{r.randrange(10**11, 10**12)}:secret:prod/db-AbCdEf"
        ),
        lambda r: "password: ${DB_PASSWORD}",
        lambda r: 'password: "{{ .Values.postgres.password }}"',
        lambda r: "api_key: op://Engineering/OpenAI/credential",
        lambda r: "client_secret: <your-client-secret>",
        lambda r: "password: ****",
        lambda r: "token: null",
        lambda r: "secret: !vault |",
        lambda r: "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        lambda r: "password_min_length: 12\npassword_policy: strict",
        lambda r: "token_ttl: 3600",
        lambda r: "token_type: bearer",
        lambda r: "--password-stdin < ~/.docker/pass.txt",
        lambda r: "max_tokens: 4000 and input_tokens=" + str(r.randrange(100, 999)),
        lambda r: "secretsmanager get-secret-value --secret-id prod/db",
        lambda r: "pass_through: true",
        lambda r: "DB_PASSWORD=$(cat /run/secrets/db)",
    ],
    "git_shas": [
        lambda r: f"commit {rand(r, HEX, 40)}",
        lambda r: f"Merge {rand(r, HEX, 7)} into main",
        lambda r: f"reverted {rand(r, HEX, 12)} after the flaky test",
        lambda r: f"HEAD is now at {rand(r, HEX, 7)} {_sentence(r, 4)}",
    ],
    "uuids_and_ids": [
        lambda r: f"request_id={_uuid(r)}",
        lambda r: f"trace {rand(r, HEX, 32)} span {rand(r, HEX, 16)}",
        lambda r: f"ep_{rand(r, HEX, 32)} and pg_{rand(r, HEX, 20)}",
        lambda r: (
            f"pod api-{rand(r, HEX, 9)}-{rand(r, 'bcdfghjklmnpqrstvwxz2456789', 5)} restarted"
        ),
        lambda r: f"customer cus_{rand(r, B62, 14)} paid invoice in_{rand(r, B62, 24)}",
        lambda r: f"i-{rand(r, HEX, 17)} in subnet-{rand(r, HEX, 8)}",
        lambda r: f"event id {_uuid(r)} stored",
    ],
    "hashes_in_errors": [
        lambda r: f"checksum mismatch: expected sha256:{rand(r, HEX, 64)}, got {rand(r, HEX, 64)}",
        lambda r: f"pulled ghcr.io/acme/api@sha256:{rand(r, HEX, 64)}",
        lambda r: f'"integrity": "sha512-{rand(r, B64, 86)}=="',
        lambda r: f"example.com/mod v1.2.3 h1:{rand(r, B64, 43)}=",
        lambda r: f"md5 {rand(r, HEX, 32)}  backup.tar.gz",
        lambda r: f"--hash=sha256:{rand(r, HEX, 64)}",
        lambda r: f'ETag: "{rand(r, HEX, 32)}"',
    ],
    "versions": [
        lambda r: (
            f"upgraded to v{r.randrange(1, 4)}.{r.randrange(30)}.{r.randrange(30)}"
            f"-rc.{r.randrange(5)}+build.{r.randrange(999)}"
        ),
        lambda r: f"python 3.11.{r.randrange(10)} and numpy 2.4.{r.randrange(5)}",
        lambda r: f"nginx:1.25.{r.randrange(5)}-alpine",
        lambda r: "pydantic>=2.7,<3 typer==0.29.0",
    ],
    "urls_without_credentials": [
        lambda r: f"https://example.com/docs/api/keys?page={r.randrange(9)}&sort=asc",
        lambda r: "postgres://db.internal:5432/app",
        lambda r: "git clone git@github.com:acme/api.git",
        lambda r: f"https://github.com/acme/api/pull/{r.randrange(9999)}/files",
        lambda r: (
            f"https://console.aws.amazon.com/secretsmanager/home?region=eu-west-1#/secret?name={rng_word(r)}"
        ),
        lambda r: "https://oauth2.googleapis.com/token",
        lambda r: "redis://cache:6379/0",
        lambda r: "https://hooks.slack.com/ docs say webhooks start with this host",
    ],
    "base64_of_text": [
        lambda r: f"received payload={_b64_text(r)} from queue",
        lambda r: f"INFO message body: {_b64_text(r)}",
        lambda r: (
            "caBundle: "
            + base64.b64encode(b"-----BEGIN CERTIFICATE-----" + rand(r, B62, 30).encode()).decode()
        ),
    ],
    "public_keys": [
        lambda r: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rand(r, B64, 43)} bob@laptop",
        lambda r: f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{rand(r, B64, 300)} ci@runner",
        _cert,
        lambda r: (
            "-----BEGIN PUBLIC KEY-----\n"
            + rand(r, B64, 64)
            + "\n"
            + rand(r, B64, 24)
            + "==\n-----END PUBLIC KEY-----"
        ),
    ],
    "prose": [
        lambda r: "the password was rotated yesterday",
        lambda r: "the password is required for the admin panel",
        lambda r: "Bearer tokens expire after an hour",
        lambda r: "the token is valid for 15 minutes",
        lambda r: "the api key is stored in vault",
        lambda r: "Secret: restart the pod twice before paging",
        lambda r: "password reset emails go out within a minute",
        lambda r: "passwordless login is enabled for staff",
        lambda r: "the secret is to pin the base image",
        lambda r: "token expired, retried with a fresh one",
        lambda r: "AKIA is the prefix of AWS access keys",
        lambda r: "skip the sk- prefix check in tests",
        lambda r: "the tokenizer splits on whitespace",
        lambda r: "rotate the key every 90 days",
    ],
    "command_lines": [
        lambda r: f"docker run -p {r.randrange(1024, 9999)}:80 nginx",
        lambda r: "mkdir -p /var/lib/app && ssh -p 2222 deploy@host",
        lambda r: "mysql -u root -p",
        lambda r: f"kubectl rollout status deployment/{rng_word(r)} --timeout=10m",
        lambda r: 'curl -u "$USER:$PASS" https://api.example.com',
        lambda r: f"python -m pytest -q -k {rng_word(r)} --maxfail=1",
        lambda r: "psql -h db -U app -W app",
        lambda r: "docker run -u 1000:1000 -v $PWD:/src image",
    ],
    "identifiers": [
        lambda r: "AbstractSingletonProxyFactoryBean2Impl",
        lambda r: (
            f"/home/ci/builds/{rng_word(r)}/node_modules/.pnpm/@types+node@20.11.5/node_modules"
        ),
        lambda r: f"com.example.{rng_word(r)}.ServiceConfigurationAutoConfiguration",
        lambda r: f"TimeoutError: timed out waiting for the condition on {rng_word(r)}",
        lambda r: f"/nix/store/{rand(r, '0123456789abcdfghijklmnpqrsvwxyz', 32)}-python3-3.11.7",
        lambda r: f"s3://acme-{rng_word(r)}-logs/2026/03/04/{rand(r, HEX, 8)}.json.gz",
        lambda r: f"thread pool-{r.randrange(9)}-thread-{r.randrange(99)} at 0x{rand(r, HEX, 12)}",
        lambda r: (
            f"mac {':'.join(rand(r, HEX, 2) for _ in range(6))}"
            f" ip 10.{r.randrange(255)}.{r.randrange(255)}.{r.randrange(255)}"
        ),
    ],
    "personal_data_off_by_default": [
        lambda r: f"page {rng_word(r)}@example.com when the queue backs up",
        lambda r: f"call +1 415 555 {r.randrange(1000, 9999)} for the on-call",
    ],
}


def rng_word(rng: random.Random) -> str:
    return rng.choice(_WORDS)


def lookalikes(seed: int = 0, total: int = 240) -> list[Sample]:
    """``total`` look-alikes, drawn family by family in turn; none holds a secret."""
    rng = random.Random(seed + 1)
    makers = [(family, make) for family, makes in FAMILIES.items() for make in makes]
    out: list[Sample] = []
    for i in range(total):
        family, make = makers[i % len(makers)]
        out.append(Sample(make(rng), family, ()))
    return out
