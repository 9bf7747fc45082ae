"""Encrypted stores for the tests: a key file in the test's folder (never the user's),
the keychain off unless a test turns a real file-based keyring backend on."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from aide_memoire import Memory
from aide_memoire.engine.core.settings import Settings
from aide_memoire.engine.ops import encrypt as ops

pytest.importorskip("sqlcipher3", reason="the encryption extra is part of make setup")


@dataclass(frozen=True)
class Keyed:
    """A home whose key lives in ``key_file``; ``env`` names both for subprocesses."""

    home: Path
    key_file: Path

    @property
    def env(self) -> dict[str, str]:
        return {"AIDE_MEMOIRE_HOME": str(self.home),
                "AIDE_MEMOIRE_ENCRYPTION_KEY_FILE": str(self.key_file),
                "AIDE_MEMOIRE_ENCRYPTION_KEYCHAIN": "false",
                "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}

    def settings(self, **overrides: object) -> Settings:
        fields: dict[str, object] = {
            "home": self.home, "encryption_key_file": self.key_file,
            "encryption_keychain": False, "embedding_model": "none", **overrides}
        return Settings(**fields)  # type: ignore[arg-type]

    def memory(self, **overrides: object) -> Memory:
        return Memory(settings=self.settings(**overrides))

    def key(self) -> str:
        return self.key_file.read_text().strip()


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Keyed:
    found = Keyed(tmp_path / "home", tmp_path / "keys" / "store.key")
    for name, value in found.env.items():
        if name != "AIDE_MEMOIRE_EMBEDDING_MODEL":
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("AIDE_MEMOIRE_ENCRYPTION_KEY", raising=False)
    return found


@pytest.fixture
def encrypted(keyed: Keyed) -> Iterator[Keyed]:
    """An encrypted store holding three memories in namespace ``p``."""
    with keyed.memory() as memory:
        for text in ("the staging deploy runs on Tuesdays", "Ana prefers green tea",
                     "the cache warms at deploy time"):
            memory.store(text, namespace="p", tags=["ops"])
    ops.encrypt(keyed.settings(), actor="test")
    yield keyed


def files_of(home: Path) -> dict[str, bytes]:
    """Every file under the home (store, WAL, shm, snapshots, logs), by relative name."""
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*"))
            if p.is_file()}
