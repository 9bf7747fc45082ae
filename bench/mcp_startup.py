"""Cold start of `aide-memoire serve` over stdio: process start -> `initialize` answer,
-> `tools/list` answer, -> first `memory_recall` answer.

Raw JSON-RPC lines over the pipes (no client library in the timed path); the clock starts
just before the process is spawned. Each run uses a fresh process on a store seeded with
a few memories. Beside wall time, the server process's own CPU time (user + system, from
/proc, Linux only) when each answer arrives: a loaded machine inflates it much less than
wall time. Prints a table and writes JSON.

    .venv/bin/python bench/mcp_startup.py --runs 7
    .venv/bin/python bench/mcp_startup.py --runs 7 --model none   # keyword-only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, percentile, table, write_json  # noqa: E402

BIN = Path(sys.executable).parent / "aide-memoire"
SEED = [
    "The deploy script lives in ops/deploy.sh and needs VPN access",
    "Alice prefers small pull requests with one concern each",
    "Prices are cached for five minutes in the storefront",
]


def _send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    pipe.write((json.dumps(message) + "\n").encode())
    pipe.flush()


def _answer(pipe: IO[bytes], request_id: int) -> dict[str, Any]:
    while True:
        line = pipe.readline()
        if not line:
            raise RuntimeError("server closed stdout")
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request_id:
            return message


def _answer_line(pipe: IO[bytes], request_id: int) -> bytes:
    """The answer's line as sent (its size is what the client reads into its context)."""
    while True:
        line = pipe.readline()
        if not line:
            raise RuntimeError("server closed stdout")
        if json.loads(line).get("id") == request_id:
            return line.rstrip(b"\n")


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process has used so far; NaN off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(home: Path, env: dict[str, str]) -> dict[str, float]:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}}
    start = time.perf_counter()
    proc = subprocess.Popen([str(BIN), "serve", "-n", "project:bench"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _send(proc.stdin, init)
        _answer(proc.stdout, 1)
        t_init = time.perf_counter() - start
        cpu_init = _cpu_s(proc.pid)
        _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = _answer_line(proc.stdout, 2)
        tools = json.loads(listed)["result"]["tools"]
        t_list = time.perf_counter() - start
        cpu_list = _cpu_s(proc.pid)
        _send(proc.stdin, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "memory_recall", "arguments": {"query": "where is the deploy script?"}}})
        result = _answer(proc.stdout, 3)["result"]
        t_recall = time.perf_counter() - start
        cpu_recall = _cpu_s(proc.pid)
        assert not result.get("isError"), result
        assert all(t.get("annotations") and t.get("outputSchema") for t in tools)
    finally:
        proc.stdin.close()
        proc.terminate()
        proc.wait(30)
        proc.stdout.close()
    return {"initialize": t_init, "tools_list": t_list, "first_recall": t_recall,
            "cpu_initialize": cpu_init, "cpu_tools_list": cpu_list, "cpu_first_recall": cpu_recall,
            "tools": float(len(tools)), "tools_list_bytes": float(len(listed))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--model", default=None,
                        help="AIDE_MEMOIRE_EMBEDDING_MODEL (default: the packaged model)")
    parser.add_argument("--json", type=Path, default=Path("bench/results/mcp_startup.json"))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "AIDE_MEMOIRE_HOME": str(home)}
        if os.environ.get("PYTHONPATH"):  # measure a checkout's code, not the installed one
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        if args.model:
            env["AIDE_MEMOIRE_EMBEDDING_MODEL"] = args.model
        for text in SEED:
            subprocess.run([str(BIN), "store", text, "-n", "project:bench"], env=env,
                           check=True, capture_output=True)
        one_run(home, env)  # warm the OS file cache: "cold" means a new process, not a new disk
        runs = [one_run(home, env) for _ in range(args.runs)]

    stages = ["initialize", "tools_list", "first_recall",
              "cpu_initialize", "cpu_tools_list", "cpu_first_recall"]
    rows = [[stage, *(percentile([r[stage] for r in runs], q) for q in (50, 90, 100))]
            for stage in stages]
    print(f"aide-memoire serve (stdio) cold start, {args.runs} runs, "
          f"model={args.model or 'packaged'}, seconds from spawn")
    print(table(["answer to (cpu_: server CPU)", "p50 s", "p90 s", "max s"], rows))
    print(f"tools/list: {int(runs[0]['tools'])} tools, {int(runs[0]['tools_list_bytes'])} bytes")
    write_json(args.json, {
        "bench": "mcp_startup", "model": args.model or "packaged", "runs": runs,
        "percentiles": {stage: {f"p{q}": percentile([r[stage] for r in runs], q)
                                for q in (50, 90, 100)} for stage in stages},
        "tools": int(runs[0]["tools"]), "tools_list_bytes": int(runs[0]["tools_list_bytes"]),
        "machine": machine(),
    })


if __name__ == "__main__":
    main()
