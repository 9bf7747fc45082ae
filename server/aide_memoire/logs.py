"""Structured logs on stderr. stdout belongs to results and the stdio MCP transport."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

__all__ = ["configure_logging", "ensure_logging", "get_logger"]

_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}


def _stderr_logger(*args: Any) -> structlog.PrintLogger:
    return structlog.PrintLogger(file=sys.stderr)


def configure_logging(level: str = "warning", *, json: bool = False) -> None:
    """Send structlog output to stderr at ``level``; entry points call this once."""
    numeric = _LEVELS.get(level.lower(), logging.WARNING)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # The stream is looked up per logger, not bound now: a host (or a test runner)
        # may swap sys.stderr after this call.
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )


def ensure_logging() -> None:
    """Library use: never let structlog's default print to stdout."""
    if not structlog.is_configured():
        configure_logging("warning")


_LIBRARY_PROCESSORS: list[structlog.typing.Processor] = [
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.dev.ConsoleRenderer(colors=False),
]


def _library_logger() -> Any:
    """Warnings and errors to stderr, for a program that never configured structlog: its
    default would print every level to stdout, and configuring it for them would change
    the whole process's logging. Built per call, on the current sys.stderr."""
    return structlog.wrap_logger(
        structlog.PrintLogger(file=sys.stderr), processors=_LIBRARY_PROCESSORS,
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
    )


class _EngineLogger:
    """The engine's logger: the process's structlog setup once an entry point (or the
    host program) made one, else the quiet stderr logger above. Decided at each call."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, method: str) -> Any:
        if structlog.is_configured():
            return getattr(structlog.get_logger(self._name), method)
        return getattr(_library_logger().bind(logger=self._name), method)


def get_logger(name: str) -> Any:
    return _EngineLogger(name)
