"""Wiki speed: export of a store built from the knowledge-update suites, a second
(no-change) export, the lint; and prose pages in the code index (a docs folder indexed,
one page edited and re-indexed, docs search latency).

    python bench/wiki.py [DOCS_FOLDER] [--repeat N] [--json]

DOCS_FOLDER defaults to this repository's docs/, copied to a temporary folder first. The
store is keyword-only (no model), as the fast test tier builds it; timings on a shared
machine are noisy: report them with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aide_memoire import Memory, Settings
from aide_memoire.logs import configure_logging

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUERIES = [
    "secret files skipped by name", "how are superseded facts shown", "install with pipx",
    "what the hooks inject", "bearer token of the daemon", "consolidation proposals expire",
    "namespaces keep projects apart", "export masks personal data", "postgres backend",
    "maintenance dry run",
]  # fmt: skip
NS = "project:suites"


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _build(memory: Memory) -> int:
    from tests.wiki.test_export import NAMESPACE, _build

    assert NAMESPACE == NS
    return 2 * len(_build(memory))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("docs", nargs="?", default=str(REPO / "docs"))
    parser.add_argument("--repeat", type=int, default=3, help="Runs of each timed step.")
    parser.add_argument("--json", action="store_true", help="Print one JSON document.")
    args = parser.parse_args()
    configure_logging("WARNING")
    out: dict[str, object] = {"load": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        settings = Settings(home=root / "home", embedding_model="none")
        with Memory(settings=settings) as memory:
            started = time.perf_counter()
            stored = _build(memory)
            out["store_memories"] = stored
            out["store_s"] = round(time.perf_counter() - started, 2)
            first: list[float] = []
            again: list[float] = []
            lint: list[float] = []
            for n in range(args.repeat):
                wiki = root / f"wiki{n}"
                t0 = time.perf_counter()
                report = memory.wiki_export(wiki, namespace=NS)
                t1 = time.perf_counter()
                second = memory.wiki_export(wiki, namespace=NS)
                t2 = time.perf_counter()
                linted = memory.wiki_lint(wiki)
                t3 = time.perf_counter()
                assert second.written == [] and linted.ok
                first.append(t1 - t0)
                again.append(t2 - t1)
                lint.append(t3 - t2)
            out["pages"] = report.pages
            out["export_ms_median"] = _ms(statistics.median(first))
            out["second_export_ms_median"] = _ms(statistics.median(again))
            out["lint_ms_median"] = _ms(statistics.median(lint))
            docs = root / "tree" / "docs"
            shutil.copytree(args.docs, docs)
            t0 = time.perf_counter()
            indexed = memory.code_index(root / "tree")
            out["docs_files"] = indexed.files
            out["docs_sections"] = indexed.chunks
            out["docs_index_ms"] = _ms(time.perf_counter() - t0)
            page = sorted(docs.glob("*.md"))[0]
            page.write_text(page.read_text() + "\n## Added\n\nOne more section.\n")
            t0 = time.perf_counter()
            memory.code_index(root / "tree")
            out["docs_reindex_one_edit_ms"] = _ms(time.perf_counter() - t0)
            times = []
            for _ in range(args.repeat):
                for query in QUERIES:
                    t0 = time.perf_counter()
                    memory.code_search(root / "tree", query, kind="docs")
                    times.append(time.perf_counter() - t0)
            times.sort()
            out["docs_search_ms_p50"] = _ms(times[len(times) // 2])
            out["docs_search_ms_p95"] = _ms(times[int(len(times) * 0.95)])
    out["load_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key:28} {value}")


if __name__ == "__main__":
    main()
