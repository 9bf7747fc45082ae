"""The ``aide-memoire`` command's entry point: ``hook`` goes straight to cli/hook.py.

Importing the full command line (cli/main.py) loads the whole engine, about half a
second; the prompt hook runs before every prompt and, with the daemon warm, needs only
the standard library. Every other command goes to cli/main.py unchanged.
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


def main() -> None:
    found = _hook_args(sys.argv[1:])
    if found is not None:
        from .hook import main as hook_main

        hook_main(*found)
        return
    from .main import main as full

    full()


if __name__ == "__main__":
    main()
