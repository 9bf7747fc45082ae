"""The keys of encrypted stores: where they are looked for, how they are kept.

An encrypted store (SQLCipher, docs/trust.md "Encryption at rest") is opened with a key
found, in this order, in:

1. ``AIDE_MEMOIRE_ENCRYPTION_KEY`` (the ``encryption_key`` setting; never stored by us),
2. the key file (``encryption_key_file``, default ``keys/<store id>.key`` in the user's
   config folder: outside the store's folder, so a copy of the folder holds no key), and
3. the OS keychain (``keyring``), service ``aide-memoire``, user ``<store id>``,

each also as a *pending* key (``<file>.next``, user ``<store id>.next``) that a rotation
writes before it re-encrypts and promotes after: a rotation killed at any point leaves
the store opening with the old key or the new one. The store id is a hash of the home's
path, so two homes never share a key by accident.

A key is 64 hex digits (32 random bytes, used as SQLCipher's raw key: no key derivation
on each open) or a passphrase (derived by SQLCipher's PBKDF2 on every connection: slower).
A :class:`StoreKey` never shows its secret in a repr, a log line or an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import platformdirs

from ..core.errors import InvalidInput, KeyUnavailable
from ..core.settings import Settings

__all__ = [
    "KEYCHAIN_SERVICE",
    "KeyPlaces",
    "StoreKey",
    "keychain",
    "new_key",
]

KEYCHAIN_SERVICE = "aide-memoire"
ENV_NAME = "AIDE_MEMOIRE_ENCRYPTION_KEY"
_HEX_KEY = re.compile(r"[0-9a-fA-F]{64}")
Keeper = Literal["keychain", "file"]


@dataclass(frozen=True)
class StoreKey:
    """A key and where it came from (the place is shown; the secret never is)."""

    secret: str = field(repr=False)
    place: str
    pending: bool = False  # written by a rotation not finished yet

    def pragma(self) -> str:
        """The value of ``PRAGMA key``: a raw key for 64 hex digits, else a passphrase."""
        if _HEX_KEY.fullmatch(self.secret):
            return f"\"x'{self.secret.lower()}'\""
        return "'" + self.secret.replace("'", "''") + "'"


def new_key() -> str:
    """32 random bytes as 64 hex digits."""
    return secrets.token_hex(32)


def _parse(text: str, place: str, *, pending: bool = False) -> StoreKey:
    secret = text.strip()
    if not secret:
        raise KeyUnavailable(f"{place} is empty: put the store's key in it, or remove it")
    return StoreKey(secret, place, pending)


def keychain() -> Any | None:
    """The keyring backend when it is a real keychain (macOS Keychain, Windows Credential
    Manager, the Secret Service...) or one the user configured on purpose, else None.

    keyring falls back to a plain-text file or to a backend that fails every call when
    there is no keychain (a container, a server): a key kept there would protect nothing
    more than our key file does, so such a fallback is not used unless chosen explicitly
    (``PYTHON_KEYRING_BACKEND`` or keyring's own config file).
    """
    try:
        import keyring
        import keyring.core
        from keyring.backends import fail
    except ImportError:
        return None
    try:
        explicit = keyring.core.load_env() or keyring.core.load_config()
        backend = explicit or keyring.get_keyring()
    except Exception:  # noqa: BLE001 - a broken keyring setup means "no keychain"
        return None
    if isinstance(backend, fail.Keyring) or type(backend).__name__ == "NullKeyring":
        return None
    if explicit is None and float(getattr(backend, "priority", 0)) < 1:
        return None
    return backend


@dataclass(frozen=True)
class KeyPlaces:
    """Where one store's key is looked for and kept (made from the settings)."""

    store_id: str
    env_key: str | None = field(repr=False)
    key_file: Path
    use_keychain: bool

    @classmethod
    def for_home(cls, settings: Settings, home: Path | None = None) -> KeyPlaces:
        home = (home or settings.home).expanduser().resolve()
        store_id = hashlib.sha256(str(home).encode()).hexdigest()[:16]
        default = Path(platformdirs.user_config_dir("aide-memoire", appauthor=False))
        key_file = settings.encryption_key_file or default / "keys" / f"{store_id}.key"
        env = settings.encryption_key.get_secret_value() if settings.encryption_key else None
        return cls(store_id, env or None, key_file.expanduser(), settings.encryption_keychain)

    @property
    def pending_file(self) -> Path:
        return self.key_file.with_name(self.key_file.name + ".next")

    # -- finding -----------------------------------------------------------------------

    def candidates(self) -> tuple[list[StoreKey], list[str]]:
        """Every key found (current before pending, in the documented order), and a line
        per place looked at saying what was there, for the error when none opens."""
        found: list[StoreKey] = []
        looked: list[str] = []
        if self.env_key is not None:
            found.append(_parse(self.env_key, f"the environment variable {ENV_NAME}"))
            looked.append(f"{ENV_NAME} (set)")
        else:
            looked.append(f"{ENV_NAME} (unset)")
        for path, what in ((self.key_file, "key file"), (self.pending_file, "pending key file")):
            key = self._read_file(path, what, pending=what != "key file")
            if key is not None:
                found.append(key)
            if what == "key file" or key is not None:
                looked.append(f"the {what} {path} ({'present' if key else 'missing'})")
        if not self.use_keychain:
            looked.append("the OS keychain (off: AIDE_MEMOIRE_ENCRYPTION_KEYCHAIN=false)")
            return found, looked
        backend = keychain()
        if backend is None:
            looked.append("the OS keychain (none usable on this machine)")
            return found, looked
        for user, what in ((self.store_id, "keychain"), (f"{self.store_id}.next", "pending")):
            try:
                secret = backend.get_password(KEYCHAIN_SERVICE, user)
            except Exception as exc:  # noqa: BLE001 - a locked or broken keychain: say so
                looked.append(f"the OS keychain ({type(exc).__name__}: it could not be read)")
                break
            if secret is not None:
                found.append(_parse(secret, f"the OS keychain ({KEYCHAIN_SERVICE}/{user})",
                                    pending=what == "pending"))
            if what == "keychain" or secret is not None:
                looked.append(f"the OS keychain, {KEYCHAIN_SERVICE}/{user} "
                              f"({'present' if secret else 'missing'})")
        return found, looked

    @staticmethod
    def _read_file(path: Path, what: str, *, pending: bool) -> StoreKey | None:
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise KeyUnavailable(f"the {what} {path} cannot be read ({exc.strerror})") from None
        if mode & 0o077:
            raise KeyUnavailable(
                f"the {what} {path} can be read by other users (mode {mode & 0o777:o}); it "
                f"was not used. Run 'chmod 600 {path}' and try again"
            )
        try:
            return _parse(path.read_text(encoding="utf-8"), f"the {what} {path}",
                          pending=pending)
        except (OSError, UnicodeDecodeError) as exc:
            raise KeyUnavailable(f"the {what} {path} cannot be read ({exc})") from None

    # -- keeping -----------------------------------------------------------------------

    def keeper(self, asked: Literal["auto", "keychain", "file"]) -> Keeper:
        """Where a new key goes: the keychain when there is one (or asked), else the file."""
        if asked == "file":
            return "file"
        usable = self.use_keychain and keychain() is not None
        if asked == "keychain" and not usable:
            raise InvalidInput(
                "no usable OS keychain here (or AIDE_MEMOIRE_ENCRYPTION_KEYCHAIN is false); "
                "keep the key in the key file instead (--key-in file)"
            )
        return "keychain" if usable else "file"

    def keep(self, secret: str, keeper: Keeper, *, pending: bool) -> str:
        """Write ``secret`` as the current (or pending) key; returns the place, for messages."""
        if keeper == "file":
            path = self.pending_file if pending else self.key_file
            _write_private(path, secret + "\n")
            return f"the key file {path}"
        backend = keychain()
        if backend is None:
            raise KeyUnavailable("the OS keychain went away; keep the key in a file "
                                 "(--key-in file)")
        user = f"{self.store_id}.next" if pending else self.store_id
        backend.set_password(KEYCHAIN_SERVICE, user, secret)
        return f"the OS keychain ({KEYCHAIN_SERVICE}/{user})"

    def drop_pending(self) -> None:
        """Forget the pending key (after it became the current one)."""
        self.pending_file.unlink(missing_ok=True)
        backend = keychain() if self.use_keychain else None
        if backend is not None:
            with contextlib.suppress(Exception):  # absent already: nothing to drop
                backend.delete_password(KEYCHAIN_SERVICE, f"{self.store_id}.next")

    def held_in(self) -> Keeper | None:
        """Which of our keepers holds the current key (None: only the environment, or none)."""
        if self.key_file.exists():
            return "file"
        backend = keychain() if self.use_keychain else None
        if backend is not None:
            with contextlib.suppress(Exception):
                if backend.get_password(KEYCHAIN_SERVICE, self.store_id) is not None:
                    return "keychain"
        return None


def _write_private(path: Path, text: str) -> None:
    """Write a 0600 file atomically (a crash leaves the old content or the new, whole)."""
    folder = path.parent
    if not folder.exists():
        folder.mkdir(mode=0o700, parents=True)
    partial = folder / f".{path.name}.partial"
    fd = os.open(partial, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, path)
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
