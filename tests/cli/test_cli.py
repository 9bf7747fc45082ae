"""The CLI's commands end to end on a temp store, in this process (tests/clirun.py), and
once as a user runs it: a real process, the real model."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from aide_memoire import __version__
from tests.clirun import Completed, invoke

EXE = shutil.which("aide-memoire", path=str(Path(sys.executable).parent)) or "aide-memoire"


def run(home: Path, *args: str, stdin: str | bytes | None = None) -> Completed:
    return invoke(home, *args, stdin=stdin)


@pytest.mark.slow
def test_a_real_process_stores_and_recalls_with_the_model(home: Path) -> None:
    env = {**os.environ, "AIDE_MEMOIRE_HOME": str(home)}
    env.pop("AIDE_MEMOIRE_EMBEDDING_MODEL", None)  # what a user gets: the packaged model

    def spawn(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([EXE, *args], env=env, capture_output=True, text=True,
                              timeout=300)

    stored = spawn("store", "Alice prefers tabs over spaces", "-n", "user:alice", "--json")
    assert stored.returncode == 0, stored.stderr
    memory_id = json.loads(stored.stdout)["id"]
    recalled = spawn("recall", "which indentation does Alice like?", "-n", "user:alice",
                     "--json")
    hits = json.loads(recalled.stdout)["hits"]
    assert [h["id"] for h in hits] == [memory_id] and "dense" in hits[0]["ranks"]
    failed = spawn("recall", "x", "-n", "../x")
    assert failed.returncode == 2 and failed.stdout == ""
    assert "namespace '../x' is not allowed" in failed.stderr


def test_round_trip(home: Path) -> None:
    stored = run(home, "store", "Alice prefers tabs over spaces", "--namespace", "user:alice",
                 "--tags", "pref,style", "--importance", "0.9", "--json")
    assert stored.returncode == 0, stored.stderr
    memory_id = json.loads(stored.stdout)["id"]

    recalled = run(home, "recall", "tabs or spaces?", "--namespace", "user:alice", "--json")
    assert recalled.returncode == 0, recalled.stderr
    hits = json.loads(recalled.stdout)["hits"]
    assert [h["id"] for h in hits] == [memory_id]

    listed = run(home, "search", "--namespace", "user:alice", "--tags", "style", "--json")
    assert [m["id"] for m in json.loads(listed.stdout)["memories"]] == [memory_id]

    got = run(home, "get", memory_id, "--namespace", "user:alice", "--json")
    assert json.loads(got.stdout)["content"] == "Alice prefers tabs over spaces"

    status = run(home, "status", "--json")
    assert json.loads(status.stdout)["namespaces"] == {"user:alice": 1}

    forgot = run(home, "forget", memory_id, "--namespace", "user:alice")
    assert forgot.returncode == 0, forgot.stderr
    after = run(home, "recall", "tabs", "--namespace", "user:alice", "--json")
    assert json.loads(after.stdout)["hits"] == []
    assert stat.S_IMODE((home / "memory.db").stat().st_mode) == 0o600


def test_human_output_and_version(home: Path) -> None:
    run(home, "store", "the build uses make and a venv", "-n", "p")
    out = run(home, "recall", "build", "-n", "p")
    assert "the build uses make and a venv" in out.stdout
    assert "bm25 #1" in out.stdout
    version = run(home, "--version")
    assert __version__ in version.stdout


def test_stdin_and_invalid_utf8(home: Path) -> None:
    ok = run(home, "store", "-", "-n", "p", "--json", stdin="from stdin")
    assert ok.returncode == 0, ok.stderr
    bad = run(home, "store", "-", "-n", "p", stdin=b"\xff\xfe bad")
    assert bad.returncode == 2
    assert "not valid UTF-8" in bad.stderr
    assert bad.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["store", "", "-n", "p"], "content is empty"),
        (["store", "x", "-n", "../x"], "namespace '../x' is not allowed"),
        (["recall", "x", "-n", ""], "namespace must be a non-empty string"),
        (["recall", "x", "--limit", "0"], "limit must be"),
    ],
)
def test_errors_go_to_stderr_with_nonzero_exit(home: Path, args: list[str], message: str) -> None:
    result = run(home, *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_forget_missing_fails(home: Path) -> None:
    result = run(home, "forget", "nope", "-n", "p")
    assert result.returncode == 1
    assert "no memory 'nope'" in result.stderr


def test_export_import(home: Path, tmp_path: Path) -> None:
    run(home, "store", "exported memory", "-n", "p")
    out = tmp_path / "dump.jsonl"
    exported = run(home, "export", "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    other = tmp_path / "other"
    first = run(other, "import", str(out), "--json")
    assert json.loads(first.stdout)["added"] == 1
    second = run(other, "import", str(out), "--json")
    assert json.loads(second.stdout)["added"] == 0
    assert "exported memory" in run(other, "recall", "exported", "-n", "p").stdout
