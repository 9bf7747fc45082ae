"""encrypt, decrypt and rekey as a user runs them, and snapshots and restore keeping the
store's encryption (a snapshot of an encrypted store is encrypted with the same key)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aide_memoire import Memory
from aide_memoire.engine.core.errors import KeyUnavailable, StoreError
from aide_memoire.engine.ops import encrypt as ops
from aide_memoire.engine.storage.driver import is_encrypted
from tests.clirun import invoke

from .conftest import Keyed


def _contents(keyed: Keyed) -> list[str]:
    with keyed.memory() as memory:
        conn = memory.internals.db.conn()
        return sorted(r.content for r in memory.internals.store.iter_namespace(conn, "p"))


def test_encrypt_decrypt_rekey_round_trip_through_the_cli(keyed: Keyed) -> None:
    assert invoke(keyed.home, "store", "-n", "p", "the ferry leaves at noon",
                  env=keyed.env).returncode == 0
    assert invoke(keyed.home, "snapshot", "create", env=keyed.env).returncode == 0
    before = _contents(keyed)
    done = invoke(keyed.home, "encrypt", "--json", env=keyed.env, check=True)
    report = json.loads(done.stdout)
    assert report["encrypted"] and report["key_place"] == f"the key file {keyed.key_file}"
    assert len(report["snapshots"]) == 1
    assert keyed.key() not in done.stdout + done.stderr
    assert is_encrypted(keyed.home / "memory.db") and _contents(keyed) == before
    status = invoke(keyed.home, "status", env=keyed.env, check=True).stdout
    assert "encryption SQLCipher" in status and keyed.key() not in status
    again = invoke(keyed.home, "encrypt", "--json", env=keyed.env, check=True)
    assert json.loads(again.stdout)["snapshots"] == []  # nothing left to do
    old = keyed.key()
    invoke(keyed.home, "rekey", env=keyed.env, check=True)
    assert keyed.key() != old and _contents(keyed) == before
    with pytest.raises(KeyUnavailable):  # the retired key opens nothing any more
        Memory(settings=keyed.settings(encryption_key=old,
                                       encryption_key_file=keyed.home.parent / "none"))
    out = invoke(keyed.home, "decrypt", env=keyed.env, check=True).stdout
    assert "the key stays in" in out
    assert not is_encrypted(keyed.home / "memory.db")
    assert not any(is_encrypted(p) for p in (keyed.home / "snapshots").glob("*.db"))
    assert _contents(keyed) == before
    assert invoke(keyed.home, "audit", "verify", env=keyed.env).returncode == 0
    assert invoke(keyed.home, "doctor", env=keyed.env).returncode == 0


def test_encrypt_with_no_store_makes_an_empty_encrypted_one(keyed: Keyed) -> None:
    ops.encrypt(keyed.settings(), actor="test")
    assert is_encrypted(keyed.home / "memory.db")
    with keyed.memory() as memory:
        memory.store("first words of an encrypted store", namespace="p")
    assert _contents(keyed) == ["first words of an encrypted store"]


def test_encrypt_is_refused_while_the_store_is_open(keyed: Keyed) -> None:
    with keyed.memory() as memory:
        memory.store("held open by a server", namespace="p")
        with pytest.raises(StoreError, match="this process has the store"):
            ops.encrypt(keyed.settings(), actor="test")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(keyed.home)], stdout=subprocess.PIPE, text=True,
        env={**os.environ, **keyed.env})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        before = (keyed.home / "memory.db").read_bytes()
        with pytest.raises(StoreError, match="another process has the store"):
            ops.encrypt(keyed.settings(), actor="test")
        assert (keyed.home / "memory.db").read_bytes() == before
    finally:
        holder.kill()
        holder.communicate()
    assert not is_encrypted(keyed.home / "memory.db")


HOLDER = """
import sys, time
from aide_memoire import Memory
with Memory(sys.argv[1]) as m:
    m.recall("anything", namespace="p")
    print("open", flush=True)
    time.sleep(120)
"""


def test_rekey_of_a_plain_store_says_to_encrypt_first(keyed: Keyed) -> None:
    keyed.memory().close()
    done = invoke(keyed.home, "rekey", env=keyed.env)
    assert done.returncode == 2 and "run 'aide-memoire encrypt' first" in done.stderr


def test_snapshots_of_an_encrypted_store_are_encrypted_and_restore_keeps_it(
        encrypted: Keyed, tmp_path: Path) -> None:
    with encrypted.memory() as memory:
        info = memory.snapshot()
        memory.store("written after the snapshot", namespace="p")
    snap = Path(info.path)
    assert is_encrypted(snap)
    assert b"staging deploy" not in snap.read_bytes()
    # An exported copy of the snapshot (a backup elsewhere) is the same ciphertext.
    backup = tmp_path / "backup" / snap.name
    backup.parent.mkdir()
    shutil.copyfile(snap, backup)
    report = Memory.restore(str(backup), settings=encrypted.settings())
    assert report.memories == 3
    assert is_encrypted(encrypted.home / "memory.db")
    assert "written after the snapshot" not in _contents(encrypted)
    assert report.kept_aside and is_encrypted(Path(report.kept_aside))
    assert invoke(encrypted.home, "audit", "verify", env=encrypted.env).returncode == 0


def test_a_plain_snapshot_is_not_restored_over_an_encrypted_store(keyed: Keyed) -> None:
    with keyed.memory() as memory:
        memory.store("plain before encryption", namespace="p")
    plain_copy = keyed.home.parent / "plain-copy.db"
    shutil.copyfile(keyed.home / "memory.db", plain_copy)
    ops.encrypt(keyed.settings(), actor="test")
    before = (keyed.home / "memory.db").read_bytes()
    with pytest.raises(StoreError, match="would leave the store in plain text"):
        Memory.restore(str(plain_copy), settings=keyed.settings())
    assert (keyed.home / "memory.db").read_bytes() == before


def test_migrate_store_to_a_sqlite_file_reads_the_encrypted_source(encrypted: Keyed,
                                                                   tmp_path: Path) -> None:
    target = tmp_path / "copy" / "memory.db"
    done = invoke(encrypted.home, "migrate-store", "--to", str(target), "--quiet",
                  env=encrypted.env)
    assert done.returncode == 0, done.stderr
    # The copy keeps the encryption, under the source's key (docs/trust.md says how to
    # open it: that key file, named by AIDE_MEMOIRE_ENCRYPTION_KEY_FILE).
    assert is_encrypted(target)
    copy = Keyed(target.parent, encrypted.key_file)
    assert _contents(copy) == _contents(encrypted)
