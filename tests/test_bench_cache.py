"""bench/locomo_cv.py --cache keeps plain JSON, so a cache outlives module moves."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import cast

import numpy as np

from aide_memoire.engine.core.text import QueryShape
from aide_memoire.engine.recall.fusion import Candidates
from aide_memoire.engine.recall.stages import RowFact
from tests.bench_modules import load_bench


def _bench() -> ModuleType:
    return load_bench("locomo_cv")


def test_the_cache_is_versioned_json_that_reads_back_the_same(tmp_path: Path) -> None:
    cv = _bench()
    found = Candidates(keyword={3: 7.25, 9: 1.5}, dense={3: 0.61, 12: 0.402},
                       dense_low=cast(float, np.float32(0.05)), dense_high=0.83, dense_live=True,
                       speaker_rows={9},
                       shape=QueryShape(temporal=True, asks_name=True), feedback={12: 0.2},
                       keyword_ideal=9.75)
    content = {3: "Caroline went to a support group", 9: "Mel paints",
               12: "a photo of a lake"}
    facts = {r: RowFact(session=f"s{r}", at=1.7e9 + r, speaker="Mel") for r in content}
    sets = [[cv.prepare(found, 4, 2, {3, 12}, content)]]
    cache = tmp_path / "cache.json"
    cv.dump_cache(cache, sets, content, facts)
    text = cache.read_text(encoding="utf-8")
    data = json.loads(text)  # JSON, not a pickle
    assert (data["format"], data["version"]) == (cv.CACHE_FORMAT, cv.CACHE_VERSION)
    assert "aide_memoire" not in text  # no module path to break when modules move
    loaded = cv.load_cache(cache, 1)
    assert loaded is not None
    (question,), = loaded[0]
    assert question.found == found  # numpy scalars read back as the numbers they hold
    assert (question.conversation, question.category) == (4, 2)
    assert set(question.rowids[question.evidence].tolist()) == {3, 12}
    assert loaded[1] == content and loaded[2] == facts
    # Another version, or fewer variants than asked for, is collected again.
    cache.write_text(json.dumps(dict(data, version=cv.CACHE_VERSION + 1)), encoding="utf-8")
    assert cv.load_cache(cache, 1) is None
    cache.write_text(text, encoding="utf-8")
    assert cv.load_cache(cache, 2) is None
