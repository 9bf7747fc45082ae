"""The CLI's output rules (cli/output.py), checked across commands, in process.

Errors are one line on stderr and never on stdout; exit codes follow the documented
table; counts read as words; recall's relative score is not printed as if it meant
something; ``store -`` drops exactly the shell's final newline.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from aide_memoire import Memory, Settings
from aide_memoire.cli.main import cli
from aide_memoire.cli.output import EXIT_CODES, plural

from ..clirun import outside_projects

DOCS_CLI = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
UNKNOWN = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("AIDE_MEMOIRE_EMBEDDING_MODEL", "none")
    monkeypatch.setenv("AIDE_MEMOIRE_HOME", str(tmp_path / "home"))
    yield tmp_path / "home"


def run(*args: str, stdin: bytes | str | None = None) -> Result:
    with outside_projects():  # the default namespace is then 'default'
        return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False,
                                  env={"CLAUDE_PROJECT_DIR": None})


def _store(home: Path, text: str, namespace: str = "default") -> str:
    with Memory(settings=Settings(home=home, embedding_model="none")) as memory:
        return memory.store(text, namespace=namespace)


FAILURES = [
    # (argv, exit code, words the message must hold)
    (["get", UNKNOWN], 1, ["no memory"]),
    (["forget", UNKNOWN], 1, ["no memory"]),
    (["forget"], 2, ["memory ID", "--tag"]),
    (["feedback", UNKNOWN, "helpful"], 1, [UNKNOWN]),
    (["review", "decide", UNKNOWN, "approve"], 1, ["aide-memoire review list"]),
    (["store", ""], 2, ["empty"]),
    (["recall", "anything", "-n", "not a namespace!"], 2, ["namespace"]),
    (["snapshot", "restore", "no-such-snapshot.db"], 2, ["snapshot list"]),
    (["promote", "{active}"], 1, ["active", "nothing to promote"]),
]


@pytest.mark.parametrize(("argv", "code", "words"), FAILURES, ids=lambda v: str(v)[:40])
def test_an_error_is_one_line_on_stderr_with_its_exit_code(
    home: Path, argv: list[str], code: int, words: list[str]
) -> None:
    active = _store(home, "an active memory")
    result = run(*[a.replace("{active}", active) for a in argv])
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert result.stdout == ""  # stdout is for results only
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aide-memoire: error: "), result.stderr
    for word in words:
        assert word in lines[0]
    # Engine messages name no Python method, e.g. "review_queue()".
    assert not re.search(r"\b[a-z]+_[a-z_]+\(\)", lines[0]), lines[0]


@pytest.mark.parametrize("argv", [["forget", UNKNOWN], ["promote", "{active}"]])
def test_with_json_a_failed_result_is_json_on_stdout_and_the_error_on_stderr(
    home: Path, argv: list[str]
) -> None:
    active = _store(home, "an active memory")
    result = run(*[a.replace("{active}", active) for a in argv], "--json")
    assert result.exit_code == 1
    assert isinstance(json.loads(result.stdout), dict)
    assert result.stderr.startswith("aide-memoire: error: ")


@pytest.mark.parametrize(("count", "word", "expected"), [
    (0, "memory", "0 memories"), (1, "memory", "1 memory"), (2, "memory", "2 memories"),
    (1, "summary", "1 summary"), (3, "summary", "3 summaries"), (1, "snapshot", "1 snapshot"),
    (2, "snapshot", "2 snapshots"),
])
def test_plural(count: int, word: str, expected: str) -> None:
    assert plural(count, word) == expected


def test_counts_in_command_output_agree_with_their_number(home: Path, tmp_path: Path) -> None:
    _store(home, "deploys go through ops/deploy.sh")
    outputs = [
        run("export", "-o", str(tmp_path / "one.jsonl")).stderr,
        run("forget", "--query", "deploys", "--dry-run").stdout,
        run("snapshot", "create").stdout,
        run("snapshot", "rotate", "--keep", "1").stdout,
    ]
    text = "\n".join(outputs)
    assert "exported 1 memory" in text and "would forget 1 memory" in text
    assert not re.search(r"\b1 (memories|summaries|snapshots|items|events)\b", text), text
    _store(home, "a second one")
    assert "exported 2 memories" in run("export", "-o", str(tmp_path / "two.jsonl")).stderr


def test_recall_text_shows_ranks_not_a_relative_score(home: Path) -> None:
    _store(home, "deploys go through ops/deploy.sh")
    _store(home, "the deploy window is Tuesday")
    result = run("recall", "deploy")
    assert result.exit_code == 0
    assert "score" not in result.stdout
    assert "bm25 #1" in result.stdout and "bm25 #2" in result.stdout
    hits = json.loads(run("recall", "deploy", "--json").stdout)["hits"]
    assert all("score" in hit for hit in hits)  # the number stays in the JSON


@pytest.mark.parametrize(("sent", "stored"), [
    (b"one line\n", "one line"),
    (b"windows line\r\n", "windows line"),
    (b"no newline", "no newline"),
    (b"two lines\nkept\n", "two lines\nkept"),
    (b"blank line kept\n\n", "blank line kept\n"),
    (b"  spaces kept  \n", "  spaces kept  "),
])
def test_store_dash_drops_exactly_one_final_newline(home: Path, sent: bytes,
                                                     stored: str) -> None:
    result = run("store", "-", "--json", stdin=sent)
    assert result.exit_code == 0, result.stderr
    memory_id = json.loads(result.stdout)["id"]
    got = json.loads(run("get", memory_id, "--json").stdout)
    assert got["content"] == stored


def test_every_exit_code_is_documented() -> None:
    page = DOCS_CLI.read_text(encoding="utf-8")
    for code, meaning in EXIT_CODES.items():
        assert f"| {code} | {meaning} |" in page
