"""docs/configuration.md and docs/cli.md are generated; these fail when either drifts."""

from __future__ import annotations

from pathlib import Path

import pytest

from aide_memoire.engine.core.settings import Settings
from aide_memoire.refdocs import main, render_cli_md, render_configuration_md

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_configuration_md_is_generated_from_settings() -> None:
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert page == render_configuration_md(), (
        "docs/configuration.md is stale: run "
        "`python -m aide_memoire.refdocs configuration > docs/configuration.md`"
    )
    for name in Settings.model_fields:
        assert f"`AIDE_MEMOIRE_{name.upper()}`" in page


def test_cli_md_is_generated_from_help() -> None:
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert page == render_cli_md(), (
        "docs/cli.md is stale: run `python -m aide_memoire.refdocs cli > docs/cli.md`"
    )
    # Commands that other modules register are in it too.
    for title in ("aide-memoire serve", "aide-memoire review decide", "aide-memoire code-index"):
        assert f"## {title}\n" in page


def test_the_generator_refuses_an_unknown_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nope"]) == 2
    assert "usage:" in capsys.readouterr().err
