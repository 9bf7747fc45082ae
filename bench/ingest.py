"""Ingest alone: LOCOMO conversations stored session by session, wall and CPU time.

    python bench/ingest.py PATH/locomo-dev.json [--extract on|off] [--json out.json]

The same writes as ``bench/locomo.py`` (``store_conversation`` per session, photo
captions in the text) without the recall part. Besides turns per wall second it reports
turns per CPU second of the whole process (the model's thread pool included), which
another process's load on a shared machine moves far less, and the share of wall time
spent in the dense encoder. One session is stored first in a namespace of its own, so
that imports and first-call work are not counted. To compare two versions of the code,
run both at the same moment (``PYTHONPATH`` at each one's ``server`` folder).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, percentile, progress, write_json  # noqa: E402
from aide_memoire import Memory, Settings  # noqa: E402
from locomo import parse_date, sessions, turn_text  # noqa: E402

Session = tuple[str, str, Any, list[dict[str, Any]]]  # namespace, session id, date, turns


def _sessions(samples: list[dict[str, Any]]) -> list[Session]:
    out: list[Session] = []
    for sample in samples:
        for number, date, turns in sessions(sample["conversation"]):
            if turns:
                out.append((f"locomo:{sample['sample_id']}", f"session_{number}",
                            parse_date(date), turns))
    return out


def _store(memory: Memory, session: Session, namespace: str | None = None) -> int:
    name, session_id, date, turns = session
    batch = [{"speaker": t["speaker"], "content": turn_text(t),
              "metadata": {"dia_id": t["dia_id"]}} for t in turns]
    memory.store_conversation(batch, namespace=namespace or name, session_id=session_id,
                              observed_at=date)
    return len(batch)


def _timed(encode: Callable[[list[str]], Any], spent: list[float]) -> Callable[[list[str]], Any]:
    def run(texts: list[str]) -> Any:
        started = time.perf_counter()
        try:
            return encode(texts)
        finally:
            spent.append(time.perf_counter() - started)
    return run


def run(path: Path, home: Path, *, extract: bool, limit: int | None = None) -> dict[str, Any]:
    samples = json.loads(path.read_text(encoding="utf-8"))[:limit]
    todo = _sessions(samples)
    settings = Settings(home=home, extract_facts=extract)
    encode_seconds: list[float] = []
    per_session_ms: list[float] = []
    with Memory(settings=settings) as memory:
        memory.internals.embedder.wait()
        _store(memory, todo[0], namespace="warmup")
        memory.internals.embedder.encode = _timed(memory.internals.embedder.encode, encode_seconds)  # type: ignore[method-assign,assignment]
        turns = 0
        wall, cpu = time.perf_counter(), time.process_time()
        for session in progress(todo, desc="sessions"):
            started = time.perf_counter()
            turns += _store(memory, session)
            per_session_ms.append((time.perf_counter() - started) * 1000)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        runtime = memory.internals.embedder.runtime
    return {
        "bench": "ingest", "machine": machine(), "load_average": os.getloadavg(),
        "extract": "on" if extract else "off", "runtime": runtime,
        "sessions": len(todo), "turns": turns, "wall_s": wall, "cpu_s": cpu,
        "turns_per_s": turns / wall, "turns_per_cpu_s": turns / cpu,
        "encode_share": sum(encode_seconds) / wall,
        "session_ms_p50": percentile(per_session_ms, 50),
        "session_ms_p95": percentile(per_session_ms, 95),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path, help="LOCOMO JSON file (e.g. locomo-dev.json)")
    parser.add_argument("--extract", choices=["on", "off"], default="on",
                        help="fact and entity extraction on write (the extract_facts setting)")
    parser.add_argument("--conversations", type=int, default=None,
                        help="only the first N conversations (default: all)")
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = run(args.path, Path(tmp), extract=args.extract == "on",
                     limit=args.conversations)
    print(
        f"ingest ({result['runtime']}, extract {result['extract']}): {result['turns']} turns, "
        f"{result['turns_per_s']:.1f} turns/s wall, {result['turns_per_cpu_s']:.1f} per CPU "
        f"second; encoder {100 * result['encode_share']:.0f}% of wall; session p50 "
        f"{result['session_ms_p50']:.0f} ms, p95 {result['session_ms_p95']:.0f} ms "
        f"(load {result['load_average'][0]:.1f})"
    )
    print(json.dumps(result))
    write_json(args.json, result)


if __name__ == "__main__":
    main()
