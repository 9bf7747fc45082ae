"""Code index speed: indexing throughput, re-index after one change, query latency.

    python bench/code_index.py [SOURCE_FOLDER] [--json]

SOURCE_FOLDER defaults to the running interpreter's standard library. The folder is
copied to a temporary directory first (without __pycache__ and site-packages) so that
the bench can touch and edit a file without changing the original.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sysconfig
import tempfile
import time
from pathlib import Path

from aide_memoire.engine.code.index import CodeIndex
from aide_memoire.engine.storage.db import SqliteDatabase
from aide_memoire.logs import configure_logging

QUERIES = [
    "parse an email address",
    "read a zip file member",
    "http request headers",
    "json decode error",
    "thread pool executor shutdown",
    "compute md5 hash of a file",
    "escape html special characters",
    "getUserName",
    "HTTPServer",
    "socket timeout",
    "format a date as iso string",
    "walk a directory tree recursively",
    "retry with exponential backoff",
    "tokenize python source",
    "base64 encode bytes",
    "subprocess pipe communicate",
    "sqlite connection cursor",
    "unicode normalization",
    "deep copy of nested objects",
    "parse command line arguments",
]
SYMBOLS = ["dumps", "JSONDecoder", "urlparse", "Thread", "ArgumentParser", "Path", "open",
           "namedtuple", "HTTPConnection", "parseaddr"]  # fmt: skip


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", nargs="?", default=sysconfig.get_paths()["stdlib"])
    parser.add_argument("--json", action="store_true", help="print only the JSON document")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each query")
    args = parser.parse_args()
    configure_logging("warning")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "src"
        shutil.copytree(
            args.source, root, symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__", "site-packages"),
        )
        db = SqliteDatabase(Path(tmp) / "home" / "memory.db")
        code = CodeIndex(db)

        first = code.index(root)
        noop = code.index(root)

        target = next(iter(sorted(root.rglob("*.py"))))
        stat = target.stat()
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        touched = code.index(root)
        with target.open("a", encoding="utf-8") as fh:
            fh.write("\n\ndef bench_added_function():\n    return 42\n")
        edited = code.index(root)
        assert edited.indexed == 1, edited

        search_ms = [
            t for q in QUERIES for t in timed(lambda q=q: code.search(root, q), args.repeat)
        ]
        symbol_ms = [
            t for s in SYMBOLS for t in timed(lambda s=s: code.symbol(root, s), args.repeat)
        ]
        db_bytes = db.path.stat().st_size
        db.close()

    result = {
        "source": str(args.source),
        "files": first.files,
        "lines": first.lines,
        "chunks": first.chunks,
        "symbols": first.symbols,
        "skipped": len(first.skipped),
        "languages": first.languages,
        "index_seconds": first.seconds,
        "files_per_second": round(first.indexed / first.seconds, 1),
        "lines_per_second": round(first.lines / first.seconds),
        "noop_reindex_seconds": noop.seconds,
        "touch_one_file_reindex_seconds": touched.seconds,
        "edit_one_file_reindex_seconds": edited.seconds,
        "search_ms_p50": round(statistics.median(search_ms), 2),
        "search_ms_p95": round(percentile(search_ms, 0.95), 2),
        "symbol_ms_p50": round(statistics.median(symbol_ms), 2),
        "symbol_ms_p95": round(percentile(symbol_ms, 0.95), 2),
        "db_bytes": db_bytes,
    }
    if not args.json:
        width = max(len(k) for k in result)
        for key, value in result.items():
            print(f"{key:<{width}}  {value}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
