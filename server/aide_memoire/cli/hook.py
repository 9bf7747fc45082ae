"""``aide-memoire hook <event>``: the Claude Code hooks' one entry point.

Reads Claude Code's hook JSON on stdin; prints context as plain text on stdout for
session-start and user-prompt-submit; captures the transcript for stop, pre-compact and
session-end. It always exits 0: a failure or a timeout lets the session go on unchanged
and is logged (never with memory text) to ``<home>/logs/hooks.log``.

Speed: this module imports only the standard library at the top. The prompt hook asks
the warm loopback daemon (``/hook`` in mcp/http.py) and needs nothing else; without one it
starts it in the background (detached, never waited for) and answers in process,
keyword-only, from the store opened read-only (hooks/cold.py), without importing the
engine; no hook ever loads the embedding model.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..hooks.home import log

__all__ = ["EVENTS", "run_hook", "run_in"]

EVENTS = ("session-start", "user-prompt-submit", "stop", "pre-compact", "session-end")
CAPTURE_EVENTS = ("stop", "pre-compact", "session-end")
DEFAULT_LIMIT_S = 2.0
CAPTURE_LIMIT_S = 60.0
SESSION_START_FACTOR = 3.0  # a capture cut short resumes at the next one (keyed by uuid)
SPAWN_GRACE_S = 60.0
HOOK_PATH = "/hook"  # mcp/http.py serves it (not imported: it pulls in uvicorn)
DAEMON_LOCK = "daemon.lock"  # mcp/http.py LOCK_FILE: held by a daemon for its life
# Words that make a whole prompt a reply to the assistant, not a question ("thanks!",
# "yes please", "ok go ahead"): such a prompt is not looked up.
ACKNOWLEDGEMENTS = frozenset({
    "thanks", "thank", "thx", "yes", "yeah", "yep", "sure", "okay", "cool", "great", "nice",
    "please", "continue", "proceed", "ahead", "hello", "hey", "good", "perfect", "done",
    "right", "fine", "agreed"})
# Started daemons outlive this process by design; holding them here keeps Popen from
# warning that they still run when it is collected.
_DETACHED: list[Any] = []
# The interpreter of aide-memoire's environment, which starts the daemon: this process's
# own, unless the plugin's launcher runs the hook in its process and names it (run_in).
_PYTHON = [sys.executable]


def data_home(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The store's folder, as Settings resolves it, without importing Settings."""
    if explicit:
        return Path(explicit)
    if os.environ.get("AIDE_MEMOIRE_HOME"):
        return Path(os.environ["AIDE_MEMOIRE_HOME"])
    import platformdirs

    return Path(platformdirs.user_data_dir("aide-memoire", appauthor=False))


# -- the daemon -------------------------------------------------------------------------


def _flag(name: str, default: bool) -> bool:
    """A boolean setting read as pydantic reads it (Settings is too slow to import here)."""
    value = os.environ.get(name, "").strip().lower()
    if value in ("0", "false", "no", "off", "f", "n"):
        return False
    if value in ("1", "true", "yes", "on", "t", "y"):
        return True
    return default


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _daemon(home: Path) -> tuple[str, int, str] | None:
    """(host, port, token) of a live daemon for this home, or None."""
    try:
        info = json.loads((home / "mcp-http.json").read_text(encoding="utf-8"))
        token = (home / "mcp-token").read_text(encoding="utf-8").strip()
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or not _alive(info.get("pid")) or not token:
        return None
    try:
        return str(info.get("host") or "127.0.0.1"), int(info["port"]), token
    except (KeyError, TypeError, ValueError):
        return None


def _post(host: str, port: int, token: str, body: bytes, timeout: float) -> tuple[int, bytes]:
    """One HTTP/1.1 POST to the loopback daemon over a plain socket: http.client and
    urllib cost about 90 ms to import, more than the daemon takes to answer."""
    import socket

    head = (f"POST {HOOK_PATH} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(head + body)
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    raw = b"".join(chunks)
    header, _, payload = raw.partition(b"\r\n\r\n")
    status_line = header.split(b"\r\n", 1)[0].split()
    if len(status_line) < 2 or not status_line[1].isdigit():
        raise ValueError("not an HTTP response")
    if b"transfer-encoding: chunked" in header.lower():
        raise ValueError("unexpected chunked response")
    return int(status_line[1]), payload


def ask_daemon(home: Path, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """The daemon's answer to a hook request, or None if no daemon answered in time."""
    found = _daemon(home)
    if found is None:
        return None
    host, port, token = found
    try:
        status, payload = _post(host, port, token, json.dumps(request).encode(), timeout)
        answer = json.loads(payload)
    except (OSError, ValueError) as exc:
        log(home, str(request.get("op")), "daemon did not answer", error=type(exc).__name__)
        return None
    if status != 200 or not isinstance(answer, dict):  # 503 while the model loads
        log(home, str(request.get("op")), "daemon declined", status=status)
        return None
    log(home, str(request.get("op")), "answered by the daemon")
    return answer


def _locked_elsewhere(path: Path) -> bool:
    """Whether another process holds an exclusive lock on ``path`` (a daemon's lock; one
    that is still loading has not announced itself in mcp-http.json yet)."""
    try:
        import fcntl
    except ImportError:  # Windows: the daemon's own lock still refuses a second one
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases our probe
    return False


def start_daemon(home: Path) -> bool:
    """Start ``aide-memoire serve --http`` detached, unless one runs, is starting or was
    started in the last SPAWN_GRACE_S. Hooks racing here start at most one: the check and
    the marker happen under one lock (and the daemon's own lock refuses a second)."""
    if not _flag("AIDE_MEMOIRE_HOOK_DAEMON", True) or _daemon(home) is not None:
        return False
    if _locked_elsewhere(home / DAEMON_LOCK):
        return False
    marker = home / "hooks" / "daemon-start"
    try:
        marker.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with _spawn_lock(marker.with_suffix(".lock")) as mine:
            if not mine or (marker.exists()
                            and time.time() - marker.stat().st_mtime < SPAWN_GRACE_S):
                return False
            marker.touch()
            _spawn(home)
    except OSError as exc:
        log(home, "daemon", "could not start the daemon", error=str(exc))
        return False
    return True


@contextlib.contextmanager
def _spawn_lock(path: Path) -> Iterator[bool]:
    """An exclusive lock for the check-and-start (True), or False if another hook holds
    it right now (it is starting the daemon)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:
            pass
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _spawn(home: Path) -> None:
    """The detached ``serve --http`` (its stderr in <home>/logs/daemon.log)."""
    import subprocess

    (home / "logs").mkdir(mode=0o700, parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    with open(home / "logs" / "daemon.log", "ab") as err:  # the child keeps its own copy
        _DETACHED.append(subprocess.Popen(
            [_PYTHON[0], "-m", "aide_memoire.cli.main", "--home", str(home),
             "serve", "--http", "--namespace", "default"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            start_new_session=True, env=env, cwd=str(home), close_fds=True,
        ))


# -- in process ---------------------------------------------------------------------------


def in_process(home: Path, request: dict[str, Any]) -> dict[str, Any]:
    """Run the request here, keyword-only (no model is loaded in a hook process)."""
    from ..engine.core.settings import Settings
    from ..engine.facade.memory import Memory
    from ..hooks.service import handle

    settings = Settings.from_env(home=home, embedding_model="none")
    with Memory(settings=settings) as memory:
        memory.actor = "hook"
        answer = handle(memory, request)
    from ..hooks.injections import record_request

    record_request(home, request, answer, "process")
    return answer


def keyword_answer(home: Path, request: dict[str, Any]) -> dict[str, Any]:
    """A prompt request answered here with no daemon: by the read-only keyword path
    (hooks/cold.py: no engine import), or by the engine where that path cannot stand in
    for it (a PostgreSQL or encrypted store, a setting it does not read)."""
    from ..hooks.cold import answer

    found = answer(home, request)
    if found is None:
        log(home, "user-prompt-submit", "keyword path unavailable: the engine answers")
        return in_process(home, request)
    if found.get("ids"):
        # The log's prompt excerpt needs the trust screen (secrets removed), whose import
        # costs this path more than its answer: written once the answer is out (after_answer).
        _AFTER.append(lambda: _record(home, request, found))
    return found


def _record(home: Path, request: dict[str, Any], answer: dict[str, Any]) -> None:
    from ..hooks.injections import record_request

    record_request(home, request, answer, "process")


# Work that must be done but that Claude Code need not wait for (see after_answer).
_AFTER: list[Any] = []


def after_answer() -> None:
    """Run the deferred work once the answer is printed: where the OS can fork, in a
    child that holds none of Claude Code's pipes, so that the hook exits at once;
    elsewhere (Windows) here, before exiting. Never raises."""
    tasks, _AFTER[:] = list(_AFTER), []
    if not tasks:
        return
    forked = False
    if hasattr(os, "fork"):
        try:
            if os.fork():
                return  # the hook itself is done
            forked = True
        except OSError:
            pass
    try:
        if forked:
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
        for task in tasks:
            with contextlib.suppress(Exception):
                task()
    except OSError:
        pass
    finally:
        if forked:
            os._exit(0)


def _ask_prompt(home: Path, request: dict[str, Any], limit: float) -> dict[str, Any]:
    answer = ask_daemon(home, request, limit / 2)
    if answer is not None and "error" not in answer:
        return answer
    start_daemon(home)
    return keyword_answer(home, request)


def _run(home: Path, request: dict[str, Any], limit: float) -> dict[str, Any]:
    # Half the limit for the daemon, so that the answer in process still fits.
    answer = ask_daemon(home, request, limit / 2)
    if answer is not None and "error" not in answer:
        return answer
    return in_process(home, request)


# -- events ---------------------------------------------------------------------------------


def _project(payload: dict[str, Any]) -> Any:
    from ..engine.core.projects import directory_from, project_for

    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    return project_for(directory_from(os.environ, cwd))


def _session_start(home: Path, payload: dict[str, Any], limit: float) -> str:
    from ..hooks.state import expire_states

    project = _project(payload)
    start_daemon(home)
    expire_states(home)
    # The briefing adopts the older project:<folder> namespace first when that is safe.
    session = payload.get("session_id")
    request = {"op": "briefing", "namespace": project.namespace, "legacy": project.legacy,
               "session_id": session}
    answer = _run(home, request, limit)
    # After /clear or a compaction the context no longer holds what was injected before.
    _remember_shown(home, session, answer, forget=payload.get("source") in ("clear", "compact"))
    return str(answer.get("text") or "")


def _remember_shown(home: Path, session: object, answer: dict[str, Any], *,
                    forget: bool) -> None:
    """Note what the session was shown, so that no later prompt shows it again."""
    from ..hooks.state import session_state

    ids = [str(i) for i in answer.get("ids") or []]
    if (ids or forget) and isinstance(session, str) and session:
        with session_state(home, session, "inject") as state:
            if forget:
                state.data["injected"] = []
            state.add_injected(ids)
            state.save()


def needs_no_recall(prompt: str) -> bool:
    """"ok", "thanks!", a bare slash command: nothing to look up, so neither the daemon
    nor the engine is asked (engine/text.py is the standard library only)."""
    import re

    from ..engine.core.text import query_terms

    if re.fullmatch(r"\s*/\S+\s*", prompt):
        return True
    return not any((len(t) > 2 or t.isdigit()) and t not in ACKNOWLEDGEMENTS
                   for t in query_terms(prompt))


def _prompt(home: Path, payload: dict[str, Any], limit: float) -> str:
    from ..hooks.state import session_state

    prompt = payload.get("prompt")
    session = payload.get("session_id")
    if not isinstance(prompt, str) or needs_no_recall(prompt):
        return ""
    project = _project(payload)
    request: dict[str, Any] = {"op": "prompt", "namespace": project.namespace,
                               "prompt": prompt, "session_id": session}
    if not isinstance(session, str) or not session:
        return str(_ask_prompt(home, request, limit).get("text") or "")
    with session_state(home, session, "inject") as state:
        request["exclude"] = sorted(state.injected())
        answer = _ask_prompt(home, request, limit)
        ids = [str(i) for i in answer.get("ids") or []]
        if ids:
            state.add_injected(ids)
            state.save()
        return str(answer.get("text") or "")


def _capture(home: Path, payload: dict[str, Any], event: str, limit: float) -> str:
    from ..engine.core.settings import Settings
    from ..hooks.capture import capture_enabled
    from ..hooks.state import session_state

    path = payload.get("transcript_path")
    session = payload.get("session_id")
    if not isinstance(path, str) or not path or not isinstance(session, str) or not session:
        log(home, event, "no transcript_path or session_id: nothing to capture")
        return ""
    project = _project(payload)
    enabled, why = capture_enabled(Settings.from_env(home=home), project.root)
    if not enabled:
        log(home, event, f"capture {why}")
        return ""
    if not Path(path).is_file():
        log(home, event, "transcript not found", path=path)
        return ""
    with session_state(home, session, "capture") as state:
        request = {"op": "capture", "namespace": project.namespace, "session_id": session,
                   "transcript_path": path, "start": state.cursor(path),
                   "final": event == "session-end"}
        answer = _run(home, request, limit)
        state.set_cursor(path, int(answer.get("cursor") or 0))
        state.save()
    log(home, event, "captured", turns=answer.get("turns"), present=answer.get("present"),
        redacted=answer.get("redacted"), private=answer.get("private"))
    return ""


def _dispatch(home: Path, event: str, payload: dict[str, Any], limit: float) -> str:
    if event == "session-start":
        return _session_start(home, payload, limit)
    if event == "user-prompt-submit":
        return _prompt(home, payload, limit)
    return _capture(home, payload, event, limit)


def time_limit(event: str) -> float:
    """The prompt hook's limit is the setting; the briefing, once a session and possibly
    without a daemon (the engine's import alone takes ~0.5 s), gets three times it."""
    try:
        limit = float(os.environ.get("AIDE_MEMOIRE_HOOK_TIME_LIMIT_S") or DEFAULT_LIMIT_S)
    except ValueError:
        limit = DEFAULT_LIMIT_S
    if event in CAPTURE_EVENTS:
        return max(limit, CAPTURE_LIMIT_S)
    return limit * SESSION_START_FACTOR if event == "session-start" else limit


def run_hook(event: str, raw: bytes, home: Path, *, defer: bool = False) -> str:
    """The hook's stdout text; never raises (failures and timeouts are logged). With
    ``defer``, work the answer does not need stays for ``after_answer``."""
    try:
        return _run_hook(event, raw, home)
    finally:
        if not defer:
            for task in _AFTER:
                with contextlib.suppress(Exception):
                    task()
            _AFTER.clear()


def _run_hook(event: str, raw: bytes, home: Path) -> str:
    started = time.perf_counter()
    try:
        payload = json.loads(raw or b"{}")
    except ValueError:
        log(home, event, "stdin is not JSON: ignored")
        return ""
    if not isinstance(payload, dict):
        log(home, event, "stdin is not a JSON object: ignored")
        return ""
    limit = time_limit(event)
    result: list[str] = []

    def work() -> None:
        try:
            result.append(_dispatch(home, event, payload, limit))
        except Exception as exc:  # noqa: BLE001 - a hook fails open, whatever went wrong
            log(home, event, "hook failed", error=f"{type(exc).__name__}: {exc}"[:300])

    # The work runs in a daemon thread so that the limit holds even inside SQLite waits.
    worker = threading.Thread(target=work, name=f"hook-{event}", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        log(home, event, "time limit reached: gave up", limit_s=limit)
        return ""
    log(home, event, "done", ms=round((time.perf_counter() - started) * 1000, 1))
    return result[0] if result else ""


def run_in(event: str, python: str) -> None:
    """``aide-memoire hook EVENT`` run inside the plugin's launcher (plugin/lib/launch.py),
    which has put this environment on its path: ``python`` is the environment's own
    interpreter, for what the hook starts (the daemon)."""
    _PYTHON[0] = python
    main(event)


def main(event: str, home: str | os.PathLike[str] | None = None) -> None:
    """Entry for ``aide-memoire hook``: read stdin, print the context, exit 0."""
    where = data_home(home)
    if event not in EVENTS:
        log(where, event, "unknown hook event: ignored")
        return
    try:
        raw = sys.stdin.buffer.read()
    except (OSError, ValueError):
        raw = b""
    text = run_hook(event, raw, where, defer=True)
    if text:
        sys.stdout.write(text + "\n")
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    after_answer()
