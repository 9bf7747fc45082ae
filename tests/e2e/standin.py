"""A local stand-in for the Messages API, for running the real Claude Code CLI headless.

No model service is reachable from the tests, and the point of the end-to-end tests is
what Claude Code *sends* (the prompt with the context our hooks added), not what a model
would answer. So this is a real HTTP server on 127.0.0.1 (an ephemeral port) that:

- answers `POST /v1/messages` with one fixed reply, as a server-sent-event stream when the
  request asks for `stream`, as a plain JSON message otherwise;
- answers `POST /v1/messages/count_tokens` with a rough count;
- records every request (path and JSON body) as one line of a JSONL file, and answers any
  other path with 404, recorded too, so a test can see what else Claude Code asked for.

Bounded: request bodies over MAX_BODY bytes are refused, and it stops after MAX_REQUESTS
requests or when its context ends.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPLY = "Noted."
MAX_BODY = 32 * 1024 * 1024
MAX_REQUESTS = 500


@dataclass
class StandIn:
    url: str
    log: Path

    def requests(self) -> list[dict[str, Any]]:
        """Every request so far: {"path": ..., "body": ...} in arrival order."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def message_bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests()
                if r["path"].split("?")[0] == "/v1/messages" and isinstance(r["body"], dict)]

    def clear(self) -> None:
        self.log.write_text("")


def _message(model: str) -> dict[str, Any]:
    return {"id": "msg_standin", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": REPLY}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 2}}


def _events(model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    start = _message(model) | {"content": [], "stop_reason": None}
    yield "message_start", {"type": "message_start", "message": start}
    yield "content_block_start", {"type": "content_block_start", "index": 0,
                                  "content_block": {"type": "text", "text": ""}}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                  "delta": {"type": "text_delta", "text": REPLY}}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                            "usage": {"output_tokens": 2}}
    yield "message_stop", {"type": "message_stop"}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass  # the JSONL record is the log

    def _record(self, body: object) -> None:
        with self.server.lock:
            self.server.count += 1
            with self.server.log.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"path": self.path, "method": self.command,
                                      "body": body}) + "\n")
            if self.server.count >= MAX_REQUESTS:
                threading.Thread(target=self.server.shutdown, daemon=True).start()

    def _send_json(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._record(None)
        self._send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                         "message": "stand-in"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY:
            self._record({"refused_bytes": length})
            self._send_json(413, {"type": "error", "error": {"type": "request_too_large",
                                                             "message": "stand-in bound"}})
            return
        raw = self.rfile.read(length)
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        self._record(body)
        path = self.path.split("?")[0]
        model = body.get("model", "stand-in") if isinstance(body, dict) else "stand-in"
        if path == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
        elif path == "/v1/messages" and isinstance(body, dict) and body.get("stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for event, data in _events(model):
                self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True
        elif path == "/v1/messages":
            self._send_json(200, _message(model))
        else:
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                             "message": "stand-in"}})


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, log: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.log = log
        self.lock = threading.Lock()
        self.count = 0


@contextmanager
def standin(log: Path) -> Iterator[StandIn]:
    """Serve the stand-in on 127.0.0.1 for the duration of the block."""
    log.write_text("")
    server = _Server(log)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    try:
        yield StandIn(url=f"http://127.0.0.1:{server.server_address[1]}", log=log)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
