"""The local web page: browse, search, review and maintain the store from a browser.

Served by the loopback daemon under ``/ui`` (``aide-memoire ui`` opens it); pages are
rendered on the server from public ``Memory`` methods, plus the bounded listings of
``queries``. Security rules live in ``security``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .security import PREFIX

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from ..engine.facade.memory import Memory

__all__ = ["PREFIX", "mount_web"]


def mount_web(app: ASGIApp, memory: Memory, bearer: str) -> ASGIApp:
    """``app`` with the web page routed in front of it by path prefix ``/ui``."""
    from .app import build_web_app

    web = build_web_app(memory, bearer)

    async def routed(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == PREFIX or path.startswith(PREFIX + "/"):
            await web(scope, receive, send)
        else:
            await app(scope, receive, send)

    return routed
