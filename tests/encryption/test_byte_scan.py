"""With encryption on, after storing, recalling, updating, forgetting and snapshotting
(the real model writing real vectors), no stored word, no vector's bytes and no tag
appears in the database file, its WAL, its shm, its snapshots or the logs.

The workload runs in its own process with debug logging, so its log lines (stderr) are
scanned too; it copies the live files while the store is open and the WAL still holds
the last writes (on close SQLite folds the WAL in and removes it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from aide_memoire.engine.ops import encrypt as ops

from .conftest import Keyed, files_of

# Words made up for the test (each a class of its own: plain, stemmed form, digits,
# non-ASCII, tag, metadata value), so a hit cannot come from anything but our text.
WORDS = ["zorblaxian", "quintafrond", "vemmerlisk", "plooberwick", "kryzzanthol",
         "marvendoux", "ondrecalyx", "trelliphant"]
TAGS = ["tagulvendra", "tagspirrow"]
META = "metavoskrane"
UPDATED = "glimmerhaust"
NON_ASCII = "Żółwiątkowo"

WORKLOAD = textwrap.dedent(
    """
    import json, shutil, sys
    from pathlib import Path
    from aide_memoire import Memory
    from aide_memoire.engine.core.settings import Settings
    from aide_memoire.logs import configure_logging
    configure_logging("debug")
    spec = json.loads(sys.argv[1])
    home = Path(spec["home"])
    with Memory(settings=Settings.from_env()) as m:
        ids = [m.store(f"the {w} ledger of {w} lives with {spec['non_ascii']} number {i}4417",
                       namespace="p", tags=spec["tags"], metadata={"client": spec["meta"]})
               for i, w in enumerate(spec["words"])]
        m.recall(f"where does the {spec['words'][0]} ledger live?", namespace="p")
        m.update(ids[0], namespace="p", content=f"the {spec['updated']} ledger moved")
        m.forget(ids[1], namespace="p")
        m.snapshot()
        m.store(f"after the snapshot, {spec['words'][2]} again", namespace="p")
        conn = m.internals.db.conn()
        tables = [r[0] for r in conn.execute(
            "SELECT table_name FROM vector_spaces")]
        vectors = [bytes(r[0]).hex() for t in tables
                   for r in conn.execute(f"SELECT embedding FROM {t}")]
        live = Path(spec["live_copy"])
        live.mkdir()
        for name in ("memory.db", "memory.db-wal", "memory.db-shm"):
            if (home / name).exists():
                shutil.copyfile(home / name, live / name)
        print(json.dumps({"vectors": vectors}))
    """
)


def _needles(vectors: list[bytes]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for word in [*WORDS, *TAGS, META, UPDATED, NON_ASCII, "4417"]:
        found[word] = word.encode()
        found[word + " (utf-16)"] = word.encode("utf-16-le")
    for i, vector in enumerate(vectors):
        # Any 16 bytes of a vector (4 floats) would show it was stored in the clear.
        for start in range(0, len(vector) - 16, 64):
            found[f"vector {i} bytes {start}"] = vector[start:start + 16]
    return found


def test_no_stored_word_vector_or_tag_in_any_file_or_log(encrypted: Keyed,
                                                         tmp_path: Path) -> None:
    live_copy = tmp_path / "live-copy"
    spec = {"home": str(encrypted.home), "words": WORDS, "tags": TAGS, "meta": META,
            "updated": UPDATED, "non_ascii": NON_ASCII, "live_copy": str(live_copy)}
    env = {**os.environ, **encrypted.env}
    env.pop("AIDE_MEMOIRE_EMBEDDING_MODEL")  # the real model: real vectors
    done = subprocess.run([sys.executable, "-c", WORKLOAD, json.dumps(spec)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    vectors = [bytes.fromhex(v) for v in json.loads(done.stdout.splitlines()[-1])["vectors"]]
    assert len(vectors) >= len(WORDS) and all(len(v) == 384 * 4 for v in vectors)

    scanned = {f"home/{k}": v for k, v in files_of(encrypted.home).items()}
    scanned |= {f"while open/{k}": v for k, v in files_of(live_copy).items()}
    scanned["stderr (debug logs)"] = done.stderr.encode()
    names = set(scanned)
    assert {"home/memory.db", "while open/memory.db-wal", "while open/memory.db-shm"} <= names
    assert any(n.startswith("home/snapshots/memory-") for n in names)
    assert len(scanned["while open/memory.db-wal"]) > 0  # the WAL held the last writes
    assert "migrate" in done.stderr or "store" in done.stderr  # the logs were really on

    leaks = [(name, what) for what, needle in _needles(vectors).items()
             for name, data in scanned.items() if needle in data]
    assert not leaks, leaks[:10]

    # The same scan on the same store decrypted finds the words and the vectors (so the
    # scan can fail), and still not the forgotten memory's word (forget's purge).
    ops.decrypt(encrypted.settings(), actor="test")
    plain = (encrypted.home / "memory.db").read_bytes()
    assert UPDATED.encode() in plain and WORDS[2].encode() in plain and TAGS[0].encode() in plain
    assert sum(vector[:16] in plain for vector in vectors) >= len(WORDS) - 1
    assert WORDS[1].encode() not in plain
