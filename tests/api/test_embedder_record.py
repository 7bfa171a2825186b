"""A brain records the embedder that made its vectors; every open uses it or refuses another.

Run with the hashing embedder (no model to load) except where MiniLM is the point.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from reverie import Reverie
from reverie.api.embedding import read_record
from reverie.cli.app import app
from reverie.embed import minilm_available
from reverie.errors import EmbedderMismatch

SCOPE = "acme/coder"
EPISODE = {
    "scope": SCOPE,
    "situation": "deploying the api to staging",
    "action": "kubectl apply -f k8s/api/",
    "outcome": "failure",
    "error": "TimeoutError: timed out waiting for the rollout",
}


@pytest.fixture
def unconfigured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No embedder named by the environment or a config file: the default path."""
    monkeypatch.delenv("REVERIE_EMBEDDER", raising=False)
    monkeypatch.setenv("REVERIE_CONFIG", str(tmp_path / "no-config.toml"))


def _hashed_brain(path: Path) -> None:
    with Reverie.open(path, embedder="hashing") as rv:
        rv.remember(EPISODE)
        rv.index(SCOPE)


@pytest.mark.usefixtures("unconfigured")
def test_the_first_vectors_record_the_embedder_and_a_later_open_uses_it(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    with Reverie.open(db, embedder="hashing") as rv:
        assert read_record(rv.store) is None  # nothing embedded yet, nothing recorded
        rv.remember(EPISODE)
        rv.recall("deploying the api", SCOPE, 200)  # recall embeds what was added
        record = read_record(rv.store)
    assert record is not None
    assert (record.name, record.model_id, record.dim) == ("hashing", "hashing-v1-256", 256)
    with Reverie.open(db) as again:  # no embedder named: the recorded one, not auto
        assert again.embedder is not None and again.embedder.model_id == "hashing-v1-256"


@pytest.mark.usefixtures("unconfigured")
def test_another_embedder_is_refused_with_both_names_and_how_to_switch(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    _hashed_brain(db)
    with pytest.raises(EmbedderMismatch) as raised:
        Reverie.open(db, embedder="openai:text-embedding-3-small")
    message = str(raised.value)
    assert "'hashing'" in message and "text-embedding-3-small" in message
    assert "--embedder hashing" in message and "reverie reembed" in message
    with Reverie.open(db, embedder=None) as lexical:  # no vectors read: nothing to mix
        assert lexical.embedder is None


def test_the_environment_and_the_config_file_name_the_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('embedder = "hashing"\n', encoding="utf-8")
    monkeypatch.setenv("REVERIE_CONFIG", str(config))
    monkeypatch.delenv("REVERIE_EMBEDDER", raising=False)
    with Reverie.open(tmp_path / "a.db") as rv:
        assert rv.embedder is not None and rv.embedder.model_id == "hashing-v1-256"
    monkeypatch.setenv("REVERIE_EMBEDDER", "none")  # the environment wins over the file
    with Reverie.open(tmp_path / "a.db") as rv:
        assert rv.embedder is None


@pytest.mark.usefixtures("unconfigured")
def test_the_cli_refuses_a_mismatch_in_one_line_and_reembed_switches(tmp_path: Path) -> None:
    db = tmp_path / "brain.db"
    _hashed_brain(db)
    runner = CliRunner()
    refused = runner.invoke(
        app, ["--db", str(db), "--embedder", "openai:x", "recall", "api", "-s", SCOPE]
    )
    assert refused.exit_code == 2
    assert "made by embedder 'hashing'" in refused.output.replace("\n", " ")
    if not minilm_available():
        return
    switched = runner.invoke(app, ["--db", str(db), "reembed", "minilm"])
    assert switched.exit_code == 0, switched.output
    assert "minilm" in switched.output
    with Reverie.open(db) as rv:
        assert rv.embedder is not None and rv.embedder.model_id == "all-MiniLM-L6-v2-int8"
        assert rv.recall("the api rollout timed out", SCOPE, 200).text
