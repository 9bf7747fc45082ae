"""A small DevTools-protocol client for Debian's headless Chromium, over
``--remote-debugging-pipe`` (JSON messages ending in NUL on fds 3 and 4): no WebSocket
library and no downloaded browser needed."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
TIMEOUT_S = 30.0


class Browser:
    def __init__(self, profile: Path, *, width: int = 1366, height: int = 768) -> None:
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()
        # Above 9 so the child's dup2 onto 3 and 4 cannot clobber one with the other.
        high_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
        high_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)

        def child_fds() -> None:
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen(
            [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "--no-first-run",
             "--disable-extensions", "--disable-background-networking",
             f"--window-size={width},{height}", "about:blank"],
            # Python opens its fds non-inheritable, so only 3 and 4 (set by dup2) pass.
            close_fds=False, preexec_fn=child_fds,  # noqa: PLW1509
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for fd in (to_chrome_r, from_chrome_w, high_r, high_w):
            os.close(fd)
        self.out = os.fdopen(to_chrome_w, "wb", buffering=0)
        self.inp = os.fdopen(from_chrome_r, "rb", buffering=0)
        self.next_id = 0
        self.replies: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        self.page("Page.enable")
        self.page("Runtime.enable")
        self.page("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = self.inp.read(65536)
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message and message["id"] in self.replies:
                    self.replies[message["id"]].put(message)
                else:
                    self.events.put(message)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        with self.lock:
            self.next_id += 1
            ident = self.next_id
            box: queue.Queue[dict[str, Any]] = queue.Queue()
            self.replies[ident] = box
            message: dict[str, Any] = {"id": ident, "method": method, "params": params}
            if session:
                message["sessionId"] = session
            self.out.write(json.dumps(message).encode() + b"\0")
        reply = box.get(timeout=TIMEOUT_S)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        return self.call(method, self.session, **params)

    def _wait_load(self) -> None:
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            event = self.events.get(timeout=TIMEOUT_S)
            if event.get("method") == "Page.loadEventFired":
                return
        raise TimeoutError("page did not load")

    def _drain(self) -> None:
        while not self.events.empty():
            self.events.get_nowait()

    def goto(self, url: str) -> None:
        self._drain()
        self.page("Page.navigate", url=url)
        self._wait_load()

    def js(self, expression: str) -> Any:
        result = self.page("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def submit(self, expression: str) -> None:
        """Click the element ``expression`` finds and wait for the page it leads to."""
        self._drain()
        found = self.js(f"(() => {{ const el = {expression}; if (!el) return false; "
                        "el.click(); return true; })()")
        if not found:
            raise AssertionError(f"nothing matches {expression}")
        self._wait_load()

    def screenshot(self, path: Path) -> None:
        data = self.page("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, queue.Empty, OSError):
            self.call("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        self.reader.join(timeout=10)
        self.inp.close()
