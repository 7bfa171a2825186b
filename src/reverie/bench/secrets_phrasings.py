"""Prose and shell phrasings of credentials, generated from random parts (and their look-alikes).

:mod:`reverie.bench.secrets_corpus` pastes vendor formats into fixed contexts. People also write
credentials in their own words and commands: "the password is …", "login alice / …", a password
echoed into ``sudo -S``, ``PGPASSWORD=… psql``, ``net user alice … /add``. A redactor that only
knows a list of such sentences misses the next one, so here every sample is *assembled*: a kind
of phrasing (an assignment in words, credentials after a user name, a password piped to a
command, a database client, a remote login, a Windows command) is a grammar whose slots are
filled at random — the owner, the credential's name, the verb that links it to its value, the
user, host, database and variable names (syllables drawn at random, so no name repeats a list)
and the value itself (a made-up password, a random string, a passphrase with separators).

The look-alikes come from the same parts with no credential in them: the same sentences about
a password that is *required* or *rotated*, the same commands reading the secret from a file,
a variable or a prompt, and commit hashes, UUIDs and version strings beside credential words.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

from reverie.bench.secrets_corpus import B62, HEX, Sample, fill, rand

__all__ = ["phrasing_lookalikes", "phrasings"]

_CONSONANTS = "bcdfghklmnprstvz"
_VOWELS = "aeiou"


def _syllables(rng: random.Random, low: int = 2, high: int = 4) -> str:
    return "".join(
        rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(rng.randint(low, high))
    )


def _user(rng: random.Random) -> str:
    name = _syllables(rng, 2, 3)
    return rng.choice([name, f"{name}.{_syllables(rng, 2, 3)}", f"{name}{rng.randrange(99)}"])


def _host(rng: random.Random) -> str:
    base = _syllables(rng, 2, 3)
    address = f"10.{rng.randrange(255)}.0.{rng.randrange(255)}"
    forms = [f"{base}-db", f"{base}.internal", address, f"{base}{rng.randrange(9)}"]
    return rng.choice([*forms, f"{base}.example.com"])


def _env_name(rng: random.Random) -> str:
    cred = rng.choice(["PASSWORD", "PASS", "PWD", "TOKEN", "API_KEY", "SECRET", "AUTH_TOKEN"])
    return f"{_syllables(rng, 2, 3).upper()}_{cred}"


def _value(rng: random.Random, *, url_safe: bool = False, shell: bool = False) -> str:
    """A password a person made up, or a random one; never a word list's entry."""
    symbols = "-_." if url_safe else ("!#%*+-_.@" if shell else "!#$%*+-_.@&")
    last = symbols.replace(".", "")  # a sentence's full stop, not the password's
    word = _syllables(rng, 2, 3)
    leet = word.translate(str.maketrans("aeios", "43105"))
    forms = [
        word.capitalize() + str(rng.randrange(10, 9999)) + rng.choice(last),
        leet + rng.choice(symbols) + str(rng.randrange(100)),
        rand(rng, B62, 1)
        + rand(rng, B62 + symbols, rng.randrange(6, 18))
        + rand(rng, B62 + last, 1),
        rand(rng, string.ascii_lowercase, 3) + rand(rng, string.digits, 3) + rand(rng, B62, 5),
        "-".join(_syllables(rng, 2, 3) for _ in range(3)) + str(rng.randrange(10, 99)),
    ]
    return rng.choice(forms)


def _quoted(rng: random.Random, template: str) -> str:
    """``{s}`` bare, or in single or double quotes (what a shell or a sentence might do)."""
    return template.replace("{s}", rng.choice(["{s}", "{s}", "'{s}'", '"{s}"']))


_NOUNS = [
    "password",
    "passwd",
    "pw",
    "pwd",
    "pass",
    "passphrase",
    "passcode",
    "api key",
    "API key",
    "access token",
    "auth token",
    "token",
    "secret",
    "secret key",
    "admin password",
    "root password",
    "db password",
    "login password",
    "PIN code",
]
_OWNERS = ["the ", "my ", "our ", "your ", "the new ", "the old ", "{user}'s ", "", "The "]
_QUALIFIERS = ["", "", " for {host}", " on {host}", " of the {user} account", " to {host}"]
_LINKS = [
    " is ",
    " was ",
    " is now ",
    " has been changed to ",
    " got reset to ",
    " = ",
    ": ",
    " -> ",
    " is set to ",
    " should be ",
    " will be ",
    " became ",
    " is still ",
    " - ",
    " (new): ",
    " now reads ",
]
_OPENERS = ["", "", "fyi ", "note: ", "btw ", "heads up, ", "remember ", "ok so "]
_TAILS = ["", ".", " until friday", " (do not share)", ", change it asap", " btw", " - thanks"]


def _prose(rng: random.Random) -> str:
    noun = rng.choice(_NOUNS)
    template = (rng.choice(_OPENERS) + rng.choice(_OWNERS) + noun + rng.choice(_QUALIFIERS)
                + rng.choice(_LINKS) + "{s}" + rng.choice(_TAILS))  # fmt: skip
    return template if noun == "PIN code" else _quoted(rng, template)


_LOGIN_CUES = [
    "login",
    "log in with",
    "creds are",
    "credentials:",
    "account",
    "use",
    "sign in as",
    "user/pass:",
    "username/password",
    "creds for {host}:",
]
_JOINERS = [
    " / ",
    "/",
    ":",
    " : ",
    " pw ",
    " password ",
    ", password ",
    " with password ",
    " pass ",
]


def _after_user(rng: random.Random) -> str:
    if rng.random() < 0.3:
        first, second = rng.choice([("user", "pass"), ("username", "password"), ("login", "pw"),
                                    ("User", "Password"), ("u", "pwd")])  # fmt: skip
        sep = rng.choice([": ", " ", "="])
        return f"{first}{sep}{{user}} {second}{sep}{{s}}" + rng.choice(_TAILS)
    return f"{rng.choice(_LOGIN_CUES)} {{user}}{rng.choice(_JOINERS)}{{s}}" + rng.choice(_TAILS)


_SUDO_COMMANDS = [
    "apt-get install -y nginx",
    "systemctl restart {user}",
    "-u {user} whoami",
    "cp app.conf /etc/",
    "reboot",
]
_READERS = [
    "sudo -S {cmd}",
    "sudo --stdin {cmd}",
    "passwd --stdin {user}",
    "docker login -u {user} --password-stdin {host}",
    "kinit {user}@CORP.{upper}",
    "cryptsetup luksOpen /dev/sdb1 data -",
    "openconnect --user={user} --passwd-on-stdin {host}",
    "podman login --username {user} --password-stdin {host}",
    "gpg --batch --passphrase-fd 0 -d backup.gpg",
]


def _piped(rng: random.Random) -> str:
    reader = rng.choice(_READERS).replace("{cmd}", rng.choice(_SUDO_COMMANDS))
    value = rng.choice(["{s}", "'{s}'", '"{s}"'])
    if rng.random() < 0.25:
        return f"{reader} <<< {value}"
    producer = rng.choice(["echo", "echo -n", "echo -e", "printf '%s\\n'", "printf"])
    return f"{producer} {value} | {reader}"


_DB_CLIENTS = [
    "mysql -u{user} -p{s}",
    "mysql -h {host} -u {user} -p{s} {db}",
    "mysql --user={user} --password={s} {db}",
    "mysqldump -u {user} -p{s} {db} > {db}.sql",
    "PGPASSWORD={s} psql -h {host} -U {user} {db}",
    "MYSQL_PWD={s} mysql -u {user} {db}",
    "PGPASSWORD='{s}' pg_dump -h {host} -U {user} {db}",
    "sqlcmd -S {host} -U {user} -P {s} -d {db}",
    "redis-cli -h {host} -a {s} ping",
    "cqlsh {host} -u {user} -p {s}",
    "clickhouse-client --host {host} --user {user} --password {s}",
    "influx -username {user} -password {s}",
    "mongo --username {user} --password {s} {db}",
    "mongosh --host {host} -u {user} -p {s} --authenticationDatabase admin",
    "isql -U {user} -P {s} -S {host}",
    "sqlplus {user}/{s}@{host}/{db}",
]
_DB_URLS = [
    'mongosh "mongodb://{user}:{s}@{host}:27017/{db}"',
    'psql "postgresql://{user}:{s}@{host}/{db}"',
    "DATABASE_URL=postgres://{user}:{s}@{host}:5432/{db}",
    "redis-cli -u redis://{user}:{s}@{host}:6379",
    "mysql://{user}:{s}@{host}/{db}",
    "amqp://{user}:{s}@{host}:5672/",
    "jdbc:sqlserver://{host};user={user};password={s};databaseName={db}",
    "psql 'host={host} user={user} password={s} dbname={db}'",
]
_REMOTE = [
    "sshpass -p {s} ssh {user}@{host}",
    "sshpass -p'{s}' scp db.tar {user}@{host}:",
    "plink -ssh {user}@{host} -pw {s}",
    "pscp -pw {s} file {user}@{host}:/tmp",
    "xfreerdp /u:{user} /p:{s} /v:{host}",
    "rdesktop -u {user} -p {s} {host}",
    "smbclient //{host}/share -U {user}%{s}",
    "mount -t cifs //{host}/share /mnt -o username={user},password={s}",
    "psexec \\\\{host} -u {user} -p {s} cmd",
    "wmic /node:{host} /user:{user} /password:{s} os get caption",
    "lftp -u {user},{s} {host}",
    "curl -u {user}:{s} https://{host}/api",
]
_WINDOWS = [
    "net user {user} {s} /add",
    "net user {user} {s}",
    "net user /add {user} {s}",
    "net use Z: \\\\{host}\\share {s} /user:CORP\\{user}",
    "net use \\\\{host}\\ipc$ /user:{user} {s}",
    '$env:{env} = "{s}"',
    "$env:{env}='{s}'",
    "set {env}={s}",
    'set "{env}={s}"',
    "setx {env} {s}",
    'setx {env} "{s}" /M',
    'ConvertTo-SecureString "{s}" -AsPlainText -Force',
    "cmdkey /add:{host} /user:{user} /pass:{s}",
    "schtasks /create /tn backup /tr backup.bat /ru {user} /rp {s}",
    "echo {s}| runas /user:{user} cmd",
]
_LANGUAGES = [
    # (names, links, qualifiers with {host}, states of a password that hold no value)
    (["Das Passwort", "Kennwort", "Passwort"], [" lautet ", " ist ", ": "], [" für {host}"],
     ["ist erforderlich", "ist abgelaufen", "wurde geändert"]),
    (["Le mot de passe", "mot de passe"], [" est ", " : ", ": "], [" de {host}", " pour {host}"],
     ["est obligatoire", "a expiré", "oublié ?"]),
    (["La contraseña", "contraseña", "clave"], [" es ", ": "], [" de {host}"],
     ["es obligatoria", "ha caducado", "incorrecta"]),
    (["A senha", "senha"], [" é ", ": "], [" do {host}"], ["é obrigatória", "expirou"]),
    (["La password"], [" è "], [" di {host}"], ["è scaduta", "è obbligatoria"]),
    (["Het wachtwoord", "wachtwoord"], [" is ", ": "], [" voor {host}"], ["is verlopen"]),
    (["Hasło", "hasło"], [" to ", ": "], [" do {host}"], ["jest wymagane", "wygasło"]),
    (["Şifre", "şifre"], [": "], [], ["yanlış", "gerekli"]),
    (["Пароль", "пароль"], [": ", " — ", " "], [" от {host}", " для {host}"],
     ["должен содержать не менее 8 символов", "истёк", "неверный"]),
    (["Heslo", "heslo"], [" je ", ": "], [" k {host}"], ["je povinné", "vypršelo"]),
    (["Lösenordet", "lösenord"], [" är ", ": "], [" till {host}"], ["är fel", "har gått ut"]),
    (["Salasana", "salasana"], [" on ", ": "], [], ["on vanhentunut", "vaaditaan"]),
    (["Mật khẩu", "mật khẩu"], [" là ", ": "], [" của {host}"], ["không đúng", "đã hết hạn"]),
    (["Kata sandi", "kata sandinya"], [" adalah ", ": ", " "], [" untuk {host}"],
     ["salah", "wajib diisi"]),
    (["Ο κωδικός"], [" είναι ", ": "], [], ["έληξε", "είναι λάθος"]),
    (["كلمة المرور"], [" هي ", ": "], [], ["غير صحيحة", "مطلوبة"]),
    (["पासवर्ड"], [" है ", ": "], [], ["गलत है", "आवश्यक है"]),
    (["密码", "数据库密码", "密碼"], ["是 ", "：", ": "], [], ["错误", "已过期", "忘记了？"]),
    (["パスワード", "初期パスワード"], ["は ", "：", ": "], [], ["が違います", "を忘れた場合"]),
    (["비밀번호", "새 비밀번호"], ["는 ", ": ", " "], [], ["가 틀렸습니다", "를 잊으셨나요?"]),
]  # fmt: skip
"""Per language: the name of a password (with an article where the language has one), links to
its value, what it may be of or for, and states that hold no value."""


def _other_language(rng: random.Random) -> str:
    names, links, qualifiers, _ = rng.choice(_LANGUAGES)
    qualifier = rng.choice(["", *qualifiers]) if qualifiers else ""
    link = rng.choice(links)
    if qualifier and not link.strip():
        link = ": "  # a qualifier is followed by a link, never by the value alone
    tail = rng.choice(["", ".", "。", " !", " (prod)"])
    return rng.choice(names) + qualifier + link + rng.choice(["{s}", "{s}", '"{s}"']) + tail


_KINDS: dict[str, Callable[[random.Random], str]] = {
    "prose_assignment": _prose,
    "user_credentials": _after_user,
    "piped_password": _piped,
    "database_cli": lambda rng: rng.choice(_DB_CLIENTS),
    "database_url": lambda rng: rng.choice(_DB_URLS),
    "remote_login": lambda rng: rng.choice(_REMOTE),
    "windows_command": lambda rng: rng.choice(_WINDOWS),
    "prose_other_language": _other_language,
}
_URL_KINDS = frozenset({"database_url"})
_SHELL_KINDS = frozenset({"piped_password", "database_cli", "remote_login", "windows_command"})


def _slots(rng: random.Random, template: str) -> str:
    """Every slot but the secret's filled with a fresh random name."""
    for slot, make in (("{user}", _user), ("{host}", _host), ("{env}", _env_name),
                       ("{db}", lambda r: _syllables(r, 2, 3)),
                       ("{upper}", lambda r: _syllables(r, 2, 2).upper())):  # fmt: skip
        while slot in template:
            template = template.replace(slot, make(rng), 1)
    return template


def phrasings(seed: int = 0, per_kind: int = 40) -> list[Sample]:
    """``per_kind`` assembled samples of every kind of phrasing, each with its secret's span."""
    rng = random.Random(seed + 7)
    out = []
    for kind, make in _KINDS.items():
        for _ in range(per_kind):
            template = _slots(rng, make(rng))
            if kind == "prose_assignment" and "PIN code" in template:
                secret = str(rng.randrange(1000, 999999))
            else:
                secret = _value(rng, url_safe=kind in _URL_KINDS, shell=kind in _SHELL_KINDS)
            out.append(fill(template, secret, kind))
    return out


_STATES = [
    "required",
    "rotated every {n} days",
    "at least {n} characters long",
    "in the vault",
    "not set",
    "expired",
    "too short",
    "wrong",
    "the same as before",
    "managed by terraform",
    "stored in 1Password",
    "reset by the helpdesk",
    "invalid",
    "missing from the env file",
    "optional for {user}",
    "changed",
    "hashed with bcrypt",
    "never logged",
    "generated at deploy",
    "case sensitive",
    "no longer valid",
    "being rotated",
    "only for {host}",
]
_SAFE_COMMANDS = [
    "echo $DB_PASSWORD | sudo -S {cmd}",
    "sudo -S {cmd} < /run/secrets/sudo_pw",
    "PGPASSWORD=$(cat ~/.pgpass) psql -h {host} -U {user}",
    "sshpass -f ~/.ssh/pw ssh {user}@{host}",
    "sshpass -e ssh {user}@{host}",
    "net user {user} /delete",
    "net user {user} /active:no",
    "net use Z: \\\\{host}\\share /persistent:yes",
    "runas /user:CORP\\{user} cmd",
    "$env:PATH += ';C:\\tools\\{db}'",
    "set PATH=C:\\{db}\\bin;%PATH%",
    "setx JAVA_HOME C:\\jdk-{n}",
    "login {user}",
    "login as {user} failed",
    "user {user} logged in from {host}",
    "docker login -u {user} --password-stdin < ~/.docker/pw",
    "psql postgresql://{user}@{host}:5432/{db}",
    "mongosh mongodb://{host}:27017/{db}",
    "mysql -u {user} -p",
    "psql -h {host} -U {user} -W {db}",
    'echo "$TOKEN" | docker login -u {user} --password-stdin {host}',
    "$env:{env} = Get-Content C:\\secrets\\{db}.txt",
    "set {env}=%VAULT_{env}%",
    "kinit {user}@CORP.EXAMPLE.COM",
    "ssh {user}@{host} -p 2222",
]
_NEAR_IDS = [
    "{noun} rotated in commit {sha}",
    "{noun} reset for request {uuid}",
    "{noun} manager upgraded to v{n}.{m}.{k}",
    "{noun} policy v{n}.{m} applies from build {sha7}",
    "the {noun} policy requires {n} characters",
    "{noun} rotation is every {n} days",
    "{noun}_min_length = {n}",
    "{noun} reset link sent to {user}",
]


def _other_language_state(rng: random.Random) -> str:
    names, _, qualifiers, states = rng.choice(_LANGUAGES)
    name = rng.choice(names) + (rng.choice(["", *qualifiers]) if qualifiers else "")
    glued = ord(name[-1]) >= 0x2E80  # CJK, kana, Hangul: no space between words
    return name + ("" if glued else " ") + rng.choice(states)


def _lookalike(rng: random.Random, i: int) -> str:
    family = i % 3
    if family == 0:
        noun = rng.choice(_NOUNS)
        state = rng.choice(_STATES)
        link = rng.choice([" is ", " was ", " is now ", " should be ", " will be "])
        return rng.choice(_OWNERS) + noun + rng.choice(_QUALIFIERS) + link + state
    if family == 1:
        return rng.choice(_SAFE_COMMANDS).replace("{cmd}", rng.choice(_SUDO_COMMANDS))
    noun = rng.choice(["password", "token", "api key", "secret", "credential"])
    return rng.choice(_NEAR_IDS).replace("{noun}", noun)


_ID_SLOTS: dict[str, Callable[[random.Random], str]] = {
    "{n}": lambda r: str(r.randrange(2, 40)),
    "{m}": lambda r: str(r.randrange(20)),
    "{k}": lambda r: str(r.randrange(20)),
    "{sha7}": lambda r: rand(r, HEX, 7),
    "{sha}": lambda r: rand(r, HEX, 40),
    "{uuid}": lambda r: "-".join(rand(r, HEX, n) for n in (8, 4, 4, 4, 12)),
}
"""Numbers, commit hashes and UUIDs beside credential words."""


def phrasing_lookalikes(seed: int = 0, total: int = 150) -> list[Sample]:
    """``total`` texts from the same parts that hold no credential."""
    rng = random.Random(seed + 11)
    out = []
    for i in range(total):
        text = _slots(rng, _lookalike(rng, i))
        for slot, make in _ID_SLOTS.items():
            while slot in text:
                text = text.replace(slot, make(rng), 1)
        out.append(Sample(text, "phrasing_lookalike", ()))
    other = random.Random(seed + 13)
    for _ in range(total // 3):
        text = _slots(other, _other_language_state(other))
        out.append(Sample(text, "other_language_lookalike", ()))
    return out
