"""What the code index may read: no system folders, no secret files, no secret text.

A code index returns file text verbatim to any agent that searches it, so three
bounds apply before anything is stored:

- the root must be a project, not a system folder or a whole home: ``/``, ``/etc``,
  ``/proc`` and the like (or anything under the pseudo and configuration file systems),
  ``/home`` or the user's own home folder are refused with a clear error;
- files whose names mark them as credentials (``.env*``, ``*.pem``, ``id_rsa*``...) are
  skipped and reported; the list is ``code_secret_files`` (git-ignore patterns);
- every other file's text passes the secrets screen used by memory writes; a secret's
  span is replaced by ``[redacted:<rule>]`` and the file is indexed around it. The code
  around a secret is still worth finding, and the caller cannot "fix" a file the way a
  caller fixes a note, so refusing the whole file would lose more than it protects.

Symlinks are never followed (walk.py); the root itself is resolved first, so a link
named like a project that points at ``/proc/self`` is judged by where it leads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import InvalidInput

if TYPE_CHECKING:  # pathspec is part of the code extra; settings import this module
    import pathspec

__all__ = ["Redacted", "check_root", "redact_text", "secret_file_spec"]

# Refused together with everything under them: pseudo file systems, configuration, boot.
_SYSTEM_TREES = ("/proc", "/sys", "/dev", "/etc", "/boot", "/run", "/var/run", "/private/etc")
# Refused as roots (a project may live below some of them, e.g. /usr/src/app, /home/me/x).
_SYSTEM_ROOTS = (
    "/usr", "/var", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/opt", "/srv", "/tmp",
    "/home", "/root", "/Users", "/System", "/Library", "/private", "/Volumes", "/mnt",
    "/media", "/snap",
)


def _under(path: Path, tree: str) -> bool:
    return path == Path(tree) or Path(tree) in path.parents


def check_root(path: Path) -> None:
    """Refuse a resolved root that is a file system root, a system folder or a whole home."""
    reason: str | None = None
    if path.parent == path:
        reason = "the root of a file system"
    elif any(_under(path, tree) for tree in _SYSTEM_TREES):
        reason = "a system folder (configuration, devices or process information)"
    elif str(path) in _SYSTEM_ROOTS:
        reason = "a system folder holding many programs or users"
    elif path == Path.home().resolve():
        reason = "your whole home folder (it holds keys, tokens and other projects)"
    if reason:
        raise InvalidInput(
            f"{path} is {reason}: the code index only reads a project's source tree. "
            "Give the folder of one project (e.g. ~/src/my-app)"
        )


def secret_file_spec(patterns: str) -> pathspec.GitIgnoreSpec | None:
    """The compiled ``code_secret_files`` list (None when it is empty)."""
    import pathspec

    lines = [p.strip() for p in patterns.split(",") if p.strip()]
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


@dataclass(frozen=True)
class Redacted:
    """A file's text with its secrets replaced, and which rules fired."""

    text: str
    rules: tuple[str, ...]


def redact_text(text: str, *, rel: str) -> Redacted:
    """Replace every secret the write screen finds in ``text`` by ``[redacted:<rule>]``."""
    from ..trust.secrets import scan_secrets

    findings = scan_secrets(text, field=rel.replace(os.sep, "/"))
    if not findings:
        return Redacted(text, ())
    pieces: list[str] = []
    at = 0
    for finding in findings:  # sorted, non-overlapping
        pieces += [text[at:finding.start], f"[redacted:{finding.rule}]"]
        at = finding.end
    pieces.append(text[at:])
    return Redacted("".join(pieces), tuple(sorted({f.rule for f in findings})))
