"""What the Claude Code hooks cost on this machine, measured as Claude Code runs them: a
fresh `plugin/bin/aide-memoire-hook EVENT` process per call (exec form, the Python launcher
then `aide-memoire hook EVENT`), the hook JSON on stdin, wall time from spawn to exit.

    python bench/hooks.py [--runs 40] [--turns 2000] [--json bench/results/hooks.json]
    python bench/hooks.py --only-cold [--runs 40] [--turns 2000]   # the command path, no daemon

The package runs from compiled bytecode, as an installed one does (pip compiles it): the
bench lifts PYTHONDONTWRITEBYTECODE for its processes and makes one warm-up call first.
Every section records the load average (1 min) before and after it: on a shared machine
wall times move with it, CPU times much less.

- capture: a generated Claude Code transcript of --turns conversation turns (user and
  assistant text from templates over varied vocabulary, every fourth answer with a tool
  call and its result) captured by one `stop` hook, once with the warm daemon (it encodes
  the turns with the model) and once in process (keyword-only);
- user-prompt-submit p50/p95 over prompts about the transcript and unrelated ones, with
  the warm loopback daemon (model loaded) and without one (keyword-only in process);
- without the daemon, three ways: the launcher running the hook in its own interpreter
  (the plugin's default: one start), the launcher exec'ing the command
  (AIDE_MEMOIRE_PLUGIN_EXEC=1: two starts) and the command alone (a settings.json hook);
- session-start p50, both ways; the interpreter's own start for scale; and where the
  prompt hook's time goes without the daemon (`python -X importtime`, top imports);
- user-prompt-submit as the plugin runs it now, an `mcp_tool` hook: a `tools/call` of
  `hook_prompt` on the open stdio session of `aide-memoire serve` (the plugin's MCP
  server, model loaded), the JSON-RPC round trip Claude Code makes, no process spawned;
  the first call after a cold server start is reported on its own.

Without a daemon the hook starts one in the background; for the "without" figures the
bench sets AIDE_MEMOIRE_HOOK_DAEMON=false so that none starts (what a hook sees in the
seconds before a daemon is up). CPU time (the hook's processes' own, from the kernel's
accounting of children) is reported beside wall time: on a loaded machine it says what
the hook costs, wall time what a person waits. The command run is the console script pyproject.toml
declares, written for this interpreter, with this checkout's code (PYTHONPATH).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, percentile, table, write_json  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
HOOK = REPO / "plugin" / "bin" / "aide-memoire-hook"

SERVICES = ["billing", "search", "checkout", "ingest", "auth", "reporting", "notifier",
            "scheduler", "gateway", "thumbnailer", "ledger", "catalog"]
THINGS = ["Postgres", "Redis", "Kafka", "S3 bucket", "cron job", "feature flag", "Helm chart",
          "migration", "load balancer", "CI pipeline", "Grafana board", "retry queue"]
PEOPLE = ["Ada", "Bram", "Chen", "Dagny", "Emeka", "Farah", "Goran", "Hana", "Ines", "Jonas"]
VERBS = ["moved", "renamed", "split", "rate-limited", "rolled back", "upgraded", "pinned",
         "sharded", "cached", "deprecated", "benchmarked", "documented"]
USER = ["Why is the {s} service slow after the {t} change?",
        "{p} says we {v} the {t} for {s} last week; can you check the config?",
        "Let's keep the {s} {t} on port {n}, and write that down.",
        "The {s} tests fail on CI with a timeout around {n} ms. Any idea?",
        "Please look at how {s} talks to the {t}; {p} thinks it retries too often.",
        "We decided: {s} owns the {t} from now on, {p} reviews changes to it."]
ANSWER = ["The {s} service reads the {t} on every request; caching it for {n} seconds "
          "should remove most of the latency.",
          "I {v} the {t} for {s} and updated the notes; {p} may want to review it.",
          "The failure comes from the {t}: it answers after {n} ms while the client "
          "gives up sooner. Raising the client timeout or fixing the {t} both work.",
          "Done. {s} now uses its own {t}; the old one stays read-only for a while.",
          "Agreed, {p} owns the review of {s}'s {t}. I noted it in the README."]
COMMANDS = ["pytest tests/{s} -x -q", "git log --oneline -5 -- services/{s}",
            "kubectl get pods -l app={s}", "rg 'timeout' services/{s}", "make -C services/{s}"]
RELATED = ["Which port does the {s} {t} use?", "Who reviews changes to the {s} {t}?",
           "Why were the {s} tests timing out on CI?", "What did we change in {s} last week?"]
UNRELATED = ["What is the capital of Portugal?", "Write a haiku about autumn leaves.",
             "How many bytes are in a kibibyte?", "Translate 'good morning' into Italian.",
             "hi", "thanks!", "Explain what a monad is in one paragraph."]


def _fill(template: str, rng: random.Random) -> str:
    return template.format(s=rng.choice(SERVICES), t=rng.choice(THINGS), p=rng.choice(PEOPLE),
                           v=rng.choice(VERBS), n=rng.randrange(80, 9000))


def write_transcript(path: Path, turns: int, cwd: Path, seed: int) -> str:
    """A Claude Code JSONL transcript with ``turns`` user and assistant text turns."""
    rng = random.Random(seed)
    session = str(uuid.UUID(int=rng.getrandbits(128)))
    start = time.time() - turns * 30
    lines: list[dict[str, Any]] = []
    parent = None

    def add(kind: str, content: Any, n: int) -> None:
        nonlocal parent
        me = str(uuid.UUID(int=rng.getrandbits(128)))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(start + n * 30))
        lines.append({"parentUuid": parent, "isSidechain": False, "type": kind, "uuid": me,
                      "timestamp": stamp, "sessionId": session, "cwd": str(cwd),
                      "message": {"role": kind, "content": content}})
        parent = me

    for n in range(turns):
        if n % 2 == 0:
            add("user", " ".join(_fill(rng.choice(USER), rng) for _ in range(rng.randint(1, 2))),
                n)
            continue
        blocks: list[dict[str, Any]] = [{"type": "text", "text": " ".join(
            _fill(rng.choice(ANSWER), rng) for _ in range(rng.randint(1, 3)))}]
        if n % 8 == 1:
            tool = f"toolu_{n}"
            blocks.append({"type": "tool_use", "id": tool, "name": "Bash",
                           "input": {"command": _fill(rng.choice(COMMANDS), rng)}})
            add("assistant", blocks, n)
            add("user", [{"type": "tool_result", "tool_use_id": tool, "is_error": n % 16 == 1,
                          "content": "output line\n" * rng.randint(5, 200)}], n)
            continue
        add("assistant", blocks, n)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return session


def console_script(folder: Path) -> Path:
    """The `aide-memoire` command as pip would write it from pyproject.toml."""
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    module, func = scripts["aide-memoire"].split(":")
    script = folder / "aide-memoire"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {func}\n"
                      f"sys.exit({func}())\n")
    script.chmod(0o755)
    return script


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Hooks:
    def __init__(self, home: Path, command: Path) -> None:
        self.home = home
        self.env = {**os.environ, "AIDE_MEMOIRE_HOME": str(home),
                    "AIDE_MEMOIRE_BIN": str(command),
                    "CLAUDE_PLUGIN_ROOT": str(REPO / "plugin"),
                    "PYTHONPATH": os.pathsep.join(
                        p for p in (str(REPO / "server"), os.environ.get("PYTHONPATH")) if p)}
        self.env.pop("CLAUDE_PROJECT_DIR", None)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)  # run from bytecode, as installed
        # The launcher's `#!/usr/bin/env python3` finds this interpreter first: a version
        # manager's shim there (pyenv's costs ~170 ms CPU a start here) would be measured
        # instead of the hook.
        self.env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent),
                                            self.env.get("PATH", "")])
        self.block_daemon = False
        self.extra_env: dict[str, str] = {}
        self.direct: Path | None = None
        self.cpu: list[float] = []  # CPU ms of each run, in order

    def run(self, event: str, payload: dict[str, Any], *args: str) -> tuple[float, str]:
        env = {**self.env, "AIDE_MEMOIRE_HOOK_DAEMON": "false"} if self.block_daemon \
            else self.env
        env = {**env, **self.extra_env}
        # The plugin's launcher, or (a hand-written settings.json hook) the command itself.
        program = [str(HOOK), *args, event] if self.direct is None else \
            [str(self.direct), "hook", *args, event]
        cpu = _children_cpu()
        started = time.perf_counter()
        done = subprocess.run(program, input=json.dumps(payload),
                              env=env, capture_output=True, text=True, timeout=300,
                              check=False)
        wall = (time.perf_counter() - started) * 1000
        self.cpu.append((_children_cpu() - cpu) * 1000)
        return wall, done.stdout


def start_daemon(hooks: Hooks) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "aide_memoire.cli.main", "--home", str(hooks.home), "serve",
         "--http", "--namespace", "default"], env=hooks.env, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while not (hooks.home / "mcp-http.json").exists():
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit("the daemon did not start")
        time.sleep(0.2)
    return process


def stop_daemon(process: subprocess.Popen[bytes]) -> float:
    """Stop the daemon this bench started; the seconds it took to exit on SIGTERM (it
    finishes work in hand first), killed after two minutes."""
    started = time.monotonic()
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
    return round(time.monotonic() - started, 1)


def capture(hooks: Hooks, project: Path, turns: int, seed: int) -> dict[str, Any]:
    transcript = project / "session.jsonl"
    session = write_transcript(transcript, turns, project, seed)
    ms, _ = hooks.run("stop", {"session_id": session, "transcript_path": str(transcript),
                               "cwd": str(project), "hook_event_name": "Stop"})
    log = (hooks.home / "logs" / "hooks.log").read_text().splitlines()
    # What the hook itself logged: "captured" with counts, or that it hit its time limit
    # (the rest is then taken by the next capture, from the saved position).
    said = [entry for entry in map(json.loads, log) if entry.get("event") == "stop"
            and entry.get("message") != "done"]
    return {"turns": turns, "ms": round(ms, 1), "turns_per_s": round(turns / ms * 1000, 1),
            "hook_log": said[-1] if said else None}


def prompts(hooks: Hooks, project: Path, runs: int, seed: int) -> dict[str, Any]:
    load = _load()
    rng = random.Random(seed)
    times: dict[str, list[float]] = {"related": [], "unrelated": []}
    injected = {"related": 0, "unrelated": 0}
    for n in range(runs):
        kind = "related" if n % 2 == 0 else "unrelated"
        text = _fill(rng.choice(RELATED), rng) if kind == "related" else rng.choice(UNRELATED)
        ms, out = hooks.run("user-prompt-submit", {
            "session_id": str(uuid.uuid4()), "cwd": str(project), "prompt": text,
            "hook_event_name": "UserPromptSubmit"})
        times[kind].append(ms)
        injected[kind] += bool(out.strip())
    every = times["related"] + times["unrelated"]
    cpu = hooks.cpu[-runs:]
    return {"runs": runs, "load_before": load, "load_after": _load(),
            "p50_ms": round(percentile(every, 50), 1),
            "cpu_p50_ms": round(percentile(cpu, 50), 1),
            "cpu_p95_ms": round(percentile(cpu, 95), 1),
            "p95_ms": round(percentile(every, 95), 1),
            "related_p50_ms": round(percentile(times["related"], 50), 1),
            "unrelated_p50_ms": round(percentile(times["unrelated"], 50), 1),
            "injected": injected}


class McpSession:
    """`aide-memoire serve` over stdio, spoken to in JSON-RPC lines as Claude Code does."""

    def __init__(self, hooks: Hooks, command: Path, project: Path) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [str(command), "serve"], env={**hooks.env, "CLAUDE_PROJECT_DIR": str(project)},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.cpu: list[float] = []  # the server's CPU ms for each hook_prompt call
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "0"}})
        self.notify("notifications/initialized")
        for method in ("tools/list", "prompts/list", "resources/list"):
            self.request(method, {})

    def notify(self, method: str) -> None:
        self._send({"jsonrpc": "2.0", "method": method})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdout is not None
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit(f"the MCP server ended during {method}")
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == self.next_id:
                return answer

    def cpu_ms(self) -> float:
        """The server process's own CPU time so far (user + system), from /proc."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    def hook_prompt(self, prompt: str, session: str) -> tuple[float, str]:
        cpu = self.cpu_ms()
        started = time.perf_counter()
        answer = self.request("tools/call", {"name": "hook_prompt", "arguments": {
            "prompt": prompt, "session_id": session}})
        ms = (time.perf_counter() - started) * 1000
        self.cpu.append(self.cpu_ms() - cpu)
        text = json.loads(answer["result"]["content"][0]["text"])
        return ms, text.get("hookSpecificOutput", {}).get("additionalContext", "")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)


def mcp_tool_prompts(hooks: Hooks, command: Path, project: Path, runs: int,
                     seed: int) -> dict[str, Any]:
    """The prompt hook through `mcp_tool`: one server for the whole run, as one session."""
    load = _load()
    session = McpSession(hooks, command, project)
    try:
        first_ms, _ = session.hook_prompt("Which port does the billing Redis use?", "first")
        first_since_start = (time.perf_counter() - session.started) * 1000
        for n in range(3):  # the first recalls fill the server's caches
            session.hook_prompt("Who reviews changes to the billing Redis?", f"warm-{n}")
        rng = random.Random(seed)
        times: dict[str, list[float]] = {"related": [], "unrelated": []}
        injected = {"related": 0, "unrelated": 0}
        for n in range(runs):
            kind = "related" if n % 2 == 0 else "unrelated"
            text = _fill(rng.choice(RELATED), rng) if kind == "related" \
                else rng.choice(UNRELATED)
            ms, out = session.hook_prompt(text, str(uuid.uuid4()))
            times[kind].append(ms)
            injected[kind] += bool(out.strip())
    finally:
        session.close()
    every = times["related"] + times["unrelated"]
    cpu = session.cpu[-runs:]
    return {"runs": runs, "load_before": load, "load_after": _load(),
            "p50_ms": round(percentile(every, 50), 1),
            "p95_ms": round(percentile(every, 95), 1),
            "server_cpu_p50_ms": round(percentile(cpu, 50), 1),
            "server_cpu_p95_ms": round(percentile(cpu, 95), 1),
            "related_p50_ms": round(percentile(times["related"], 50), 1),
            "unrelated_p50_ms": round(percentile(times["unrelated"], 50), 1),
            "first_call_ms": round(first_ms, 1),
            "first_call_since_server_start_ms": round(first_since_start, 1),
            "injected": injected}


def cold_variants(hooks: Hooks, project: Path, runs: int, results: dict[str, Any]) -> None:
    """The prompt hook with no daemon, three ways: the plugin's launcher running the hook
    in its own interpreter (the default), the launcher exec'ing the command (two
    interpreter starts, AIDE_MEMOIRE_PLUGIN_EXEC=1), and the command itself as a
    hand-written settings.json hook runs it (one start, no launcher)."""
    results["prompt_without_daemon"] = prompts(hooks, project, runs, seed=2)
    hooks.extra_env = {"AIDE_MEMOIRE_PLUGIN_EXEC": "1"}
    results["prompt_without_daemon_exec"] = prompts(hooks, project, runs, seed=2)
    hooks.extra_env = {}
    hooks.direct = Path(hooks.env["AIDE_MEMOIRE_BIN"])
    results["prompt_without_daemon_command"] = prompts(hooks, project, runs, seed=2)
    hooks.direct = None


def session_starts(hooks: Hooks, project: Path, runs: int) -> dict[str, Any]:
    times = [hooks.run("session-start", {"session_id": str(uuid.uuid4()), "cwd": str(project),
                                         "source": "startup",
                                         "hook_event_name": "SessionStart"})[0]
             for _ in range(runs)]
    return {"runs": runs, "p50_ms": round(percentile(times, 50), 1),
            "p95_ms": round(percentile(times, 95), 1),
            "cpu_p50_ms": round(percentile(hooks.cpu[-runs:], 50), 1)}


def python_start(runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append((time.perf_counter() - started) * 1000)
    return round(percentile(times, 50), 1)


def import_profile(hooks: Hooks, command: Path, project: Path) -> dict[str, Any]:
    """Where the prompt hook's start goes without a daemon: the imports it makes at the
    top level (cumulative) and the import time of each package (self time summed)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(command), "hook", "user-prompt-submit"],
        input=json.dumps({"session_id": str(uuid.uuid4()), "cwd": str(project),
                          "prompt": "Which port does the billing Redis use?"}),
        env={**hooks.env, "AIDE_MEMOIRE_HOOK_DAEMON": "false"}, capture_output=True,
        text=True, timeout=120, check=False)
    top: list[tuple[str, float]] = []
    packages: dict[str, float] = {}
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip()
        package = name.strip().split(".")[0]
        packages[package] = packages.get(package, 0.0) + int(parts[0]) / 1000
        if name.startswith(" ") and not name.startswith("  "):  # imported at the top level
            top.append((name.strip(), int(parts[1]) / 1000))
    total = sum(ms for _, ms in top)
    return {"load": _load(), "imports_total_ms": round(total, 1),
            "top_level_ms": dict(sorted(top, key=lambda r: -r[1])[:8]),
            "by_package_ms": {k: round(v, 1) for k, v in
                              sorted(packages.items(), key=lambda kv: -kv[1])[:12]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--only-mcp-tool", action="store_true",
                        help="Only the mcp_tool prompt path (on a store captured first).")
    parser.add_argument("--only-cold", action="store_true",
                        help="Only the command path with no daemon (keyword-only capture "
                             "first), with its import profile.")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="aide-memoire-bench-hooks-"))
    hooks = Hooks(root / "store", console_script(root))
    warm_project, cold_project = root / "work" / "shop", root / "work" / "garden"
    for folder in (warm_project, cold_project):
        folder.mkdir(parents=True)
    results: dict[str, Any] = {"machine": machine(), "python_start_p50_ms": python_start(10)}

    if args.only_cold:
        hooks.block_daemon = True
        results["capture_in_process"] = capture(hooks, warm_project, args.turns, seed=1)
        hooks.run("user-prompt-submit", {"session_id": "warm-up", "cwd": str(warm_project),
                                         "prompt": "billing Redis port"})  # writes bytecode
        cold_variants(hooks, warm_project, args.runs, results)
        results["prompt_without_daemon_imports"] = import_profile(
            hooks, console_script(root), warm_project)
        print(json.dumps(results, indent=2))
        write_json(args.json, results)
        shutil.rmtree(root, ignore_errors=True)
        return
    if args.only_mcp_tool:
        daemon = start_daemon(hooks)  # the capture encodes the turns, as a session's would
        try:
            results["capture_with_daemon"] = capture(hooks, warm_project, args.turns, seed=1)
        finally:
            results["daemon_exit_s"] = stop_daemon(daemon)
        results["prompt_mcp_tool"] = mcp_tool_prompts(hooks, console_script(root),
                                                      warm_project, args.runs, seed=2)
        print(json.dumps(results, indent=2))
        write_json(args.json, results)
        shutil.rmtree(root, ignore_errors=True)
        return
    daemon = start_daemon(hooks)
    try:
        results["capture_with_daemon"] = capture(hooks, warm_project, args.turns, seed=1)
        for _ in range(5):  # the model loads in the daemon's background: let it finish
            hooks.run("user-prompt-submit", {"session_id": "warm-up", "cwd": str(warm_project),
                                             "prompt": "billing Redis port"})
        results["prompt_with_daemon"] = prompts(hooks, warm_project, args.runs, seed=2)
        results["session_start_with_daemon"] = session_starts(hooks, warm_project, args.runs // 2)
    finally:
        results["daemon_exit_s"] = stop_daemon(daemon)
    # The plugin's own path for the prompt hook (the daemon is stopped: it plays no part).
    results["prompt_mcp_tool"] = mcp_tool_prompts(hooks, console_script(root), warm_project,
                                                  args.runs, seed=2)

    hooks.block_daemon = True
    results["capture_in_process"] = capture(hooks, cold_project, args.turns, seed=3)
    cold_variants(hooks, warm_project, args.runs, results)
    results["session_start_without_daemon"] = session_starts(hooks, warm_project, args.runs // 2)
    results["prompt_without_daemon_imports"] = import_profile(hooks, console_script(root),
                                                              warm_project)
    rows = [[name, r.get("p50_ms", r.get("ms")), r.get("p95_ms", ""),
             r.get("cpu_p50_ms", r.get("server_cpu_p50_ms", "")),
             r.get("turns_per_s", "")]
            for name, r in results.items() if isinstance(r, dict) and ("ms" in r or "p50_ms" in r)]
    print(table(["hook", "p50 / total ms", "p95 ms", "CPU p50 ms", "turns/s"], rows),
          file=sys.stderr)
    print(json.dumps(results, indent=2))
    write_json(args.json, results)
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
