"""The code index's rows: roots, files, chunks (and their FTS5 documents), symbols, prose
pages and their links. Every write takes the caller's open transaction, so a file's rows
change together."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..protocol import Connection
from ..rows import inserted_rowid
from ..sqlite_steps import code_index_present, ensure_code_index

__all__ = [
    "add_root", "chunk_ids", "counts", "delete_file", "file_id", "file_paths", "files",
    "index_chunk", "insert_chunk", "insert_file", "insert_links", "insert_page",
    "insert_symbol", "languages", "mark_indexed", "needs_root", "page_anchors", "page_links",
    "root_id",
    "root_path", "touch_files",
]


def root_id(conn: Connection, path: str) -> int | None:
    """The root's id; None when it was never indexed (or the store never indexed code)."""
    if not code_index_present(conn):
        return None
    found = conn.execute("SELECT id FROM code_roots WHERE path = ?", (path,)).fetchone()
    return int(found[0]) if found else None


def needs_root(conn: Connection, path: str) -> bool:
    """Whether ``add_root`` has anything to write for ``path``: a new root, or a store
    indexed before the prose pages' tables existed."""
    return root_id(conn, path) is None or not code_index_present(conn, "code_doc_pages")


def add_root(tx: Connection, path: str) -> int:
    """The root's id, made with the index's tables (``IF NOT EXISTS``) inside ``tx``: two
    processes indexing at once both succeed, and a failure leaves none."""
    ensure_code_index(tx)
    tx.execute("INSERT OR IGNORE INTO code_roots (path) VALUES (?)", (path,))
    return int(tx.execute("SELECT id FROM code_roots WHERE path = ?", (path,)).fetchone()[0])


def root_path(conn: Connection, root: int) -> str:
    return str(conn.execute("SELECT path FROM code_roots WHERE id = ?", (root,)).fetchone()[0])


def files(conn: Connection, root: int) -> Iterator[tuple[int, str, int, int, str, str]]:
    """(id, path, size, mtime_ns, hash, parser) of each indexed file of the root."""
    for fid, rel, size, mtime, digest, parser in conn.execute(
        "SELECT id, path, size, mtime_ns, hash, parser FROM code_files WHERE root_id = ?",
        (root,),
    ):
        yield int(fid), str(rel), int(size), int(mtime), str(digest), str(parser)


def file_paths(conn: Connection, root: int) -> set[str]:
    return {str(p) for (p,) in conn.execute(
        "SELECT path FROM code_files WHERE root_id = ?", (root,))}


def file_id(tx: Connection, root: int, path: str) -> int | None:
    found = tx.execute("SELECT id FROM code_files WHERE root_id = ? AND path = ?",
                       (root, path)).fetchone()
    return int(found[0]) if found else None


def touch_files(tx: Connection, touched: Iterable[tuple[int, int, int]]) -> None:
    """(size, mtime_ns, file id) of files whose bytes did not change."""
    tx.executemany("UPDATE code_files SET size = ?, mtime_ns = ? WHERE id = ?", list(touched))


def mark_indexed(tx: Connection, root: int, stamp: str) -> None:
    tx.execute("UPDATE code_roots SET indexed_at = ? WHERE id = ?", (stamp, root))


def chunk_ids(tx: Connection, file: int) -> list[int]:
    return [int(r[0]) for r in tx.execute("SELECT id FROM code_chunks WHERE file_id = ?",
                                          (file,))]


def delete_file(tx: Connection, file: int, chunks: Sequence[int]) -> None:
    """A file's rows, its chunks' (``chunks``) FTS5 documents first: code_fts is
    contentless, so its rows do not follow the cascade."""
    tx.executemany("DELETE FROM code_fts WHERE rowid = ?", [(i,) for i in chunks])
    tx.execute("DELETE FROM code_doc_links WHERE file_id = ?", (file,))
    tx.execute("DELETE FROM code_doc_pages WHERE file_id = ?", (file,))
    tx.execute("DELETE FROM code_symbols WHERE file_id = ?", (file,))
    tx.execute("DELETE FROM code_chunks WHERE file_id = ?", (file,))
    tx.execute("DELETE FROM code_files WHERE id = ?", (file,))


def insert_file(tx: Connection, values: Sequence[Any]) -> int:
    """(root_id, path, language, parser, hash, size, mtime_ns, lines, indexed_at)."""
    return inserted_rowid(tx.execute(
        "INSERT INTO code_files (root_id, path, language, parser, hash, size, "
        "mtime_ns, lines, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", tuple(values)))


def insert_chunk(tx: Connection, values: Sequence[Any]) -> int:
    """(root_id, file_id, language, kind, name, start_line, end_line, text)."""
    return inserted_rowid(tx.execute(
        "INSERT INTO code_chunks (root_id, file_id, language, kind, name, "
        "start_line, end_line, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", tuple(values)))


def index_chunk(tx: Connection, chunk: int, columns: Sequence[str]) -> None:
    """The chunk's FTS5 document: its CODE_FTS_COLUMNS' texts, in order."""
    tx.execute("INSERT INTO code_fts (rowid, name, signature, doc, body, path) "
               "VALUES (?, ?, ?, ?, ?, ?)", (chunk, *columns))


def insert_symbol(tx: Connection, values: Sequence[Any]) -> None:
    """(root_id, file_id, chunk_id, name, qualified_name, kind, start_line, end_line,
    signature)."""
    tx.execute(
        "INSERT INTO code_symbols (root_id, file_id, chunk_id, name, qualified_name, "
        "kind, start_line, end_line, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        tuple(values))


def insert_page(tx: Connection, values: Sequence[Any]) -> None:
    """(file_id, root_id, title, front matter JSON, anchors JSON)."""
    tx.execute("INSERT INTO code_doc_pages (file_id, root_id, title, front_matter, anchors) "
               "VALUES (?, ?, ?, ?, ?)", tuple(values))


def insert_links(tx: Connection, rows: Iterable[Sequence[Any]]) -> None:
    """(root_id, file_id, line, text, target, anchor, style) per link."""
    tx.executemany(
        "INSERT INTO code_doc_links (root_id, file_id, line, text, target, anchor, style) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)", [tuple(r) for r in rows])


def counts(conn: Connection, root: int) -> dict[str, int]:
    """Files, chunks and symbols of the root."""
    return {table: int(conn.execute(f"SELECT count(*) FROM code_{table} WHERE root_id = ?",
                                    (root,)).fetchone()[0])
            for table in ("files", "chunks", "symbols")}


def languages(conn: Connection, root: int) -> Iterator[tuple[str, str, int]]:
    """(language, parser, files) of the root, by language."""
    for language, parser, n in conn.execute(
        "SELECT language, parser, count(*) FROM code_files WHERE root_id = ? "
        "GROUP BY language, parser ORDER BY language", (root,),
    ):
        yield str(language), str(parser), int(n)


def page_anchors(conn: Connection, root: int) -> Iterator[tuple[str, str]]:
    """(page path, anchors JSON) of the root's prose pages, shortest path first."""
    for path, raw in conn.execute(
        "SELECT f.path, p.anchors FROM code_doc_pages p JOIN code_files f ON f.id = p.file_id "
        "WHERE p.root_id = ? ORDER BY length(f.path), f.path", (root,),
    ):
        yield str(path), str(raw)


def page_links(conn: Connection, root: int, path: str | None,
               ) -> Iterator[tuple[str, int, str, str, str, str]]:
    """(page, line, text, target, anchor, style) of the root's links (of one page)."""
    sql = ("SELECT f.path, l.line, l.text, l.target, l.anchor, l.style FROM code_doc_links l "
           "JOIN code_files f ON f.id = l.file_id WHERE l.root_id = ?")
    args: list[object] = [root]
    if path is not None:
        sql += " AND f.path = ?"
        args.append(path)
    for page, line, text, target, anchor, style in conn.execute(
            sql + " ORDER BY f.path, l.line, l.id", args):
        yield str(page), int(line), str(text), str(target), str(anchor), str(style)
