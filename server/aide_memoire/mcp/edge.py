"""The one adapter every tool call goes through, whoever serves it (MCP server, in-process
agents): argument parsing, namespace defaulting, the actor, and the error an agent reads.

No MCP SDK here: ``agents`` uses it without a server, and the stdio front (``front``)
must not pay for the SDK before it answers.
"""

from __future__ import annotations

import contextlib
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from ..engine.core.errors import AideMemoireError, StoreError
from ..engine.core.validate import describe_validation
from ..logs import get_logger
from .pins import NamespacePin, namespaces_in

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory
    from .models import ToolInput
    from .spec import ToolSpec

__all__ = ["MCP_ACTOR", "LazyMemory", "ServeSettings", "call", "failure_text", "getter", "parse",
           "resolve_namespace"]

MCP_ACTOR = "mcp"  # the audit log's actor for every call made over MCP

log = get_logger(__name__)


@dataclass(frozen=True)
class ServeSettings:
    """How the server runs: its default namespace and how many engine calls run at once."""

    default_namespace: str = "default"
    workers: int = 4
    # None: today's rule (any namespace of the store); else only these (pins.py).
    pin: NamespacePin | None = None


def resolve_namespace(args: BaseModel, default: str) -> str:
    """The call's namespace: its ``namespace`` argument when given, else the default."""
    given = getattr(args, "namespace", None)
    return given if isinstance(given, str) and given else default


def parse(spec: ToolSpec, arguments: object) -> ToolInput:
    """The validated arguments (raises pydantic's ``ValidationError``, also for arguments
    that are not an object at all)."""
    return spec.input.model_validate({} if arguments is None else arguments)


def call(spec: ToolSpec, memory: Memory, args: BaseModel, *, default_namespace: str,
         actor: str | None = MCP_ACTOR, pin: NamespacePin | None = None) -> BaseModel:
    """Run the tool's handler with its namespace resolved (and held to ``pin``),
    attributed to ``actor``; a read that returns another namespace's data is audited."""
    namespace = resolve_namespace(args, default_namespace)
    if pin is not None:
        pin.check(namespace, tool=spec.name)
    with contextlib.ExitStack() as scope:
        if actor is not None:  # audit events of these calls say who made them
            scope.enter_context(memory.acting_as(actor))
        out = spec.handler(memory, args, namespace)
        if pin is not None:
            out = pin.restrict(out)
        crossed = crossed_namespaces(spec, out, default_namespace)
        if crossed:
            memory.audit_cross_namespace_read(
                crossed[0] if len(crossed) == 1 else None, what=spec.name,
                home=default_namespace)
    return out


def crossed_namespaces(spec: ToolSpec, out: BaseModel, default_namespace: str) -> list[str]:
    """The other namespaces a read's result carries data of (empty for a write)."""
    if not spec.read_only:
        return []
    return sorted(ns for ns in namespaces_in(out) if ns != default_namespace)


def failure_text(spec: ToolSpec, exc: BaseException) -> str:
    """What the agent reads when a call fails: the validation or engine message, which says
    how to fix the call; for anything else a generic line (the details go to the log)."""
    if isinstance(exc, ValidationError):
        # Plain sentences, not pydantic's dump (codes, Python types, a URL); the words
        # "validation error" stay so a client can tell a bad call from a failed one.
        return (f"Error executing tool {spec.name}: validation error: "
                f"{describe_validation(exc.errors(include_url=False))}")
    if isinstance(exc, AideMemoireError):
        return f"Error executing tool {spec.name}: {exc}"
    # The plain traceback, not exc_info: the console renderer's rich traceback takes about
    # two seconds of CPU to draw, on the server's event loop.
    log.error("tool_failed", tool=spec.name,
              traceback="".join(traceback.format_exception(exc)).rstrip())
    return (f"Error executing tool {spec.name}: internal error; the server logged the "
            "details and keeps serving")


class LazyMemory:
    """The store, opened on first use: by the first tool call, or by the warm-up once the
    client has finished its handshake. ``initialize`` and ``tools/list`` never wait for it.

    When opening fails, that call fails with a ``StoreError`` saying why and ``where``
    the store is set (the setting to fix), the reason is logged once, and the next call
    tries again: the server stays up, and a store fixed meanwhile (a file moved away, a
    database started) serves without a restart."""

    def __init__(self, open_memory: Callable[[], Memory], *, where: str = "") -> None:
        self._open = open_memory
        self._where = where
        self._memory: Memory | None = None
        self._lock = threading.Lock()
        self._logged = ""

    @classmethod
    def failed(cls, error: AideMemoireError, *, where: str = "") -> LazyMemory:
        """A store that cannot open at all in this process (its settings did not
        validate): every call answers ``error``."""

        def refuse() -> Memory:
            raise error

        return cls(refuse, where=where)

    def get(self) -> Memory:
        with self._lock:  # one store per server, however many calls arrive at once
            if self._memory is None:
                try:
                    self._memory = self._open()
                except Exception as exc:  # noqa: BLE001 - every failure gets a clear answer
                    raise self._unavailable(exc) from exc
            return self._memory

    def _unavailable(self, exc: Exception) -> StoreError:
        if isinstance(exc, AideMemoireError):
            problem = str(exc)
        else:  # a failure the engine did not name: the details go to the log only
            log.error("store_open_failed",
                      traceback="".join(traceback.format_exception(exc)).rstrip())
            problem = (f"unexpected {type(exc).__name__} while opening it (the server "
                       "logged the details)")
        text = f"the store did not open: {problem}" + (f" [{self._where}]" if self._where else "")
        if text != self._logged:  # once per distinct reason, not once per call
            log.warning("store_unavailable", error=text)
            self._logged = text
        return StoreError(text)

    @property
    def opened(self) -> Memory | None:
        return self._memory

    def close(self) -> None:
        with self._lock:
            if self._memory is not None:
                self._memory.close()


def getter(source: Memory | LazyMemory) -> Callable[[], Memory]:
    """How a server built on ``source`` reaches the store on each call."""
    if isinstance(source, LazyMemory):
        return source.get
    return lambda: source
