"""Wrong, missing and foreign keys: one clear error naming where the key was looked for,
and not one byte of the store (or of the key files) changed."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aide_memoire import Memory
from aide_memoire.engine.core.errors import KeyUnavailable
from aide_memoire.engine.ops import encrypt as ops
from aide_memoire.engine.storage.keys import new_key

from .conftest import Keyed, files_of


def _hashes(*folders: Path) -> dict[str, str]:
    return {f"{folder}/{name}": hashlib.sha256(data).hexdigest()
            for folder in folders if folder.exists()
            for name, data in files_of(folder).items()}


def test_the_store_opens_with_its_key_and_status_names_the_place_not_the_key(
        encrypted: Keyed) -> None:
    assert not encrypted.home.joinpath("memory.db").read_bytes().startswith(b"SQLite format 3")
    assert (encrypted.key_file.stat().st_mode & 0o777) == 0o600
    assert encrypted.key_file.parent != encrypted.home
    with encrypted.memory() as memory:
        hits = memory.recall("when does the staging deploy run?", namespace="p")
        assert "the staging deploy runs on Tuesdays" in [h.content for h in hits]
        status = memory.status()
    assert status.db_driver == "sqlcipher3"
    assert status.encryption.startswith("SQLCipher 4.")
    assert str(encrypted.key_file) in status.encryption
    assert encrypted.key() not in status.model_dump_json()


def test_missing_key_names_every_place_and_leaves_the_store_untouched(
        encrypted: Keyed, tmp_path: Path) -> None:
    before = _hashes(encrypted.home)
    elsewhere = tmp_path / "nowhere" / "store.key"
    with pytest.raises(KeyUnavailable) as caught:
        Memory(settings=encrypted.settings(encryption_key_file=elsewhere))
    message = str(caught.value)
    assert "AIDE_MEMOIRE_ENCRYPTION_KEY (unset)" in message
    assert f"the key file {elsewhere} (missing)" in message
    assert "OS keychain" in message and "left untouched" in message
    assert _hashes(encrypted.home) == before


@pytest.mark.parametrize("source", ["environment", "key file"])
def test_a_wrong_key_is_refused_and_nothing_changes(
        encrypted: Keyed, tmp_path: Path, source: str) -> None:
    wrong = new_key()
    wrong_file = tmp_path / "wrong" / "store.key"
    wrong_file.parent.mkdir()
    wrong_file.write_text(wrong)
    wrong_file.chmod(0o600)
    before = _hashes(encrypted.home, encrypted.key_file.parent)
    overrides: dict[str, object] = (
        {"encryption_key": wrong, "encryption_key_file": tmp_path / "none.key"}
        if source == "environment" else {"encryption_key_file": wrong_file})
    with pytest.raises(KeyUnavailable, match="none of the keys found opens it") as caught:
        Memory(settings=encrypted.settings(**overrides))
    assert wrong not in str(caught.value)
    assert _hashes(encrypted.home, encrypted.key_file.parent) == before


def test_the_key_of_another_store_does_not_open_this_one(
        encrypted: Keyed, tmp_path: Path) -> None:
    other = Keyed(tmp_path / "other-home", tmp_path / "other-keys" / "store.key")
    with other.memory() as memory:
        memory.store("another store's note", namespace="p")
    ops.encrypt(other.settings(), actor="test")
    before = _hashes(encrypted.home, other.home)
    with pytest.raises(KeyUnavailable, match="the key of another store"):
        Memory(settings=encrypted.settings(encryption_key_file=other.key_file))
    with pytest.raises(KeyUnavailable):
        Memory(settings=other.settings(encryption_key_file=encrypted.key_file))
    assert _hashes(encrypted.home, other.home) == before


def test_a_key_file_others_can_read_is_not_used(encrypted: Keyed) -> None:
    encrypted.key_file.chmod(0o644)
    before = _hashes(encrypted.home)
    with pytest.raises(KeyUnavailable, match=r"chmod 600"):
        encrypted.memory()
    assert _hashes(encrypted.home) == before


def test_the_environment_key_wins_and_a_passphrase_works(keyed: Keyed) -> None:
    passphrase = "correct horse battery staple, said nobody twice"
    settings = keyed.settings(encryption_key=passphrase)
    with Memory(settings=settings) as memory:
        memory.store("a passphrase-keyed note about kayaks", namespace="p")
    report = ops.encrypt(settings, actor="test")
    assert report.key_place == "the environment variable AIDE_MEMOIRE_ENCRYPTION_KEY"
    assert not keyed.key_file.exists()  # the environment's key is kept nowhere by us
    with Memory(settings=settings) as memory:
        assert [h.content for h in memory.recall("kayaks", namespace="p")]
    with pytest.raises(KeyUnavailable):
        keyed.memory()


def test_the_keychain_path_with_a_real_file_keyring_backend(
        keyed: Keyed, tmp_path: Path) -> None:
    """keyrings.alt's file backend, chosen explicitly as a user would (no desktop keychain
    runs in a container); the CLI in real processes keeps and finds the key there."""
    env = {**os.environ, **keyed.env, "AIDE_MEMOIRE_ENCRYPTION_KEYCHAIN": "true",
           "PYTHON_KEYRING_BACKEND": "keyrings.alt.file.PlaintextKeyring",
           "XDG_DATA_HOME": str(tmp_path / "xdg-data")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "aide_memoire.cli.entry", *args],
                              env=env, capture_output=True, text=True, timeout=120)

    assert cli("store", "-n", "p", "the keychain holds the key of the otter log").returncode == 0
    done = cli("encrypt")
    assert done.returncode == 0, done.stderr
    assert "the OS keychain (aide-memoire/" in done.stdout
    assert not keyed.key_file.exists()
    status = cli("status")
    assert status.returncode == 0, status.stderr
    assert "key from the OS keychain" in status.stdout
    recalled = cli("recall", "-n", "p", "otter log")
    assert "otter" in recalled.stdout, recalled.stderr
    rotated = cli("rekey")
    assert rotated.returncode == 0, rotated.stderr
    assert "otter" in cli("recall", "-n", "p", "otter log").stdout
    # Without the keychain the same store is refused, naming the keychain it skipped.
    env["AIDE_MEMOIRE_ENCRYPTION_KEYCHAIN"] = "false"
    refused = cli("status")
    assert refused.returncode == 1
    assert "the OS keychain (off" in refused.stderr


def test_without_the_extra_an_encrypted_store_names_the_extra(encrypted: Keyed) -> None:
    """The keyword-only environment (a plain ``pip install .``) has no sqlcipher3."""
    root = Path(__file__).resolve().parents[2]
    python = root / ".venv-keyword" / "bin" / "python"
    if not python.exists():
        pytest.fail("the keyword-only environment is missing: run 'make keyword-env'")
    env = {**os.environ, **encrypted.env, "PYTHONPATH": str(root / "server")}
    before = _hashes(encrypted.home)
    for args in (["status"], ["encrypt"]):
        done = subprocess.run([str(python), "-m", "aide_memoire.cli.entry", *args], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode != 0
        assert "aide-memoire[encryption]" in done.stderr, done.stderr
    assert _hashes(encrypted.home) == before
