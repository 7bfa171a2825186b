"""A generated corpus of synthetic secrets, each labelled with its format and its exact span.

Every secret here is synthetic: a real format's prefix and alphabet with a body drawn from a
seeded :class:`random.Random`, so the corpus is the same for a seed and no credential is real.
A format comes with several contexts in which such a secret is pasted in practice (a shell
line, an env file, YAML, JSON, a log line, a sentence), and each :class:`Sample` records the
character span that redaction must remove (``text[start:end]`` is the secret), so recall counts
a secret as caught only when every character of it is gone.

The look-alikes that must come back unchanged are :mod:`reverie.bench.secrets_lookalikes`'.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Sample", "fill", "positives", "rand"]

B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = B62 + "+/"
URLSAFE = B62 + "-_"
UPPER_DIGITS = string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class Sample:
    """One text; ``spans`` are the secrets in it (empty for a look-alike)."""

    text: str
    format: str
    spans: tuple[tuple[int, int], ...]


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


_SLOT = re.compile(r"\{s\}")


def fill(template: str, secret: str, fmt: str) -> Sample:
    """``template`` with each ``{s}`` replaced by ``secret``, the spans recorded."""
    parts, spans, at = [], [], 0
    for m in _SLOT.finditer(template):
        parts.append(template[at : m.start()])
        start = sum(len(p) for p in parts)
        parts.append(secret)
        spans.append((start, start + len(secret)))
        at = m.end()
    parts.append(template[at:])
    return Sample("".join(parts), fmt, tuple(spans))


def _pem(rng: random.Random, label: str, lines: int = 6) -> str:
    body = "\n".join(rand(rng, B64, 64) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n{rand(rng, B64, 20)}==\n-----END {label}-----"


def _jwt(rng: random.Random) -> str:
    def enc(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    head = enc({"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"})
    claims = {"sub": rand(rng, HEX, 12), "iat": rng.randrange(1_600_000_000, 1_800_000_000)}
    return f"{head}.{enc(claims)}.{rand(rng, URLSAFE, 43)}"


def _password(rng: random.Random) -> str:
    words = ["Summer", "Tiger", "Blue", "Rocket", "Maple", "Falcon", "Orbit", "Delta"]
    return rng.choice(
        [
            rng.choice(words) + str(rng.randrange(10, 9999)) + rng.choice("!#$%*"),
            rand(rng, B62 + "!#%*", rng.randrange(10, 20)),
            rand(rng, string.ascii_lowercase, 3) + rand(rng, string.digits, 3) + rand(rng, B62, 6),
        ]
    )


Gen = Callable[[random.Random], str]

# format name -> (body generator, contexts with {s} where the secret stands)
FORMATS: dict[str, tuple[Gen, list[str]]] = {
    "aws_access_key_id": (
        lambda r: rng_pick(r, ["AKIA", "ASIA"]) + rand(r, UPPER_DIGITS, 16),
        [
            "aws_access_key_id = {s}",
            "export AWS_ACCESS_KEY_ID={s}",
            "creds {s} expired at noon",
            '{"AccessKeyId": "{s}", "Expiration": "2026-01-01"}',
        ],
    ),
    "aws_secret_access_key": (
        lambda r: rand(r, B64, 40),
        [
            "aws_secret_access_key = {s}",
            "aws_secret_access_key {s}",
            "AWS_SECRET_ACCESS_KEY={s}",
            "aws configure set aws_secret_access_key {s}",
            '"SecretAccessKey": "{s}"',
        ],
    ),
    "aws_session_token": (
        lambda r: "FwoGZXIvYXdzE" + rand(r, B64, 180),
        ["aws_session_token = {s}", "export AWS_SESSION_TOKEN={s}"],
    ),
    "gcp_api_key": (
        lambda r: "AIza" + rand(r, URLSAFE, 35),
        ["maps key {s} in index.html", "GOOGLE_API_KEY={s}", "?key={s}&libraries=places"],
    ),
    "gcp_service_account_key": (
        lambda r: _pem(r, "PRIVATE KEY").replace("\n", "\\n"),
        ['{"type": "service_account", "private_key": "{s}", "client_email": "x@p.iam"}'],
    ),
    "google_oauth_token": (
        lambda r: "ya29." + rand(r, URLSAFE, 80),
        ["access_token={s}", "Authorization: Bearer {s}", "token {s} from gcloud"],
    ),
    "azure_storage_account_key": (
        lambda r: rand(r, B64, 86) + "==",
        [
            "DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey={s};EndpointSuffix=core.windows.net",
            "AccountKey={s}",
            "AZURE_STORAGE_KEY={s}",
        ],
    ),
    "azure_sas_token": (
        lambda r: rand(r, B62, 40) + "%3D",
        [
            "https://acct.blob.core.windows.net/c/f.zip?sv=2022-11-02&se=2026-01-01&sp=r&sig={s}",
            "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig={s}",
        ],
    ),
    "azure_ad_client_secret": (
        lambda r: rand(r, URLSAFE, 3) + str(r.randrange(10)) + "Q~" + rand(r, URLSAFE + "~.", 34),
        ["AZURE_CLIENT_SECRET={s}", "client secret {s} expires in 6 months", "--password {s}"],
    ),
    "azure_devops_pat": (
        lambda r: rand(r, string.ascii_lowercase + "234567", 52),
        ["AZURE_DEVOPS_EXT_PAT={s}", "az devops login --token {s}"],
    ),
    "azure_service_bus": (
        lambda r: rand(r, B64, 43) + "=",
        ["Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={s}"],
    ),
    "digitalocean_token": (
        lambda r: "dop_v1_" + rand(r, HEX, 64),
        ["DIGITALOCEAN_TOKEN={s}", "doctl auth init -t {s}"],
    ),
    "alibaba_access_key": (
        lambda r: "LTAI" + rand(r, B62, 20),
        ["aliyun key {s}", "ALIBABA_CLOUD_ACCESS_KEY_ID={s}"],
    ),
    "heroku_api_key": (
        lambda r: "-".join(rand(r, HEX, n) for n in (8, 4, 4, 4, 12)),
        ["HEROKU_API_KEY={s}", "heroku_api_key: {s}"],
    ),
    "cloudflare_api_token": (
        lambda r: rand(r, URLSAFE, 40),
        ["CLOUDFLARE_API_TOKEN={s}", "cf token: {s}"],
    ),
    "github_token": (
        lambda r: rng_pick(r, ["ghp_", "gho_", "ghs_", "ghu_", "ghr_"]) + rand(r, B62, 36),
        [
            "token {s} leaked",
            "git clone https://x-access-token:{s}@github.com/o/r.git",
            "GITHUB_TOKEN={s}",
            "gh auth login --with-token <<< {s}",
        ],
    ),
    "github_fine_grained_pat": (
        lambda r: "github_pat_11" + rand(r, UPPER_DIGITS, 20) + "_" + rand(r, B62, 59),
        ["GH_TOKEN={s}", "use {s} for the release job"],
    ),
    "gitlab_token": (
        lambda r: rng_pick(r, ["glpat-", "glrt-", "gldt-"]) + rand(r, URLSAFE, 20),
        ["PRIVATE-TOKEN: {s}", "gitlab token {s}", "CI_JOB_TOKEN={s}"],
    ),
    "bitbucket_app_password": (
        lambda r: "ATBB" + rand(r, B62, 32),
        ["BITBUCKET_APP_PASSWORD={s}", "bb app password {s}"],
    ),
    "circleci_token": (lambda r: rand(r, HEX, 40), ["CIRCLE_TOKEN={s}", "circle-token: {s}"]),
    "buildkite_token": (
        lambda r: "bkua_" + rand(r, HEX, 40),
        ["BUILDKITE_API_TOKEN={s}", "bk token {s}"],
    ),
    "npm_token": (
        lambda r: "npm_" + rand(r, B62, 36),
        ["//registry.npmjs.org/:_authToken={s}", "NPM_TOKEN={s}"],
    ),
    "pypi_token": (
        lambda r: "pypi-AgEIcHlwaS5vcmc" + rand(r, URLSAFE, 60),
        ["password = {s}", "twine upload -p {s} dist/*"],
    ),
    "docker_hub_token": (
        lambda r: "dckr_pat_" + rand(r, URLSAFE, 27),
        ["docker login -u bob -p {s}", "DOCKERHUB_TOKEN={s}"],
    ),
    "terraform_cloud_token": (
        lambda r: rand(r, B62, 14) + ".atlasv1." + rand(r, URLSAFE, 67),
        ['credentials "app.terraform.io" { token = "{s}" }', "TF_TOKEN={s}"],
    ),
    "vault_token": (
        lambda r: "hvs." + rand(r, URLSAFE, 24),
        ["VAULT_TOKEN={s}", "X-Vault-Token: {s}"],
    ),
    "rubygems_key": (
        lambda r: "rubygems_" + rand(r, HEX, 48),
        ["GEM_HOST_API_KEY={s}", ":rubygems_api_key: {s}"],
    ),
    "slack_token": (
        lambda r: (
            rng_pick(r, ["xoxb-", "xoxp-", "xoxa-"])
            + f"{r.randrange(10**11, 10**12)}-{r.randrange(10**11, 10**12)}-"
            + rand(r, B62, 24)
        ),
        ["slack bot token {s}", "SLACK_BOT_TOKEN={s}", "Authorization: Bearer {s}"],
    ),
    "slack_webhook": (
        lambda r: (
            "https://hooks.slack.com/services/"
            f"T{rand(r, UPPER_DIGITS, 8)}/B{rand(r, UPPER_DIGITS, 10)}/{rand(r, B62, 24)}"
        ),
        ["curl -X POST -d @msg.json {s}", "SLACK_WEBHOOK_URL={s}", "posted to {s} ok"],
    ),
    "discord_webhook": (
        lambda r: (
            f"https://discord.com/api/webhooks/{r.randrange(10**17, 10**18)}/{rand(r, URLSAFE, 68)}"
        ),
        ["webhook: {s}", "notify {s} on failure"],
    ),
    "teams_webhook": (
        lambda r: (
            f"https://acme.webhook.office.com/webhookb2/{rand(r, HEX, 8)}-{rand(r, HEX, 4)}"
            f"@{rand(r, HEX, 8)}/IncomingWebhook/{rand(r, HEX, 32)}/{rand(r, HEX, 8)}"
        ),
        ["TEAMS_WEBHOOK={s}", "teams hook {s}"],
    ),
    "telegram_bot_token": (
        lambda r: f"{r.randrange(10**8, 10**10)}:AA{rand(r, URLSAFE, 33)}",
        ["TELEGRAM_BOT_TOKEN={s}", "https://api.telegram.org/bot{s}/sendMessage"],
    ),
    "discord_bot_token": (
        lambda r: (
            rng_pick(r, ["M", "N"])
            + rand(r, B62, 23)
            + "."
            + rand(r, URLSAFE, 6)
            + "."
            + rand(r, URLSAFE, 27)
        ),
        ["DISCORD_TOKEN={s}", "bot.run('{s}')"],
    ),
    "openai_key": (
        lambda r: rng_pick(r, ["sk-proj-", "sk-", "sk-svcacct-"]) + rand(r, URLSAFE, 48),
        ["OPENAI_API_KEY={s}", 'client = OpenAI(api_key="{s}")', "key is {s}"],
    ),
    "anthropic_key": (
        lambda r: "sk-ant-api03-" + rand(r, URLSAFE, 93) + "AA",
        ["ANTHROPIC_API_KEY={s}", "x-api-key: {s}"],
    ),
    "huggingface_token": (
        lambda r: "hf_" + rand(r, B62, 34),
        ["HF_TOKEN={s}", "huggingface-cli login --token {s}"],
    ),
    "stripe_key": (
        lambda r: rng_pick(r, ["sk_live_", "rk_live_", "sk_test_"]) + rand(r, B62, 24),
        [
            'stripe.api_key = "{s}"',
            "STRIPE_SECRET_KEY={s}",
            "curl https://api.stripe.com/v1/charges -u {s}:",
        ],
    ),
    "stripe_webhook_secret": (
        lambda r: "whsec_" + rand(r, B62, 32),
        ["STRIPE_WEBHOOK_SECRET={s}", "endpoint secret {s}"],
    ),
    "sendgrid_key": (
        lambda r: "SG." + rand(r, URLSAFE, 22) + "." + rand(r, URLSAFE, 43),
        ["SENDGRID_API_KEY={s}", "sendgrid key {s}"],
    ),
    "twilio_key": (lambda r: "SK" + rand(r, HEX, 32), ["TWILIO_API_KEY={s}", "twilio key {s}"]),
    "twilio_auth_token": (lambda r: rand(r, HEX, 32), ["TWILIO_AUTH_TOKEN={s}", "auth_token: {s}"]),
    "mailgun_key": (
        lambda r: "key-" + rand(r, HEX, 32),
        ["MAILGUN_API_KEY={s}", "curl -s --user 'api:{s}' https://api.mailgun.net"],
    ),
    "mailchimp_key": (
        lambda r: rand(r, HEX, 32) + f"-us{r.randrange(1, 21)}",
        ["MAILCHIMP_KEY={s}", "mailchimp {s}"],
    ),
    "shopify_token": (
        lambda r: rng_pick(r, ["shpat_", "shpss_"]) + rand(r, HEX, 32),
        ["X-Shopify-Access-Token: {s}", "SHOPIFY_TOKEN={s}"],
    ),
    "square_token": (
        lambda r: "EAAA" + rand(r, URLSAFE, 60),
        ["SQUARE_ACCESS_TOKEN={s}", "square token {s}"],
    ),
    "sentry_dsn": (
        lambda r: rand(r, HEX, 32),
        [
            "SENTRY_DSN=https://{s}@o4504.ingest.sentry.io/4504",
            "dsn: https://{s}@sentry.example.com/7",
        ],
    ),
    "datadog_api_key": (
        lambda r: rand(r, HEX, 32),
        ["DD_API_KEY={s}", "datadog api_key: {s}", "-H 'DD-API-KEY: {s}'"],
    ),
    "newrelic_key": (
        lambda r: "NRAK-" + rand(r, UPPER_DIGITS, 27),
        ["NEW_RELIC_API_KEY={s}", "nr key {s}"],
    ),
    "linear_key": (lambda r: "lin_api_" + rand(r, B62, 40), ["LINEAR_API_KEY={s}", "linear {s}"]),
    "notion_token": (
        lambda r: "ntn_" + rand(r, B62, 46),
        ["NOTION_TOKEN={s}", "notion integration {s}"],
    ),
    "postman_key": (
        lambda r: f"PMAK-{rand(r, HEX, 24)}-{rand(r, HEX, 34)}",
        ["POSTMAN_API_KEY={s}", "X-Api-Key: {s}"],
    ),
    "atlassian_token": (
        lambda r: "ATATT3xFfGF0" + rand(r, URLSAFE, 180) + "=" + rand(r, HEX.upper(), 8),
        ["JIRA_API_TOKEN={s}", "jira token {s}"],
    ),
    "databricks_token": (
        lambda r: "dapi" + rand(r, HEX, 32),
        ["DATABRICKS_TOKEN={s}", "databricks configure --token {s}"],
    ),
    "grafana_token": (
        lambda r: "glsa_" + rand(r, B62, 32) + "_" + rand(r, HEX, 8),
        ["GRAFANA_TOKEN={s}", "grafana sa token {s}"],
    ),
    "okta_token": (
        lambda r: "00" + rand(r, URLSAFE, 40),
        ["Authorization: SSWS {s}", "OKTA_API_TOKEN={s}"],
    ),
    "reverie_api_key": (
        lambda r: f"rvk_{rand(r, HEX, 16)}_{rand(r, URLSAFE, 43)}",
        [
            "REVERIE_API_KEY={s}",
            "curl -H 'Authorization: Bearer {s}' localhost:8700/recall",
            "minted {s} for acme",
        ],
    ),
    "database_url": (
        _password,
        [
            "postgres://app:{s}@db.internal:5432/app",
            "mysql://root:{s}@127.0.0.1:3306/shop",
            "mongodb+srv://svc:{s}@cluster0.ab12c.mongodb.net/?retryWrites=true",
            "redis://:{s}@cache:6379/0",
            "amqp://guest:{s}@rabbit:5672//",
            "DATABASE_URL=postgresql://deploy:{s}@10.0.3.4/prod",
        ],
    ),
    "url_credentials": (
        _password,
        ["https://admin:{s}@jenkins.example.com/job/x", "ftp://backup:{s}@files.local/"],
    ),
    "connection_string": (
        _password,
        [
            "Server=tcp:sql1,1433;Database=app;User ID=sa;Password={s};Encrypt=true",
            "Host=db;Username=app;Pwd={s};",
            "jdbc:postgresql://db/app?user=app&password={s}",
        ],
    ),
    "mysql_password_flag": (
        _password,
        [
            "mysql -u root --password {s}",
            "mysql -u root --password={s} shop",
            "mysql -uroot -p{s} -h db",
            "mysql -u root -p {s}",
            "mysqldump -u backup -p{s} shop > shop.sql",
        ],
    ),
    "curl_basic_auth": (
        _password,
        [
            "curl -u admin:{s} https://api.example.com/v1",
            "curl --user deploy:{s} -X POST http://ci/build",
            "wget --password={s} https://files.example.com/a.tgz",
        ],
    ),
    "cli_password_flag": (
        _password,
        [
            "sshpass -p {s} ssh root@10.0.0.5",
            "redis-cli -h cache -a {s} ping",
            "keytool -importkeystore -srcstorepass {s} -deststorepass {s}",
            "docker login registry.example.com -u ci -p {s}",
            "ldapsearch -x -D cn=admin -w {s}",
            "psql --set=ON_ERROR_STOP=1 PGPASSWORD={s}",
            "vault login -method=userpass password={s}",
        ],
    ),
    "jwt": (
        _jwt,
        ["Authorization: Bearer {s}", "id_token={s}", "cookie session={s}", "decoded {s} fine"],
    ),
    "bearer_header": (
        lambda r: rand(r, URLSAFE + ".~", r.randrange(24, 60)),
        [
            "Authorization: Bearer {s}",
            '-H "Authorization: Token {s}"',
            "headers = {'Authorization': 'Bearer {s}'}",
        ],
    ),
    "basic_auth_header": (
        lambda r: rand(r, B64, 28) + "==",
        ["Authorization: Basic {s}", "proxy-authorization: Basic {s}"],
    ),
    "api_key_header": (
        lambda r: rand(r, B62, 32),
        ["X-API-Key: {s}", "-H 'x-api-key: {s}'", "Ocp-Apim-Subscription-Key: {s}"],
    ),
    "pem_private_key": (
        lambda r: _pem(
            r,
            rng_pick(
                r,
                [
                    "RSA PRIVATE KEY",
                    "EC PRIVATE KEY",
                    "PRIVATE KEY",
                    "ENCRYPTED PRIVATE KEY",
                    "DSA PRIVATE KEY",
                ],
            ),
        ),
        ["key file:\n{s}\ndone", "{s}", "tls.key: |\n{s}"],
    ),
    "openssh_private_key": (
        lambda r: _pem(r, "OPENSSH PRIVATE KEY", 8),
        ["~/.ssh/id_ed25519:\n{s}", "{s}\n"],
    ),
    "pgp_private_key": (lambda r: _pem(r, "PGP PRIVATE KEY BLOCK", 10), ["{s}"]),
    "putty_private_key": (
        lambda r: (
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 2\n"
            + rand(r, B64, 64)
            + "\nPrivate-Lines: 1\n"
            + rand(r, B64, 44)
            + "\nPrivate-MAC: "
            + rand(r, HEX, 64)
        ),
        ["deploy.ppk:\n{s}"],
    ),
    "age_secret_key": (
        lambda r: "AGE-SECRET-KEY-1" + rand(r, UPPER_DIGITS, 58),
        ["# created: 2026-01-01\n{s}", "SOPS_AGE_KEY={s}"],
    ),
    "password_prose": (
        _password,
        [
            "the password is {s}",
            "The password for root is {s}.",
            "db password was {s} until Friday",
            "use password {s} for the staging admin",
            "passphrase: {s}",
            "the wifi passcode is {s}",
        ],
    ),
    "password_assignment": (
        _password,
        [
            "password={s}",
            "PASSWORD: {s}",
            "db_password = '{s}'",
            '{"password": "{s}"}',
            "DB_PASS={s}",
            '  password: "{s}"',
            "<password>{s}</password>",
            "'password' => '{s}',",
            "spring.datasource.password={s}",
            "[client]\npassword = {s}",
        ],
    ),
    "high_entropy_assignment": (
        lambda r: rand(r, B64, r.choice([32, 44, 50, 64])),
        [
            "SECRET_KEY_BASE={s}",
            "DJANGO_SECRET_KEY='{s}'",
            "signing_salt: {s}",
            "ENCRYPTION_KEY={s}",
            'const key = "{s}";',
            "JWT_SECRET={s}",
            "app.secret_key = '{s}'",
            "HMAC_KEY={s}",
        ],
    ),
    "k8s_secret_data": (
        lambda r: rand(r, B64, 24) + "==",
        [
            "apiVersion: v1\nkind: Secret\ndata:\n  password: {s}\n  username: YWRtaW4=",
            "data:\n  api-token: {s}",
        ],
    ),
    "sql_password": (
        _password,
        [
            "CREATE USER app IDENTIFIED BY '{s}';",
            "ALTER ROLE deploy WITH PASSWORD '{s}';",
            "GRANT ALL ON db.* TO 'u'@'%' IDENTIFIED BY '{s}'",
        ],
    ),
    "session_cookie": (
        lambda r: rand(r, B62, 40),
        ["Cookie: sessionid={s}; csrftoken=abc", "Set-Cookie: session={s}; HttpOnly"],
    ),
    "twitter_bearer": (
        lambda r: "A" * 22 + rand(r, B62 + "%", 90),
        ["TWITTER_BEARER_TOKEN={s}", "bearer {s}"],
    ),
    "facebook_token": (
        lambda r: "EAA" + rand(r, B62, 160),
        ["FB_ACCESS_TOKEN={s}", "graph token {s}"],
    ),
    "mapbox_token": (
        lambda r: "sk.eyJ1Ijoi" + rand(r, URLSAFE, 40) + "." + rand(r, URLSAFE, 22),
        ["MAPBOX_SECRET={s}", "mapbox {s}"],
    ),
    "generic_token_flag": (
        lambda r: rand(r, B62, r.randrange(24, 48)),
        [
            "--token {s}",
            "--api-key={s}",
            "deploy --auth-token {s} --region eu",
            "cli --client-secret '{s}'",
        ],
    ),
}


def rng_pick(rng: random.Random, options: list[str]) -> str:
    return rng.choice(options)


_WRAPPERS = [
    "{x}",
    "deploy failed; {x}",
    "lesson: never paste {x} into the chat",
    "$ {x}\n",
    "```\n{x}\n```",
    "2026-03-04T10:12:01Z INFO config loaded: {x} (commit 3f2a9c1d4e5b6a7f8e9d0c1b2a3f4e5d6c7)",
    "  {x}  # fixed in v2.14.0",
]


def positives(seed: int = 0, per_format: int = 5) -> list[Sample]:
    """``per_format`` samples of every format, each a context of that format, wrapped in text."""
    rng = random.Random(seed)
    out: list[Sample] = []
    for fmt, (gen, contexts) in FORMATS.items():
        for i in range(per_format):
            context = contexts[i % len(contexts)]
            wrapper = rng.choice(_WRAPPERS)
            template = wrapper.replace("{x}", context) if "\n" not in context else context
            out.append(fill(template, gen(rng), fmt))
    return out
