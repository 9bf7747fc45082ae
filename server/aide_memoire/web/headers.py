"""Strict parsing of the two headers the loopback daemon's guards decide on.

Shared by the MCP endpoint's guard (mcp/http.py) and the web page's (security.py), so
both read Host and Authorization the same way:

- **Host** is a loopback name and an optional decimal port, nothing else. A suffix
  after the port (``localhost:1.evil.example``), userinfo, a path or a second name is
  refused, and a port, when given, must be the daemon's own: a DNS-rebinding page can
  choose every byte of the name it resolves, so anything looser is a way in.
- **Authorization** is ``<scheme> <token>`` with the scheme compared without regard to
  case (RFC 9110 section 11.1: ``bearer`` is ``Bearer``). A request with two
  Authorization headers is refused outright instead of letting one of them decide.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable
from typing import Literal

__all__ = ["LOOPBACK_NAMES", "AuthCheck", "check_bearer", "loopback_host", "single_header"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost")
_HOST = re.compile(r"(?P<name>[^:\s]+)(?::(?P<port>[0-9]{1,5}))?")
# RFC 9110: credentials = auth-scheme [ 1*SP token68 ]; extra spaces are tolerated.
_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*) +(?P<token>\S+) *")


def loopback_host(raw: bytes | None, port: int | None) -> str | None:
    """The Host header's name when it is a loopback name with, optionally, ``port``;
    None for anything else (missing, other names, a suffix, another port)."""
    if raw is None:
        return None
    text = raw.decode("latin-1")
    found = _HOST.fullmatch(text)
    if found is None or found.group("name").lower() not in LOOPBACK_NAMES:
        return None
    given = found.group("port")
    if given is not None and (port is None or int(given) != port):
        return None
    return text


AuthCheck = Literal["ok", "missing", "wrong", "duplicate"]


def check_bearer(headers: Iterable[tuple[bytes, bytes]], token: str) -> AuthCheck:
    """Whether the request's one Authorization header carries ``Bearer <token>``."""
    values = [value for name, value in headers if name.lower() == b"authorization"]
    if not values:
        return "missing"
    if len(values) > 1:
        return "duplicate"
    found = _CREDENTIALS.fullmatch(values[0].decode("latin-1"))
    if found is None or found.group("scheme").lower() != "bearer":
        return "wrong"
    given = found.group("token").encode("latin-1")
    return "ok" if hmac.compare_digest(given, token.encode()) else "wrong"


def single_header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    """The one value of header ``name``; None when it is missing or sent more than once."""
    values = [value for key, value in headers if key.lower() == name]
    return values[0] if len(values) == 1 else None
