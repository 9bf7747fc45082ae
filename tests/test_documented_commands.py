"""The commands README.md and docs/cli.md show, run as a new user would run them.

The commands are read from the docs' code blocks (never retyped here), run in order in a
temporary data home with the real model, and a run fails on any traceback or on an exit
status the doc does not predict. A doc says what the test must not run, or what exit it
expects, in the doc itself:

- ``<!-- docs-test: skip (why) -->`` on the line before a code block: not run at all
  (``make serve`` runs until stopped, ``make test`` is this suite);
- ``# docs-test: skip`` at the end of a shell line: that line is not run;
- ``# docs-test: exit N`` at the end of a shell line: that line must exit with N.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/cli.md")
SHELLS = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
SKIP_BLOCK = re.compile(r"<!--\s*docs-test:\s*skip\b[^>]*-->\s*$")
MARK = re.compile(r"#\s*docs-test:\s*(skip|exit\s+(\d+))\b.*$")


@dataclass(frozen=True)
class Command:
    doc: str
    line: int
    language: str  # "sh" or "python"
    text: str
    expect: int


def extract(doc: str) -> list[Command]:
    """Every runnable command of ``doc``: shell lines and Python blocks, in order."""
    source = (ROOT / doc).read_text(encoding="utf-8")
    commands: list[Command] = []
    for match in FENCE.finditer(source):
        language, body = match.group(1).lower(), match.group(2)
        before = source[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if SKIP_BLOCK.search(before):
            continue
        first_line = source.count("\n", 0, match.start()) + 2
        if language == "python":
            commands.append(Command(doc, first_line, "python", body, 0))
        elif language in SHELLS:
            commands += _shell_lines(doc, first_line, body)
    return commands


def _shell_lines(doc: str, first_line: int, body: str) -> list[Command]:
    out: list[Command] = []
    pending = ""
    for offset, raw in enumerate(body.splitlines()):
        line = raw.removeprefix("$ ").rstrip()
        if line.endswith("\\"):  # a command continued on the next line
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        mark = MARK.search(line)
        if mark and mark.group(1) == "skip":
            continue
        expect = int(mark.group(2)) if mark and mark.group(2) else 0
        out.append(Command(doc, first_line + offset, "sh", line, expect))
    return out


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["AIDE_MEMOIRE_HOME"] = str(home)
    env.pop("AIDE_MEMOIRE_EMBEDDING_MODEL", None)  # what a user gets: the packaged model
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run(command: Command, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if command.language == "python":
        argv = [sys.executable, "-c", command.text]
    else:
        argv = ["bash", "-o", "pipefail", "-c", command.text]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("doc", DOCS)
def test_documented_commands_run_as_documented(doc: str, tmp_path: Path) -> None:
    commands = extract(doc)
    # The extraction itself must find the docs' commands, or the test would pass on nothing.
    assert len(commands) >= 4, [c.text for c in commands]
    env = _env(tmp_path / "home")
    problems = []
    for command in commands:
        done = _run(command, tmp_path, env)
        where = f"{doc}:{command.line}: {command.text.splitlines()[0]}"
        if "Traceback (most recent call last)" in done.stderr + done.stdout:
            problems.append(f"{where}\n  traceback:\n{done.stderr[-2000:]}")
        elif done.returncode != command.expect:
            problems.append(f"{where}\n  exit {done.returncode}, the doc predicts "
                            f"{command.expect}\n  stderr: {done.stderr.strip()[-800:]}")
    assert not problems, "\n".join(problems)


def test_the_markers_are_understood() -> None:
    commands = _shell_lines("x.md", 1, "\n".join([
        "$ aide-memoire status",
        "aide-memoire store a \\",
        "  --tags b",
        "aide-memoire serve  # docs-test: skip (runs until stopped)",
        "aide-memoire get nope  # docs-test: exit 1",
        "# a comment",
    ]))
    assert [(" ".join(c.text.split()), c.expect) for c in commands] == [
        ("aide-memoire status", 0),
        ("aide-memoire store a --tags b", 0),
        ("aide-memoire get nope # docs-test: exit 1", 1),
    ]
