"""Bounds of the code index: system folders, symlinks out of the root, secret files and
secret text, and several processes indexing one tree."""

from __future__ import annotations

import os
import secrets
import string
import subprocess
import sys
from pathlib import Path

import pytest

from aide_memoire.engine.code.index import CodeIndex
from aide_memoire.engine.core.errors import InvalidInput
from aide_memoire.engine.storage.sqlite_steps import code_index_present as present

from .conftest import open_index


def _token(prefix: str, length: int) -> str:
    alphabet = string.ascii_letters + string.digits
    return prefix + "".join(secrets.choice(alphabet) for _ in range(length))


@pytest.mark.parametrize(
    "folder", ["/", "/etc", "/proc", "/proc/self", "/sys", "/dev", "/usr", "/home", "~"]
)
def test_system_folders_are_refused(code: CodeIndex, folder: str) -> None:
    path = Path(folder).expanduser()
    if not path.is_dir():
        pytest.skip(f"{folder} does not exist on this machine")
    with pytest.raises(InvalidInput, match="code index only reads a project"):
        code.index(path)
    assert not present(code.db.conn())  # refused before anything, even the tables, was made


def test_a_root_that_links_to_proc_is_judged_by_its_target(
    code: CodeIndex, tmp_path: Path
) -> None:
    link = tmp_path / "innocent-project"
    os.symlink("/proc/self", link)
    with pytest.raises(InvalidInput, match="system folder"):
        code.index(link)


def test_links_inside_the_tree_to_the_outside_are_not_followed(
    code: CodeIndex, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("LEAKED_MARKER = 1\n")
    root = tmp_path / "proj"
    root.mkdir()
    (root / "main.py").write_text("def main():\n    return 1\n")
    os.symlink("/proc/self", root / "self")
    os.symlink(outside, root / "out")
    os.symlink(outside / "leak.py", root / "leak.py")
    report = code.index(root)
    assert report.files == 1
    assert {s.path for s in report.skipped if "symlink" in s.reason} == {"self", "out", "leak.py"}
    assert code.search(root, "LEAKED_MARKER") == []


def test_secret_files_are_skipped_and_secret_text_redacted(
    code: CodeIndex, tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    (root / "config").mkdir(parents=True)
    token = _token("ghp_", 36)
    key_id = _token("AKIA", 16).upper()
    for name in (".env", ".env.production", "config/server.pem", "id_rsa", "deploy.key",
                 ".netrc", ".pgpass", "config/credentials.json"):
        (root / name).write_text(f"marker_in_secret_file {token}\n")
    (root / "client.py").write_text(
        "import os\n\n"
        f"GITHUB_TOKEN = \"{token}\"\n"
        f"AWS_KEY = \"{key_id}\"\n\n"
        "def fetch_repositories(session):\n    return session.get('/user/repos')\n"
    )
    report = code.index(root)
    skipped = {s.path for s in report.skipped if "secret file" in s.reason}
    assert skipped == {".env", ".env.production", "config/server.pem", "id_rsa", "deploy.key",
                       ".netrc", ".pgpass", "config/credentials.json"}
    assert [r.path for r in report.redacted] == ["client.py"]
    assert code.search(root, "marker_in_secret_file") == []
    hits = code.search(root, "fetch repositories GITHUB_TOKEN")
    assert hits and all(token not in h.snippet and key_id not in h.snippet for h in hits)
    assert any("[redacted:" in h.snippet for h in hits)
    stored = b"".join(p.read_bytes() for p in (tmp_path / "home").glob("memory.db*"))
    assert token.encode() not in stored and key_id.encode() not in stored


def test_secret_file_list_is_configurable(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".env").write_text("DEBUG=true\n")
    (root / "notes.private").write_text("nothing to see\n")
    index = CodeIndex(open_index(tmp_path / "home").db, secret_files="*.private")
    try:
        report = index.index(root)
    finally:
        index.db.close()
    assert {s.path for s in report.skipped} == {"notes.private"}
    assert report.files == 1


_INDEXER = """
import sys
from pathlib import Path
from aide_memoire.engine.code.index import CodeIndex
from aide_memoire.engine.storage.sqlite_steps import code_index_present as present
from aide_memoire.engine.storage.db import SqliteDatabase
index = CodeIndex(SqliteDatabase(Path(sys.argv[1]) / "memory.db"))
for _ in range(3):
    index.index(sys.argv[2])
index.db.close()
"""


def test_several_processes_indexing_one_tree(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    for i in range(60):
        (root / f"mod_{i}.py").write_text(f"def function_{i}(x):\n    return x + {i}\n")
    home = tmp_path / "home"
    open_index(home).db.close()
    procs = [
        subprocess.Popen([sys.executable, "-c", _INDEXER, str(home), str(root)],
                         env=dict(os.environ), stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    assert not any("IntegrityError" in e for e in errors)
    index = open_index(home)
    try:
        report = index.index(root)
        assert report.files == 60 and report.indexed == 0
        assert len(index.symbol(root, "function_42")) >= 1
    finally:
        index.db.close()
