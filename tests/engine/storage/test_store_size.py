"""Small stores stay small: vector partitions do not reserve megabytes up front."""

from __future__ import annotations

from pathlib import Path

from aide_memoire import Memory, Settings
from aide_memoire.engine.storage.sqlite.vectors import CHUNK_MAX, CHUNK_MIN, chunk_size_for


def _home_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in home.iterdir() if p.is_file())


def test_one_memory_with_its_vector_is_under_200_kb(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=Settings(home=home)) as memory:
        memory.store("Deploys go through ops/deploy.sh", namespace="project:app")
        dense = next(s for s in memory.status().stages if s.name == "dense")
        assert dense.live  # the vector is really there
    assert _home_bytes(home) < 200 * 1024


def test_each_new_namespace_costs_kilobytes_not_megabytes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(settings=Settings(home=home)) as memory:
        memory.store("the first namespace's only memory", namespace="project:a")
    one = _home_bytes(home)
    with Memory(settings=Settings(home=home)) as memory:
        for n in range(9):
            memory.store(f"memory number {n} of its own namespace", namespace=f"project:n{n}")
    # Nine more partitions: each at most ~40 kB (a 1024-vector chunk was 1.5 MB each).
    assert _home_bytes(home) - one < 9 * 40 * 1024


def test_chunk_size_grows_with_the_store_a_space_is_created_in() -> None:
    sizes = [chunk_size_for(n) for n in (0, 1, 100, 1_000, 10_000, 100_000, 10**7)]
    assert sizes[0] == CHUNK_MIN and sizes[-1] == CHUNK_MAX
    assert sizes == sorted(sizes) and all(s % 8 == 0 for s in sizes)  # vec0 needs 8s
    assert chunk_size_for(100_000) >= 100_000 // 100  # a big namespace: few chunks
