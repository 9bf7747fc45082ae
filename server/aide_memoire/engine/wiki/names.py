"""Safe, stable file names for wiki pages, the folder they go in, and writing only changes.

A page's name comes from text someone wrote (an entity's name, a memory's first words),
so it is never used as a path as it is: it is folded to ``[a-z0-9-]``, cut, and given a
short hash of the key it stands for whenever folding lost something (so ``C++`` and
``C`` never share a file, while ``alice`` stays ``alice.md`` and ``acme corp``
``acme-corp.md``). Every path is
checked to stay inside the folder, and no page is written through a symbolic link.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from pathlib import Path

from ..code.bounds import check_root
from ..core.errors import InvalidInput

__all__ = ["SLUG_CHARS", "page_stem", "resolve_dir", "safe_path", "write_if_changed"]

SLUG_CHARS = 60
# Names Windows refuses as files, whatever the extension.
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
     *(f"lpt{i}" for i in range(10))}
)


def _hash(key: str) -> str:
    return hashlib.blake2b(key.encode("utf-8"), digest_size=4).hexdigest()


def page_stem(name: str, key: str, *, always_hash: bool = False) -> str:
    """A file name (no extension) for ``name``; ``key`` is what it stands for (stable)."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9]+", "-", folded).strip("-")[:SLUG_CHARS].strip("-")
    # Unhashed only when the name maps back to exactly one key (hyphens for spaces).
    if slug and not always_hash and slug.replace("-", " ") == key and slug not in _RESERVED:
        return slug
    return f"{slug}-{_hash(key)}" if slug else f"page-{_hash(key)}"


def resolve_dir(folder: str | os.PathLike[str], *, create: bool) -> Path:
    """The folder, resolved, refused when it is a system folder or a whole home (the
    same bounds as the code index), created when asked."""
    path = Path(folder).expanduser()
    if path.exists() and not path.is_dir():
        raise InvalidInput(f"{folder} is not a folder; give the folder of the wiki")
    if not path.exists():
        if not create:
            raise InvalidInput(f"{folder} does not exist; give the folder of the wiki")
        # Judge where the folder would be before making it: nothing is created under /etc.
        check_root(path.resolve(strict=False))
        path.mkdir(parents=True, exist_ok=True)
    resolved = path.resolve(strict=True)
    check_root(resolved)
    return resolved


def safe_path(root: Path, rel: str) -> Path:
    """``root / rel``, refused when it would leave ``root`` or pass through a link."""
    parts = rel.split("/")
    if any(p in ("", ".", "..") or "\\" in p or ":" in p for p in parts):
        raise InvalidInput(f"unsafe page path {rel!r}")
    path = root
    for part in parts:
        path = path / part
        if path.is_symlink():
            raise InvalidInput(
                f"{path} is a symbolic link: the wiki never writes through links; remove it"
            )
    if root not in path.parents:
        raise InvalidInput(f"page path {rel!r} leaves {root}")
    return path


def write_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` unless the file already holds exactly it (its mtime then stays);
    through a temporary file and a rename, so a reader never sees half a page."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_bytes(data)
    os.replace(temp, path)
    return True
