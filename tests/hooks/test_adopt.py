"""Adopting the namespace earlier versions used (``project:<folder>``)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from aide_memoire import Memory, Settings
from aide_memoire.cli.hook import run_hook
from aide_memoire.cli.main import cli
from aide_memoire.engine.core.projects import project_for

from .conftest import git_project


def open_store(home: Path) -> Memory:
    return Memory(settings=Settings(home=home, embedding_model="none"))


def test_session_start_adopts_the_one_legacy_namespace(home: Path, project: Path) -> None:
    found = project_for(project)
    with open_store(home) as memory:
        first = memory.store("Alice Martin owns the billing service", namespace=found.legacy)
        memory.store("Releases are tagged from main", namespace=found.legacy, tags=["decision"])
        memory.store_conversation([{"speaker": "user", "content": "ask Alice Martin first"}],
                                  namespace=found.legacy, session_id="old")
    text = run_hook("session-start", json.dumps({"session_id": "n", "cwd": str(project)})
                    .encode(), home)
    assert "Releases are tagged from main" in text
    with open_store(home) as memory:
        counts = memory.status().namespaces
        assert counts == {found.namespace: 3}
        assert memory.get(first, namespace=found.namespace).content.startswith("Alice")
        assert memory.recall("billing service owner", namespace=found.namespace)[0].id == first
        related = memory.related("Alice Martin", namespace=found.namespace)
        assert related  # the entity graph moved along
        assert memory.audit_verify().intact


def test_no_automatic_adoption_when_two_checkouts_share_the_old_name(
    home: Path, project: Path, tmp_path: Path
) -> None:
    other = project_for(git_project(tmp_path / "clients" / "app"))
    found = project_for(project)
    assert other.legacy == found.legacy
    with open_store(home) as memory:
        memory.store("Shared by two checkouts once", namespace=found.legacy)
        memory.store("The other checkout's own memory", namespace=other.namespace)
    run_hook("session-start", json.dumps({"session_id": "n", "cwd": str(project)}).encode(),
             home)
    with open_store(home) as memory:
        assert memory.status().namespaces.get(found.legacy) == 1
    # The person decides: the command moves it.
    runner = CliRunner()
    dry = runner.invoke(cli, ["--home", str(home), "project", "adopt", "--dir", str(project),
                              "--dry-run"])
    assert dry.exit_code == 0 and "would move 1 memories" in dry.output
    done = runner.invoke(cli, ["--home", str(home), "project", "adopt", "--dir", str(project)])
    assert done.exit_code == 0 and f"moved 1 memories from {found.legacy}" in done.output
    with open_store(home) as memory:
        assert memory.status().namespaces == {found.namespace: 1, other.namespace: 1}


def test_adopting_into_a_namespace_that_already_has_memories_merges(
    home: Path, project: Path
) -> None:
    found = project_for(project)
    with open_store(home) as memory:
        memory.store("Bob Stone reviews the API changes", namespace=found.legacy)
        memory.store("Bob Stone is on leave in May", namespace=found.namespace)
    result = CliRunner().invoke(cli, ["--home", str(home), "project", "adopt", "--dir",
                                      str(project)])
    assert result.exit_code == 0, result.output
    with open_store(home) as memory:
        assert memory.status().namespaces == {found.namespace: 2}
        entities = memory.internals.db.conn().execute(
            "SELECT namespace, mentions FROM entities WHERE name = 'bob stone'").fetchall()
        assert [tuple(e) for e in entities] == [(found.namespace, 2)]


def test_project_show(home: Path, project: Path) -> None:
    result = CliRunner().invoke(cli, ["--home", str(home), "project", "show", "--dir",
                                      str(project)])
    assert result.exit_code == 0
    assert project_for(project).namespace in result.output and "capture    on" in result.output
