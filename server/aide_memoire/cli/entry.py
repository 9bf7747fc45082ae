"""The ``aide-memoire`` command's entry point: ``hook`` goes straight to cli/hook.py, and
``serve`` over stdio starts the MCP stdio front first.

Importing the full command line (cli/main.py) loads the whole engine, about half a
second; the prompt hook runs before every prompt and, with the daemon warm, needs only
the standard library. ``serve`` over stdio starts mcp/front.py (standard library only)
before that import, so the client's ``initialize`` and ``tools/list`` are answered while
the SDK and the engine load. Every command then goes to cli/main.py unchanged.
"""

from __future__ import annotations

import sys

__all__ = ["main"]

_EVENTS = ("session-start", "user-prompt-submit", "stop", "pre-compact", "session-end")


def _hook_args(argv: list[str]) -> tuple[str, str | None] | None:
    """(event, home) for ``[--home H] [--log-level L] hook EVENT``, else None."""
    home = None
    rest = list(argv)
    while rest and rest[0].startswith("--"):
        flag = rest.pop(0)
        if flag in ("--home", "--log-level") and rest:
            value = rest.pop(0)
            home = value if flag == "--home" else home
        elif flag.startswith("--home="):
            home = flag.split("=", 1)[1]
        elif not flag.startswith("--log-level="):
            return None
    if len(rest) == 2 and rest[0] == "hook" and rest[1] in _EVENTS:
        return rest[1], home
    return None


def _serves_stdio(argv: list[str]) -> tuple[bool, str | None]:
    """Whether ``argv`` is ``[--home H] [--log-level L] serve [options]`` without --http,
    and the --home it names."""
    home = None
    rest = list(argv)
    while rest and rest[0].startswith(("--home", "--log-level")):
        flag = rest.pop(0)
        name, _, value = flag.partition("=")
        if not value and rest:
            value = rest.pop(0)
        home = value if name == "--home" else home
    serves = (bool(rest) and rest[0] == "serve"
              and not {"--http", "--help", "-h"} & {arg.split("=", 1)[0] for arg in rest})
    return serves, home


def main() -> None:
    serves, home = _serves_stdio(sys.argv[1:])
    if serves:
        from ..mcp.front import start
        from .hook import data_home

        start(data_home(home))
    found = _hook_args(sys.argv[1:])
    if found is not None:
        from .hook import main as hook_main

        hook_main(*found)
        return
    from .main import main as full

    full()


if __name__ == "__main__":
    main()
