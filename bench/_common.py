"""Helpers shared by the benchmark scripts: percentiles, tables, JSON output, progress."""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

T = TypeVar("T")


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    text_rows = [[_cell(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in text_rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in text_rows]
    return "\n".join(out)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def machine() -> dict[str, Any]:
    import os

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }


def write_json(path: Path | None, payload: dict[str, Any] | list[dict[str, Any]]) -> None:
    text = json.dumps(payload, indent=2, default=str)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterable[T]:
    """A progress bar on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return items
    from tqdm import tqdm

    return cast("Iterable[T]", tqdm(items, total=total, desc=desc, file=sys.stderr, leave=False))
