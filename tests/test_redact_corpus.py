"""The generated secret corpus: recall and precision of redaction against their targets."""

from __future__ import annotations

import pytest

from reverie.bench.redact import (
    PRECISION_TARGET,
    RECALL_TARGET,
    corpus,
    render_redact,
    run_redact,
    score,
)
from reverie.bench.secrets_corpus import fill
from reverie.bench.secrets_phrasings import phrasing_lookalikes, phrasings
from reverie.redaction import Redactor


def spans(text: str) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in Redactor().spans(text)]


def test_the_corpus_is_broad_and_labelled() -> None:
    secrets, looks = corpus(0)
    assert sum(len(s.spans) for s in secrets) >= 300 and len(looks) >= 200
    assert len({s.format for s in secrets}) >= 50
    for sample in secrets:
        assert sample.spans and all(0 <= a < b <= len(sample.text) for a, b in sample.spans)
    assert corpus(0) == corpus(0) and corpus(0) != corpus(1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recall_and_precision_meet_their_targets(seed: int) -> None:
    secrets, looks = corpus(seed)
    figure = score(spans, [*secrets, *looks])
    assert figure.recall >= RECALL_TARGET, figure.misses
    assert figure.precision >= PRECISION_TARGET, figure.false_positives
    assert figure.lookalikes_kept >= PRECISION_TARGET, figure.false_positives


def test_a_secret_counts_only_when_every_character_is_gone() -> None:
    sample = fill("key {s} end", "abcdefgh", "x")
    assert score(lambda _t: [(4, 12)], [sample]).recall == 1.0
    assert score(lambda _t: [(4, 10)], [sample]).recall == 0.0
    assert score(lambda _t: [(4, 8), (8, 12)], [sample]).recall == 1.0
    assert score(lambda _t: [(0, 3), (4, 12)], [sample]).precision == 0.5


def test_the_bench_reports_every_figure() -> None:
    result = run_redact(rounds=1, detect_secrets=False)
    text = render_redact(result)
    assert result.passed and result.throughput_ratio > 0
    for words in ("recall", "precision", "look-alikes kept", "chars/s", "misses by format"):
        assert words in text


def test_every_kind_of_phrasing_is_assembled_from_random_parts() -> None:
    first, second = phrasings(0), phrasings(1)
    assert {s.format for s in first} == {
        "prose_assignment", "user_credentials", "piped_password", "database_cli",
        "database_url", "remote_login", "windows_command", "prose_other_language",
    }  # fmt: skip
    assert len({s.text for s in first}) == len(first)  # no two samples alike
    assert not {s.text for s in first} & {s.text for s in second}
    assert all(not s.spans for s in phrasing_lookalikes(0))


HELD_OUT = [
    ("the wifi key is Zebra!2024", "Zebra!2024"),
    ("the token we use for CI is ghx9PLmn44QQzz", "ghx9PLmn44QQzz"),
    ("her password for the vpn is now Moon-Light-42", "Moon-Light-42"),
    ("root password of the build box: Tr1cky.Pass", "Tr1cky.Pass"),
    ("login alice / s3cr3t!", "s3cr3t!"),
    ("creds are bob/Winter#77", "Winter#77"),
    ("user: carol password: Ch@rlie99", "Ch@rlie99"),
    ("echo hunter2x | sudo -S apt update", "hunter2x"),
    ("sudo -S reboot <<< 'Gr8-pass!'", "Gr8-pass!"),
    ("printf '%s' 'Pa$w0rd!' | docker login -u me --password-stdin reg.io", "Pa$w0rd!"),
    ("net user alice P@ssw0rd1 /add", "P@ssw0rd1"),
    ("net use Z: \\\\srv\\data /user:CORP\\al Fall2025!", "Fall2025!"),
    ("psexec \\\\h -u adm -p Adm1n!pw cmd", "Adm1n!pw"),
    ("cqlsh db1 -u ops -p K33p0ut!", "K33p0ut!"),
    ("setx DEPLOY_TOKEN q1w2e3r4", "q1w2e3r4"),
    ("sqlplus scott/T1ger99@orcl", "T1ger99"),
]
"""Phrasings written by hand, not by the generator: the rules must hold on the kind."""
HELD_OUT_LOOKALIKES = [
    "the password is required for login",
    "the password policy is strict",
    "the token expires in 15 minutes",
    "the key of the map is user_id",
    "our api key manager is HashiCorp Vault",
    "the token manager upgraded to v2.14.0",
    "net user alice /delete",
    "runas /user:admin cmd",
    "echo $PASS | sudo -S reboot",
    "use tabs / spaces consistently",
    "docker run -u 1000:1000 -p 8080:80 nginx",
    "login as admin failed",
]


@pytest.mark.parametrize(("text", "secret"), HELD_OUT)
def test_phrasings_written_by_hand_are_redacted(text: str, secret: str) -> None:
    assert secret not in Redactor().text(text)


@pytest.mark.parametrize("text", HELD_OUT_LOOKALIKES)
def test_their_lookalikes_written_by_hand_survive(text: str) -> None:
    assert Redactor().text(text) == text
