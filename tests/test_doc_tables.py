"""Every hand-written doc table that lists tools, settings, doctor checks or benchmark
scripts is checked against the code, so that a table cannot fall behind it.

(docs/tools.md, docs/cli.md and docs/configuration.md are generated and compared whole by
their own tests; this covers the tables written by hand around them. docs/mcp.md's tool
table once listed 17 of 19 tools because only the generated page was compared.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings
from aide_memoire.mcp.registry import TOOLS

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
TICKED = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Table:
    page: str
    line: int
    header: list[str]
    rows: list[list[str]]


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def tables(path: Path) -> list[Table]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Table] = []
    i = 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.fullmatch(r"\|[\s:|-]+\|", lines[i + 1].strip()):
            start, header, rows = i, _cells(lines[i]), []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            found.append(Table(path.name, start + 1, header, rows))
        else:
            i += 1
    return found


def tables_headed(first: str) -> list[Table]:
    return [t for page in PAGES for t in tables(page) if t.header[0].lower() == first]


def _first_column_names(table: Table) -> list[str]:
    return [name for row in table.rows for name in TICKED.findall(row[0])]


def test_the_table_parser_finds_the_known_tables() -> None:
    # The checks below must not pass because they found nothing to check.
    assert len(tables_headed("tool")) >= 2
    assert len(tables_headed("setting")) >= 2
    assert tables_headed("check") and tables_headed("script")


@pytest.mark.parametrize("table", tables_headed("tool"), ids=lambda t: f"{t.page}:{t.line}")
def test_every_tool_table_lists_exactly_the_registry(table: Table) -> None:
    listed = [n.strip("[]") for n in _first_column_names(table)]
    assert sorted(listed) == sorted(spec.name for spec in TOOLS), (
        f"{table.page}:{table.line} lists {len(listed)} tools, the registry has {len(TOOLS)}"
    )


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "unset"
    return str(value)


@pytest.mark.parametrize("table", tables_headed("setting"), ids=lambda t: f"{t.page}:{t.line}")
def test_every_setting_table_names_real_settings_with_their_defaults(table: Table) -> None:
    assert table.header[1].lower() == "default"
    fields = Settings.model_fields
    for row in table.rows:
        name = TICKED.findall(row[0])[0].removeprefix("AIDE_MEMOIRE_").lower()
        assert name in fields, f"{table.page}:{table.line}: no setting {name!r}"
        default = fields[name].default
        cell = row[1].strip("`")
        if isinstance(default, int | float) and not isinstance(default, bool):
            assert float(cell) == float(default), f"{name}: doc says {cell}, code {default}"
        else:
            assert cell == _shown(default), f"{name}: doc says {cell}, code {default}"


def test_the_doctor_check_table_lists_every_check(tmp_path: Path) -> None:
    [table] = tables_headed("check")
    with Memory(settings=Settings(home=tmp_path / "home", embedding_model="none")) as memory:
        names = [check.name for check in memory.doctor().checks]
    assert [row[0].strip("`") for row in table.rows] == names


def test_the_benchmark_table_lists_every_script() -> None:
    [table] = tables_headed("script")
    listed = sorted(Path(name).name for name in _first_column_names(table))
    scripts = sorted(p.name for p in (ROOT / "bench").glob("*.py") if not p.name.startswith("_"))
    assert listed == scripts
