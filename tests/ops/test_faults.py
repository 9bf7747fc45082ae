"""Bad input and faults: each gets a clear error of the project's tree, nothing stored is
lost, and no raw driver error or traceback reaches the caller."""

from __future__ import annotations

import gc
import json
import math
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.engine.core.errors import (
    ForeignDatabase,
    InvalidInput,
    StoreBusy,
    StoreError,
    StoreFull,
)
from aide_memoire.engine.storage.migrations import APPLICATION_ID, SCHEMA_VERSION
from tests.clirun import Completed, invoke

NS = "project:faults"


def settings(home: Path, **extra: object) -> Settings:
    return Settings(home=home, embedding_model="none", **extra)  # type: ignore[arg-type]


def run_cli(home: Path, *args: str, stdin: str | None = None) -> Completed:
    """The CLI in this process (tests/clirun.py): these tests are about the messages and
    exit codes, not the process."""
    return invoke(home, *args, stdin=stdin)


def _crafted(path: Path) -> None:
    """A SQLite file with our application id and schema version but no tables."""
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    conn.commit()
    conn.close()


# -- crafted and damaged files ---------------------------------------------------------


def test_restore_of_a_crafted_file_is_refused_and_the_live_store_untouched(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with Memory(settings=settings(home)) as memory:
        kept = memory.store("the live store keeps this note", namespace=NS)
    before = (home / "memory.db").read_bytes()
    crafted = tmp_path / "crafted.db"
    _crafted(crafted)
    with pytest.raises(StoreError, match="tables are missing"):
        Memory.restore(crafted, settings=settings(home))
    assert (home / "memory.db").read_bytes() == before
    with Memory(settings=settings(home)) as memory:
        assert memory.get(kept, namespace=NS).content == "the live store keeps this note"
    out = run_cli(home, "snapshot", "restore", str(crafted))
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "tables are missing" in out.stderr


def test_opening_a_crafted_file_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _crafted(home / "memory.db")
    before = (home / "memory.db").read_bytes()
    with pytest.raises(ForeignDatabase, match="tables are missing"):
        Memory(settings=settings(home))
    assert (home / "memory.db").read_bytes() == before


# -- import ----------------------------------------------------------------------------

_RECORD: dict[str, object] = {
    "id": "0190f0e0a1b2c3d4e5f60718293a4b5c", "namespace": NS, "kind": "note",
    "content": "an imported note", "created_at": "2024-01-01T00:00:00Z",
    "updated_at": "2024-01-01T00:00:00Z",
}


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("importance", math.nan, "importance"),
        ("importance", 1e300, "importance"),
        ("utility", math.inf, "utility"),
        ("access_count", 2**70, "access_count"),
        ("position", 2**70, "position"),
        ("id", "", "id"),
        ("id", "x" * 10_000, "not a valid id"),
        ("observed_at", "0001-01-01T00:00:00Z", "observed_at"),
        ("created_at", "9999-12-31T23:59:59Z", "created_at"),
        ("metadata", "deep", "nested more than"),
        ("speaker", "s" * 5000, "speaker"),
    ],
)
def test_import_of_bad_values_is_refused_clearly(
    tmp_path: Path, field: str, value: object, words: str
) -> None:
    record = dict(_RECORD)
    if value == "deep":
        # json.dumps itself cannot write 3,000 levels: build the line by hand.
        line = json.dumps(record)[:-1] + ', "metadata": ' + '{"a": ' * 3000 + "1" + "}" * 3001
    else:
        record[field] = value
        line = json.dumps(record)  # NaN and Infinity as Python's json writes them
    home = tmp_path / "home"
    with Memory(settings=settings(home)) as memory:
        with pytest.raises(InvalidInput, match=words) as caught:
            memory.import_([line])
        assert "import line 1" in str(caught.value)
        assert memory.status().namespaces.get(NS, 0) == 0
    source = tmp_path / "bad.jsonl"
    source.write_text(line + "\n")
    out = run_cli(home, "import", str(source))
    assert out.returncode != 0
    assert "Traceback" not in out.stderr and "import line 1" in out.stderr


# -- times and nesting -----------------------------------------------------------------


@pytest.mark.parametrize("when", ["0001-01-01", "9999-12-31T23:59:59Z", "100000000000000000000"])
def test_extreme_dates_are_clear_errors(tmp_path: Path, when: str) -> None:
    home = tmp_path / "home"
    with Memory(settings=settings(home)) as memory:
        memory.store("a note from today", namespace=NS)
        with pytest.raises(InvalidInput, match="observed_at"):
            memory.store("a note from far away", namespace=NS, observed_at=when)
        with pytest.raises(InvalidInput, match="as_of"):
            memory.recall("note", namespace=NS, as_of=when)
        with pytest.raises(InvalidInput, match="since"):
            memory.recall("note", namespace=NS, since=when)
        # Nothing half-written: recall still works.
        assert len(memory.recall("note", namespace=NS)) == 1
    for args in (["store", "far", "--observed-at", when], ["recall", "far", "--as-of", when]):
        out = run_cli(home, *args)
        assert out.returncode != 0
        assert "Traceback" not in out.stderr and "OverflowError" not in out.stderr


def test_deep_metadata_is_a_clear_error(tmp_path: Path) -> None:
    deep: dict[str, object] = {}
    cursor = deep
    for _ in range(3000):
        cursor["a"] = {}
        cursor = cursor["a"]  # type: ignore[assignment]
    with Memory(settings=settings(tmp_path / "home")) as memory:
        with pytest.raises(InvalidInput, match="nested more than 32 levels"):
            memory.store("deep", namespace=NS, metadata=deep)
        shallow = {"a": {"b": {"c": [1, 2, {"d": "e"}]}}}
        stored = memory.store("shallow", namespace=NS, metadata=shallow)
        assert memory.get(stored, namespace=NS).metadata == shallow


# -- the driver boundary: locked, full, corrupt -----------------------------------------


_HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


def test_a_locked_store_is_store_busy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=settings(home, busy_timeout_ms=200)) as memory:
        memory.store("before the lock", namespace=NS)
        # Another process: POSIX locks never conflict within one process.
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLD, str(home / "memory.db")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            with pytest.raises(StoreBusy, match="write lock"):
                memory.store("while locked", namespace=NS)
        finally:
            holder.communicate("", timeout=30)
        memory.store("after the lock", namespace=NS)
        assert memory.status().namespaces[NS] == 2


def test_a_size_limit_is_store_full_and_keeps_what_was_stored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=settings(home)) as memory:
        memory.store("kept before the limit", namespace=NS)
        pages = memory.internals.db.conn().execute("PRAGMA page_count").fetchone()[0]
    with Memory(settings=settings(home, max_db_pages=pages + 2)) as memory:
        with pytest.raises(StoreFull, match="full"):
            memory.store_many([{"content": f"filler {i} " + "lorem ipsum " * 300}
                               for i in range(50)], namespace=NS)
        assert [h.content for h in memory.recall("kept limit", namespace=NS)] == [
            "kept before the limit"]


def test_a_corrupt_store_is_a_project_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=settings(home)) as memory:
        for i in range(40):
            memory.store(f"note {i} " + "text " * 200, namespace=NS)
    path = home / "memory.db"
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = b"\xa5" * (len(data) - page)  # every page but the first
    path.write_bytes(bytes(data))
    with pytest.raises(ForeignDatabase), Memory(settings=settings(home)) as memory:
        memory.store("one more", namespace=NS)
        memory.recall("note", namespace=NS)


# -- a full disk (a real tmpfs) ----------------------------------------------------------


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}): needs root")
    try:
        yield mount
    finally:
        # A store that failed to open on the full disk (the in-process CLI's) leaves its
        # connection to the garbage collector, held by a traceback cycle until collected.
        gc.collect()
        subprocess.run(["umount", str(mount)], check=True)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    fd = os.open(filler, os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_is_reported_as_full(tiny_disk: Path) -> None:
    home = tiny_disk / "home"
    with Memory(settings=settings(home)) as memory:
        kept = memory.store("stored while there was room", namespace=NS)
    filler = _fill(tiny_disk)
    for _ in range(2):  # a fresh process sees the same: full, not corrupt
        with pytest.raises(StoreFull, match="full"), Memory(settings=settings(home)) as memory:
            memory.store_many([{"content": f"more {i} " + "words " * 400}
                               for i in range(100)], namespace=NS)
    out = run_cli(home, "store", "one more " * 500, "-n", NS)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "full" in out.stderr and "corrupt" not in out.stderr
    filler.unlink()
    with Memory(settings=settings(home)) as memory:
        assert memory.get(kept, namespace=NS).content == "stored while there was room"
        assert memory.audit_verify().intact


def test_creating_a_store_on_a_full_disk_leaves_nothing(tiny_disk: Path) -> None:
    _fill(tiny_disk)
    home = tiny_disk / "home"
    with pytest.raises(StoreFull, match="full"):
        Memory(settings=settings(home))
    assert not (home / "memory.db").exists()
    out = run_cli(tiny_disk / "other", "status")
    assert out.returncode != 0 and "Traceback" not in out.stderr and "full" in out.stderr
    assert not (tiny_disk / "other" / "memory.db").exists()


def test_a_failed_store_on_a_full_disk_leaves_no_empty_home(tiny_disk: Path) -> None:
    _fill(tiny_disk)
    home = tiny_disk / "new" / "home"
    out = run_cli(home, "store", "a note that finds no room", "-n", NS)
    assert out.returncode != 0 and "full" in out.stderr
    assert not (tiny_disk / "new").exists(), list((tiny_disk / "new").rglob("*"))


def test_reads_on_a_full_disk_do_not_claim_a_write(tiny_disk: Path) -> None:
    home = tiny_disk / "home"
    with Memory(settings=settings(home)) as memory:
        memory.store_many([{"content": f"stored while there was room {i}"} for i in range(50)],
                          namespace=NS)
    filler = _fill(tiny_disk)
    try:
        for args in (["recall", "stored room", "-n", NS], ["status"], ["audit", "verify"],
                     ["export", "-n", NS], ["list", "-n", NS]):
            out = run_cli(home, *args)
            assert "nothing was written" not in out.stderr, (args, out.stderr)
            assert "Traceback" not in out.stderr, (args, out.stderr)
    finally:
        filler.unlink()


def test_a_read_error_is_worded_as_a_read() -> None:
    from aide_memoire.engine.storage.db import SqliteDatabase
    from aide_memoire.engine.storage.driver import load_driver

    driver = load_driver()
    db = SqliteDatabase.__new__(SqliteDatabase)  # the mapping alone: no file is needed for it
    db.path, db.driver, db.busy_timeout_ms = Path("/x/memory.db"), driver, 10
    # (message, extended result code) as SQLite raises them: mapped by the code alone.
    for text, code in (("database or disk is full", 13), ("database is locked", 5),
                       ("attempt to write a readonly database", 8), ("something else", 1)):
        error = driver.OperationalError(text)
        error.sqlite_errorcode = code  # type: ignore[attr-defined]
        read = str(db.translate(error, writing=False))
        write = str(db.translate(error))
        assert "nothing was written" not in read and "could not be read" in read, read
        assert "nothing was written" in write, write


# -- files written -----------------------------------------------------------------------


def test_export_files_are_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=settings(home)) as memory:
        memory.store("Ask alice@example.com about the invoice", namespace=NS)
    target = tmp_path / "export.jsonl"
    target.write_text("old")
    os.chmod(target, 0o644)
    out = run_cli(home, "export", "--reveal-pii", "-o", str(target))
    assert out.returncode == 0, out.stderr
    assert target.stat().st_mode & 0o777 == 0o600
    assert "alice@example.com" in target.read_text()
