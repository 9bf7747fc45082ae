"""Re-indexing reads only what changed, drops what went away, and honours .gitignore."""

from __future__ import annotations

import os
from pathlib import Path

from aide_memoire.engine.code.index import CodeIndex
from aide_memoire.engine.code.terms import fts_query, split_identifier


def make_tree(root: Path) -> None:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def alpha_value():\n    return 1\n")
    (root / "pkg" / "b.py").write_text("class BetaThing:\n    def run(self):\n        pass\n")
    (root / "notes.md").write_text("# Notes\nThe gamma plan.\n")


def test_reindex_reads_only_changed_files(code: CodeIndex, tmp_path: Path) -> None:
    root = tmp_path / "src"
    make_tree(root)
    first = code.index(root)
    assert (first.files, first.indexed, first.unchanged) == (3, 3, 0)

    again = code.index(root)
    assert (again.indexed, again.unchanged, again.removed) == (0, 3, 0)

    a = root / "pkg" / "a.py"
    stat = a.stat()
    os.utime(a, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))  # touched, same bytes
    touched = code.index(root)
    assert (touched.indexed, touched.unchanged) == (0, 3)

    a.write_text("def alpha_value():\n    return 2\n\n\ndef delta_value():\n    return 4\n")
    (root / "pkg" / "b.py").unlink()
    changed = code.index(root)
    assert (changed.indexed, changed.unchanged, changed.removed) == (1, 1, 1)
    assert [h.start_line for h in code.symbol(root, "delta_value")] == [5]
    assert code.symbol(root, "BetaThing") == []
    assert code.search(root, "beta thing", limit=5) == []
    # the FTS rows of the deleted chunks are gone too, not only the chunk rows
    fts = code.db.conn().execute("SELECT count(*) FROM code_fts").fetchone()[0]
    chunks = code.db.conn().execute("SELECT count(*) FROM code_chunks").fetchone()[0]
    assert fts == chunks


def test_gitignore_is_honoured(code: CodeIndex, tmp_path: Path) -> None:
    root = tmp_path / "src"
    make_tree(root)
    (root / ".gitignore").write_text("*.md\nbuild/\n")
    (root / "pkg" / ".gitignore").write_text("b.py\n")
    (root / "build").mkdir()
    (root / "build" / "gen.py").write_text("def generated_thing():\n    pass\n")
    (root / "node_modules" / "lib").mkdir(parents=True)
    (root / "node_modules" / "lib" / "x.js").write_text("function vendored() {}\n")
    report = code.index(root)
    assert report.skipped == []
    files = {r[0] for r in code.db.conn().execute("SELECT path FROM code_files")}
    assert files == {"pkg/a.py", ".gitignore", "pkg/.gitignore"}
    paths = {h.path for h in code.search(root, "alpha value gitignore", limit=50)}
    assert "pkg/a.py" in paths
    assert not code.symbol(root, "BetaThing")
    assert not code.symbol(root, "generated_thing")
    assert not code.symbol(root, "vendored")

    (root / "pkg" / ".gitignore").write_text("")
    code.index(root)
    assert code.symbol(root, "BetaThing")[0].path == "pkg/b.py"


def test_identifier_splitting() -> None:
    assert split_identifier("getUserName") == ("get", "user", "name")
    assert split_identifier("get_user_name") == ("get", "user", "name")
    assert split_identifier("HTTPServer") == ("http", "server")
    assert split_identifier("parse") == ("parse",)
    query = fts_query("HTTPServer")
    assert query is not None and '"httpserver"' in query and '"http"' in query


def test_split_words_find_camel_case(code: CodeIndex, tmp_path: Path) -> None:
    root = tmp_path / "src"
    root.mkdir()
    (root / "server.py").write_text(
        "class HTTPServerFactory:\n    pass\n\n\ndef get_user_name(user):\n    return user\n"
    )
    code.index(root)
    assert code.search(root, "http server")[0].name == "HTTPServerFactory"
    assert code.search(root, "getUserName")[0].name == "get_user_name"
    assert code.search(root, "get_user_name")[0].name == "get_user_name"
