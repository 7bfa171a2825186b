"""Credentials found by their structure, with values drawn at random: a password named in another
language, base64 that wraps a credential, a session cookie, an answer to a password prompt, an
OTP seed, config and command syntaxes; and the public values, fingerprints, identifiers and code
that look like them and must stay."""

from __future__ import annotations

import base64
import random
import string

import pytest

from reverie.bench.secrets_corpus import B62, HEX, rand
from reverie.redaction import Redactor

RNG = random.Random(20261203)


def password() -> str:
    word = "".join(RNG.choice("bcdfgklmnprstvz") + RNG.choice("aeiou") for _ in range(3))
    return word.capitalize() + str(RNG.randrange(10, 9999)) + RNG.choice("!#%*+@")


def pem(label: str = "PRIVATE KEY") -> str:
    body = "\n".join(rand(RNG, B62 + "+/", 64) for _ in range(4))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def base32(n: int) -> str:
    return rand(RNG, string.ascii_uppercase + "234567", n)


def uuid() -> str:
    return "-".join(rand(RNG, HEX, n) for n in (8, 4, 4, 4, 12))


def case(template: str, secret: str) -> tuple[str, str]:
    return template.replace("{s}", secret), secret


SECRETS = [
    # a password named in another language, linked by a sign or the language's copula
    case("Das Passwort lautet {s} – bitte ändern.", password()),
    case("Kennwort für den Server: {s}", password()),
    case("Le mot de passe est {s}, à changer.", password()),
    case("La contraseña de la base es {s}", password()),
    case("A senha do banco é {s}", password()),
    case("Het wachtwoord is {s}", password()),
    case("Пароль от сервера: {s}", password()),
    case("логин admin, пароль {s}", password()),
    case("数据库密码是 {s}，请妥善保管。", password()),
    case("初期パスワード：{s}", password()),
    case("비밀번호는 {s} 입니다", password()),
    case("Lösenordet är {s}", password()),
    case("Salasana on {s}", password()),
    case("Mật khẩu là {s}", password()),
    case("كلمة المرور هي {s}", password()),
    case("पासवर्ड है {s}", password()),
    case('{"content": "contrase\\u00f1a {s}"}', password()),
    # base64 that wraps a credential: user:password, a private key
    case('{"auths": {"ghcr.io": {"auth": "{s}"}}}', b64(f"ci:{password()}")),
    case("//npm.example.com/:_auth={s}", b64(f"deploy:{password()}")),
    case("    client-key-data: {s}", b64(pem("RSA PRIVATE KEY"))),
    case("KEY_B64={s}", b64(pem("EC PRIVATE KEY"))),
    # session cookies
    case(
        "Cookie: csrftoken=abc; sessionid={s}", rand(RNG, string.ascii_lowercase + "0123456789", 32)
    ),
    case("curl -b 'PHPSESSID={s}' https://shop.example.com", rand(RNG, string.ascii_lowercase, 26)),
    case("Cookie: JSESSIONID={s}; Path=/app", rand(RNG, HEX.upper(), 32)),
    case("Set-Cookie: session={s}; HttpOnly", rand(RNG, B62, 40)),
    # the answer to a password prompt
    case('spawn ssh a@h\nexpect "password:"\nsend "{s}\\r"', password()),
    case('expect {\n  "*assword*" { send "{s}\\r"; exp_continue }\n}', password()),
    case("child.expect('Password:')\nchild.sendline('{s}')", password()),
    # OTP seeds and keys handed to a function that takes one
    case("oathtool --totp -b {s}", base32(32)),
    case("pyotp.TOTP('{s}').now()", base32(16)),
    case("Enter this key manually: {s}", " ".join(base32(4) for _ in range(4)) + " 2345"),
    case("mac = hmac.new(b'{s}', body, hashlib.sha256)", rand(RNG, HEX, 64)),
    case("openssl enc -aes-256-cbc -K {s} -in a -out b", rand(RNG, HEX, 64)),
    # config syntaxes
    case("define( 'DB_PASSWORD', '{s}' );", password()),
    case("requirepass {s}\nmaxmemory 2gb", password()),
    case('network={\n    psk="{s}"\n}', password()),
    case("db.example.com:5432:*:alice:{s}", password()),
    case("ConvertTo-SecureString -AsPlainText '{s}' -Force", password()),
    case("MAIL_PASSWORD=+{s}", password()),
    case("ALTER USER 'u'@'%' IDENTIFIED WITH mysql_native_password BY '{s}';", password()),
    case("INSERT INTO users (email, password) VALUES ('a@b.io', '{s}');", password()),
    case('variable "api_key" {\n  default = "{s}"\n}', uuid()),
    case(
        '<add key="AZURE_DEVOPS_EXT_PAT" value="{s}" />',
        rand(RNG, "abcdefghijklmnopqrstuvwxyz234567", 52),
    ),
    case("jdbc:oracle:thin:scott/{s}@//ora.example.com:1521/ORCL", password()),
    # command flags and vendor keys
    case("zip -r -P {s} backup.zip ./exports", password()),
    case("7z a -p{s} -mhe=on out.7z ./keys", password()),
    case("mc alias set minio http://minio:9000 root {s}", password()),
    case("cargo login {s}", rand(RNG, B62, 32)),
    case("tailscale up --authkey={s}", f"tskey-auth-{rand(RNG, B62, 12)}-{rand(RNG, B62, 30)}"),
    case("LAUNCHDARKLY_SDK_KEY={s}", f"sdk-{uuid()}"),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_a_credential_found_by_its_structure_is_redacted(text: str, secret: str) -> None:
    assert secret not in Redactor().text(text)


KEPT = [
    "Das Passwort ist erforderlich",
    "Пароль должен содержать не менее 8 символов.",
    "忘记密码？",
    "パスワードを忘れた場合",
    "¿Olvidaste tu contraseña?",
    "पासवर्ड आवश्यक है",
    # public values, fingerprints
    f"[Peer]\nPublicKey = {rand(RNG, B62, 43)}=",
    f'"publicKey": "{rand(RNG, B62, 86)}="',
    f'{{"keys": [{{"kty": "RSA", "n": "{rand(RNG, B62, 300)}", "e": "AQAB"}}]}}',
    f"public_key_id: {rand(RNG, HEX, 16)}",
    f"NEXT_PUBLIC_STRIPE_KEY=pk_live_{rand(RNG, B62, 99)}",
    f"The ECDSA key fingerprint is SHA256:{rand(RNG, B62, 43)}.",
    "Host key fingerprint is MD5:" + ":".join(rand(RNG, HEX, 2) for _ in range(16)),
    f"gpg: using RSA key {rand(RNG, HEX.upper(), 40)}",
    # code, not values
    'password = os.environ["DB_PASSWORD"]',
    'SECRET_KEY = env("DJANGO_SECRET_KEY")',
    'token = getpass.getpass("GitHub token: ")',
    "password = %(db_password)s",
    "-p, --password TEXT   Password for the database",
    "STRIPE_SECRET_KEY=sk_live_...",
    "gcloud secrets versions access latest --secret=api-key",
    'expect "password:"\nsend "$env(DB_PASSWORD)\\r"',
    # identifiers and inlined files
    f'"id": "chatcmpl-{rand(RNG, B62, 29)}"',
    f"x-amz-id-2: {rand(RNG, B62, 76)}",
    f"Cache restored from key: Linux-pip-{rand(RNG, HEX, 64)}",
    f"kafka partition=3 key={uuid()}",
    f"ipfs://Qm{rand(RNG, B62, 44)}",
    '{"nextPageToken": "' + b64("page:81") + '"}',
    "src: url(data:font/woff2;base64," + b64("wOF2" + rand(RNG, B62, 90)) + ")",
    f"ENC[AES256_GCM,data:{rand(RNG, B62, 16)},iv:{rand(RNG, B62, 43)}=,type:str]",
    f"client-certificate-data: {b64(pem('CERTIFICATE'))}",
    "Cookie: theme=dark; lang=en-US",
]


@pytest.mark.parametrize("text", KEPT)
def test_what_only_looks_like_a_credential_is_kept(text: str) -> None:
    assert Redactor().text(text) == text
