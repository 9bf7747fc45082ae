"""Several processes writing to one store at once: every write lands, none sees a lock error.

The writers run keyword-only (AIDE_MEMOIRE_EMBEDDING_MODEL=none): what is under test is
SQLite's locking across processes, and 1000 single-text encodings would only add CPU
time; the dense write path is covered by tests/engine/recall/recaller/test_recall_hybrid.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from aide_memoire import Memory

ENV = {**os.environ, "AIDE_MEMOIRE_EMBEDDING_MODEL": "none"}
WRITER = textwrap.dedent(
    """
    import sys
    from aide_memoire import Memory
    home, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with Memory(home) as m:
        for i in range(count):
            m.store(f"writer {tag} memory {i}: something worth keeping", namespace="shared",
                    tags=[tag])
    print("done", tag)
    """
)


def _writers(home: Path, count: int) -> list[subprocess.Popen[str]]:
    return [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), tag, str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for tag in ("a", "b")
    ]


def test_two_processes_store_500_each(home: Path) -> None:
    Memory(home).close()  # create the store first so both writers open an existing file
    procs = _writers(home, 500)
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err
        assert out.startswith("done")
    with Memory(home) as m:
        assert m.status().namespaces == {"shared": 1000}
        assert len(m.search(namespace="shared", tags=["a"], limit=1000)) == 500
        assert len(m.search(namespace="shared", tags=["b"], limit=1000)) == 500
        assert m.internals.db.conn().execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_two_processes_create_the_store_at_once(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    procs = _writers(home, 20)
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    with Memory(home) as m:
        assert m.status().memories == 40
