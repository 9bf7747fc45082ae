"""``aide-memoire encrypt``, ``decrypt`` and ``rekey``: the store and its snapshots in and
out of encryption, and key rotation (engine/ops/encrypt.py; docs/trust.md, "Encryption
at rest"). Each refuses while another process has the store open, and a run cut short
leaves a store that opens: run it again to finish.
"""

from __future__ import annotations

from typing import Literal

import click

from ..engine.core.settings import Settings
from ..engine.ops.models import EncryptionReport
from .output import emit, engine_errors, needs_part

__all__ = ["register"]

_KEY_IN = click.option(
    "--key-in", type=click.Choice(["auto", "keychain", "file"]), default="auto",
    show_default=True,
    help="Where a new key is kept: the OS keychain when one exists (auto), or the key file "
    "(AIDE_MEMOIRE_ENCRYPTION_KEY_FILE, default: keys/<store id>.key in the config folder).")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")


def _text(report: EncryptionReport) -> str:
    done = {"encrypt": "encrypted", "decrypt": "decrypted", "rekey": "re-encrypted"}
    line = f"{done[report.action]} {report.path}"
    if report.snapshots:
        line += f" and {len(report.snapshots)} snapshot(s)"
    if report.action == "decrypt":
        if report.key_place:
            line += (f"; the key stays in {report.key_place}: delete it once no encrypted "
                     "backup needs it")
        else:
            line = f"{report.path} is not encrypted: nothing to do"
    elif report.key_place:
        line += f"; key in {report.key_place}"
    return line + (f"\n{report.note}" if report.note else "")


def register(cli: click.Group) -> None:
    """Add encrypt, decrypt and rekey to the ``aide-memoire`` group."""

    def settings_of(ctx: click.Context) -> Settings:
        return Settings.from_env(home=ctx.obj.get("home"))

    def run(ctx: click.Context, action: Literal["encrypt", "decrypt", "rekey"],
            key_in: Literal["auto", "keychain", "file"], as_json: bool) -> None:
        from ..engine.ops import encrypt as ops

        needs_part("encryption")
        with engine_errors():
            settings = settings_of(ctx)
            if action == "encrypt":
                report = ops.encrypt(settings, key_in=key_in, actor="cli")
            elif action == "rekey":
                report = ops.rekey(settings, key_in=key_in, actor="cli")
            else:
                report = ops.decrypt(settings, actor="cli")
        emit(report, as_json=as_json, text=_text(report))

    @cli.command()
    @_KEY_IN
    @_JSON
    @click.pass_context
    def encrypt(ctx: click.Context, key_in: Literal["auto", "keychain", "file"],
                as_json: bool) -> None:
        """Encrypt the store and its snapshots with a new key (SQLCipher).

        With AIDE_MEMOIRE_ENCRYPTION_KEY set, that key is used and kept nowhere. With no
        store yet, an empty encrypted one is made. Refused while another process has the
        store open.
        """
        run(ctx, "encrypt", key_in, as_json)

    @cli.command()
    @_JSON
    @click.pass_context
    def decrypt(ctx: click.Context, as_json: bool) -> None:
        """Write the store and its snapshots back as plain SQLite (the key is kept)."""
        run(ctx, "decrypt", "auto", as_json)

    @cli.command()
    @_KEY_IN
    @_JSON
    @click.pass_context
    def rekey(ctx: click.Context, key_in: Literal["auto", "keychain", "file"],
              as_json: bool) -> None:
        """Re-encrypt the store and its snapshots under a new key; retire the old one.

        The new key is kept where the old one was (unless --key-in says otherwise).
        """
        run(ctx, "rekey", key_in, as_json)
