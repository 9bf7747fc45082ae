"""The web application: routes of every page behind the guard, run as actor ``web``."""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..engine.core.errors import AideMemoireError, NotFound
from . import entities, health, memories, review, timeline
from .html import esc, page
from .jobs import Jobs
from .security import PREFIX, Guard, Sessions

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import ASGIApp

    from ..engine.facade.memory import Memory

__all__ = ["ACTOR", "build_web_app"]

ACTOR = "web"  # how the audit log names what a person did on the page
Handler = Callable[["Memory", "Request"], Response]
_STATIC = {"style.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8"}


def _endpoint(memory: Memory, handler: Handler) -> Callable[[Request], Response]:
    # A sync endpoint: Starlette runs it in a worker thread, so engine calls never block
    # the event loop the MCP endpoint shares.
    def run(request: Request) -> Response:
        with memory.acting_as(ACTOR):
            try:
                return handler(memory, request)
            except NotFound as exc:
                return page("Not found", f'<p class="error" role="alert">{esc(exc)}</p>',
                            status_code=404)
            except AideMemoireError as exc:
                return page("Refused", f'<p class="error" role="alert">{esc(exc)}</p>',
                            status_code=400)
    return run


def _static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in _STATIC:
        return Response("not found\n", status_code=404, media_type="text/plain")
    body = (files(__package__) / "static" / name).read_bytes()
    return Response(body, media_type=_STATIC[name])


def build_web_app(memory: Memory, bearer: str, sessions: Sessions | None = None) -> ASGIApp:
    """The page's ASGI app (paths under /ui), guarded; ``bearer`` is the daemon's token,
    which only ``aide-memoire ui`` presents to get a sign-in ticket."""
    pages: list[tuple[str, Handler, list[str]]] = [
        *memories.ROUTES, *timeline.ROUTES, *review.ROUTES, *health.ROUTES, *entities.ROUTES,
    ]
    routes = [Route(f"{PREFIX}{path}", _endpoint(memory, handler), methods=methods)
              for path, handler, methods in pages]
    routes.append(Route(f"{PREFIX}/static/{{name}}", _static, methods=["GET"]))
    routes.append(Route(PREFIX, lambda _: RedirectResponse(f"{PREFIX}/", 307)))
    app = Starlette(routes=routes)
    app.state.jobs = Jobs()  # request.app.state.jobs in the handlers
    return Guard(app, sessions or Sessions(), bearer)
