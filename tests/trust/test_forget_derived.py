"""Forget follows derived data (summaries, facts, entities, graph) and finishes its purge
after a long reader, checked on the bytes of the database file and its WAL."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from aide_memoire import Memory
from aide_memoire.engine.core import clock
from aide_memoire.engine.core.errors import NotFound
from aide_memoire.engine.lifecycle.summaries import prepare_summary, write_summary
from aide_memoire.engine.storage.store import content_hash

from .conftest import keyword_settings, owed, rare_word, start_reader

NS = "project:derived"


def _file_bytes(home: Path) -> bytes:
    return b"".join(
        (home / name).read_bytes() for name in ("memory.db", "memory.db-wal")
        if (home / name).exists()
    )


def _word() -> str:
    return rare_word("qx")


def _summarise(memory: Memory, ids: list[str]) -> str:
    """A consolidation summary of ``ids`` written by the same code an approval runs."""
    records = [memory.get(i, namespace=NS) for i in ids]
    evidence = {
        "sources": ids,
        "hashes": {r.id: content_hash(r.content) for r in records},
        "pieces": [[r.id, 0, len(r.content), clock.format_time(r.created_at)] for r in records],
        "tags": [],
    }
    ctx = memory.internals.context
    prepared = prepare_summary(ctx, NS, evidence)  # as an approval: before the lock
    with memory.internals.db.write() as tx:
        return write_summary(ctx, tx, NS, evidence, reason="test", prepared=prepared)


def test_forgetting_a_source_forgets_the_summary_that_quotes_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    secret_word = _word()
    with Memory(settings=keyword_settings(home)) as memory:
        ids = [
            memory.store(f"The billing export runs nightly and uses {secret_word}", namespace=NS),
            memory.store("The billing export writes CSV files to the ledger bucket", namespace=NS),
            memory.store("The billing export retries three times on failure", namespace=NS),
        ]
        summary = _summarise(memory, ids)
        assert secret_word in memory.get(summary, namespace=NS).content
        assert all(memory.get(i, namespace=NS).status == "archived" for i in ids)
        report = memory.forget_matching(namespace=NS, query=secret_word)
        # The summary matches the query itself; either way it goes, once.
        assert set(report.ids) | set(report.derived) == {ids[0], summary} and report.purged
        assert report.forgotten + len(report.derived) == 2
        with pytest.raises(NotFound):
            memory.get(summary, namespace=NS)
        # The summary's other sources are not lost with it: they are active again.
        assert [memory.get(i, namespace=NS).status for i in ids[1:]] == ["active", "active"]
        assert memory.recall("billing export", namespace=NS)
        assert memory.audit_verify().intact
    assert secret_word.encode() not in _file_bytes(home)


def test_forget_by_id_also_follows_summaries(tmp_path: Path) -> None:
    home = tmp_path / "home"
    secret_word = _word()
    with Memory(settings=keyword_settings(home)) as memory:
        ids = [memory.store(f"Release train {n} ships on Thursday {secret_word}", namespace=NS)
               for n in ("alpha", "beta")]
        summary = _summarise(memory, ids)
        assert memory.forget(ids[1], namespace=NS)
        with pytest.raises(NotFound):
            memory.get(summary, namespace=NS)
        assert memory.get(ids[0], namespace=NS).status == "active"
        actions = [e.action for e in memory.audit_history(summary)]
        assert actions[-1] == "forget"
        memory.forget(ids[0], namespace=NS)
    assert secret_word.encode() not in _file_bytes(home)


def _entities(memory: Memory) -> set[str]:
    return {str(r[0]).lower() for r in memory.internals.db.conn().execute(
        "SELECT display FROM entities WHERE namespace = ?", (NS,))}


def test_forget_removes_facts_entities_and_edges(tmp_path: Path) -> None:
    home = tmp_path / "home"
    surname = "Qorvath" + secrets.token_hex(3)
    with Memory(settings=keyword_settings(home)) as memory:
        kept = memory.store("Ingrid Dahl works at Northwind in Oslo", namespace=NS)
        gone = memory.store(f"Ingrid Dahl met Lukas {surname} in Oslo", namespace=NS)
        assert any(surname.lower() in e for e in _entities(memory))
        assert memory.forget(gone, namespace=NS)
        conn = memory.internals.db.conn()
        assert not any(surname.lower() in e for e in _entities(memory))
        assert conn.execute("SELECT count(*) FROM facts WHERE memory_id = ?",
                            (gone,)).fetchone()[0] == 0
        edges = conn.execute(
            "SELECT count(*) FROM entity_edges WHERE a NOT IN (SELECT id FROM entities) "
            "OR b NOT IN (SELECT id FROM entities)").fetchone()[0]
        assert edges == 0
        assert memory.get(kept, namespace=NS)
    assert surname.encode() not in _file_bytes(home)


def test_the_entity_graph_follows_an_update(tmp_path: Path) -> None:
    home = tmp_path / "home"
    old_name = "Zabrowski" + secrets.token_hex(3)
    with Memory(settings=keyword_settings(home)) as memory:
        memory_id = memory.store(f"Tomas {old_name} moved to Lisbon", namespace=NS)
        assert any(old_name.lower() in e for e in _entities(memory))
        memory.update(memory_id, namespace=NS, content="Aiko Tanaka moved to Quito")
        names = _entities(memory)
        assert not any(old_name.lower() in e for e in names)
        assert any("aiko" in e for e in names)  # extracted again from the new text
        mentions = memory.internals.db.conn().execute(
            "SELECT count(*) FROM memory_entities me JOIN memories m ON m.rowid = me.memory_rowid "
            "WHERE m.id = ?", (memory_id,)).fetchone()[0]
        assert mentions >= 1
        assert memory.audit_verify().intact


@pytest.mark.parametrize("then", ["write", "close", "open"])
def test_a_purge_held_up_by_a_reader_is_finished_later(tmp_path: Path, then: str) -> None:
    home = tmp_path / "home"
    secret_word = _word()
    memory = Memory(settings=keyword_settings(home))
    try:
        target = memory.store(f"The offsite box is labelled {secret_word} in the ledger",
                              namespace=NS)
        memory.store("An unrelated note about lunch", namespace=NS)
        memory.internals.db.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        reader = start_reader(home)
        report = memory.forget_matching(namespace=NS, query=secret_word)
        assert report.forgotten == 1 and report.purged is False
        assert owed(home) == 1  # recorded in the file, with the delete
        assert secret_word.encode() in _file_bytes(home)  # the reader's pages hold it still
        reader.communicate("", timeout=30)
        assert reader.stdout is not None and reader.stdout.closed
        if then == "write":
            memory.store("A later note after the reader left", namespace=NS)
        elif then == "close":
            memory.close()
        else:
            memory.close = lambda: None  # type: ignore[method-assign]  # a crash: no close
            memory.internals.db.commit_hooks.clear()
            with Memory(settings=keyword_settings(home)):
                pass
        assert owed(home) == 0
        assert secret_word.encode() not in _file_bytes(home)
        with pytest.raises(NotFound):
            Memory(settings=keyword_settings(home)).get(target, namespace=NS)
    finally:
        memory.internals.db.close()
