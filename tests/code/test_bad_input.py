"""Bad input: clear errors, skipped files listed with a reason, the index stays usable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aide_memoire.engine.code.index import CodeIndex
from aide_memoire.engine.core.errors import InvalidInput, InvalidQuery, NotFound


def test_missing_root(code: CodeIndex, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        code.index(tmp_path / "nowhere")
    (tmp_path / "file.py").write_text("x = 1\n")
    with pytest.raises(InvalidInput, match="not a folder"):
        code.index(tmp_path / "file.py")
    with pytest.raises(NotFound, match="has not been indexed"):
        code.search(tmp_path, "x")


def test_bad_files_are_skipped_with_reasons(code: CodeIndex, tmp_path: Path) -> None:
    root = tmp_path / "src"
    root.mkdir()
    (root / "good.py").write_text("def still_here():\n    return 1\n")
    (root / "latin.c").write_bytes(b"int caf\xe9(void) { return 0; }\n")
    with (root / "huge.py").open("wb") as fh:  # 50 MB, sparse: cheap to make
        fh.truncate(50 * 1024 * 1024)
    (root / "blob.txt").write_bytes(b"abc\x00def")
    os.symlink(root / "loop", root / "loop")  # a link to itself
    os.symlink(root, root / "parent")  # a folder link back up: a cycle if followed
    report = code.index(root)
    reasons = {s.path: s.reason for s in report.skipped}
    assert "oversized" in reasons["huge.py"]
    assert "not valid UTF-8" in reasons["latin.c"]
    assert "binary" in reasons["blob.txt"]
    assert "symlink" in reasons["loop"] and "symlink" in reasons["parent"]
    assert report.files == 1
    assert code.symbol(root, "still_here")[0].path == "good.py"


def test_python_coding_cookie_is_honoured(code: CodeIndex, tmp_path: Path) -> None:
    root = tmp_path / "src"
    root.mkdir()
    (root / "old.py").write_bytes(b"# -*- coding: latin-1 -*-\ndef caf\xe9_name():\n    pass\n")
    report = code.index(root)
    assert report.skipped == []
    assert code.symbol(root, "café_name")[0].start_line == 2


def test_bad_queries(code: CodeIndex, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    pass\n")
    code.index(tmp_path)
    with pytest.raises(InvalidQuery):
        code.search(tmp_path, "   ")
    with pytest.raises(InvalidQuery):
        code.search(tmp_path, '"*()')
    with pytest.raises(InvalidInput, match="unknown language"):
        code.search(tmp_path, "f", language="cobol")
    with pytest.raises(InvalidInput, match="limit"):
        code.search(tmp_path, "f", limit=0)
    with pytest.raises(InvalidInput, match="empty"):
        code.symbol(tmp_path, "")
    # FTS syntax is data, not operators
    assert code.search(tmp_path, 'f AND NOT "x" NEAR(') is not None
