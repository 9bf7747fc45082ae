"""Structured logs on stderr. stdout belongs to results and the stdio MCP transport."""

from __future__ import annotations

import logging
import sys

import structlog

__all__ = ["configure_logging", "ensure_logging"]

_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}


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
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def ensure_logging() -> None:
    """Library use: never let structlog's default print to stdout."""
    if not structlog.is_configured():
        configure_logging("warning")
