"""Generate the reference pages that must not drift from the code.

    python -m aide_memoire.refdocs configuration > docs/configuration.md
    python -m aide_memoire.refdocs cli > docs/cli.md

``configuration.md`` comes from the :class:`Settings` model (every field, its environment
variable, type, default and description); ``cli.md`` from the ``--help`` of every command
of the ``aide-memoire`` group, including groups and commands other modules register.
``tests/plugin/test_refdocs.py`` regenerates both and fails when a file differs.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Literal, Union, get_args, get_origin

import click
from annotated_types import Ge, Le
from pydantic import SecretStr
from pydantic.fields import FieldInfo

from .engine.core.settings import Settings

__all__ = ["render_cli_md", "render_configuration_md"]

ENV_PREFIX = "AIDE_MEMOIRE_"
# Help is wrapped to a fixed width so the page does not depend on the terminal.
HELP_WIDTH = 88

CONFIG_HEADER = """\
# Configuration

Generated from `server/aide_memoire/engine/core/settings.py` by
`python -m aide_memoire.refdocs configuration > docs/configuration.md`; do not edit by
hand (`tests/plugin/test_refdocs.py` fails when this page and the settings differ).

Every setting is read from an environment variable, `AIDE_MEMOIRE_` followed by the
field name in capitals. Only entry points read the environment (the CLI, the MCP
server, `Memory()` without settings); a program can pass `Settings(...)` instead:

```python
from aide_memoire import Memory, Settings

with Memory(settings=Settings(home="/srv/memory", embedding_model="none")) as memory:
    ...
```

For an MCP client, put the variables in the server entry's `env` (Claude Desktop,
Cursor, `claude mcp add -e NAME=value`) or in the environment that starts the client
(the Claude Code plugin passes its environment through). `aide-memoire --home DIR`
overrides `AIDE_MEMOIRE_HOME` for one command. Every client uses the same default store,
so leave `AIDE_MEMOIRE_HOME` unset unless you want a separate store.
"""

CLI_HEADER = """\
# Command-line reference

Generated from the commands' `--help` by
`python -m aide_memoire.refdocs cli > docs/cli.md`; do not edit by hand
(`tests/plugin/test_refdocs.py` fails when this page and the commands differ).

Conventions (server/aide_memoire/cli/output.py; `tests/cli/test_output_rules.py` checks
them): stdout carries results only, `--json` as one JSON document; an error is one line
`aide-memoire: error: ...` on stderr that says what to do; logs go to stderr. The store is
the one named by `--home`, else `AIDE_MEMOIRE_HOME`, else the user data folder (see
[configuration.md](configuration.md)). Commands whose optional part is not installed
(the code index without the `code` extra) say which extra to install and exit 4.

A first session (`tests/test_documented_commands.py` runs these in a temporary home):

```sh
aide-memoire store "Deploys go through ops/deploy.sh; never push to prod by hand" --tags ops
echo "Alice prefers tabs over spaces" | aide-memoire store - -n user:alice
aide-memoire recall "how do we deploy?"
aide-memoire search --tags ops
aide-memoire status
aide-memoire export -o memories.jsonl
aide-memoire import memories.jsonl
aide-memoire maintain
aide-memoire review list
aide-memoire audit verify
aide-memoire snapshot create
aide-memoire doctor
aide-memoire get 0123456789abcdef0123456789abcdef  # docs-test: exit 1 (no such memory)
```

Exit status:

| code | meaning |
|---|---|
"""


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Literal:
        return " \\| ".join(f"`{value}`" for value in get_args(annotation))
    if origin in (Union, types.UnionType):
        parts = [a for a in get_args(annotation) if a is not type(None)]
        name = " or ".join(_type_name(a) for a in parts)
        return f"{name} (or unset)" if len(parts) < len(get_args(annotation)) else name
    names = {str: "string", int: "integer", float: "number", bool: "boolean",
             SecretStr: "string (secret)"}
    if annotation in names:
        return names[annotation]
    return "path" if getattr(annotation, "__name__", "") in {"Path", "PosixPath"} else str(
        getattr(annotation, "__name__", annotation)
    )


def _default(name: str, field: FieldInfo) -> str:
    if field.default_factory is not None:
        # Machine-dependent: describe it instead of printing this machine's value.
        if name == "home":
            return "the user data folder (`~/.local/share/aide-memoire` on Linux)"
        return "computed"
    if field.default is None:
        return "unset"
    return f"`{field.default}`"


def _limits(field: FieldInfo) -> str:
    parts = []
    for item in field.metadata:
        if isinstance(item, Ge):
            parts.append(f"≥ {item.ge:,}")
        elif isinstance(item, Le):
            parts.append(f"≤ {item.le:,}")
    return ", ".join(parts)


def render_configuration_md() -> str:
    rows = [
        CONFIG_HEADER,
        "| variable | type | default | limits | what it does |",
        "|---|---|---|---|---|",
    ]
    for name, field in Settings.model_fields.items():
        desc = (field.description or "").replace("|", "\\|")
        rows.append(
            f"| `{ENV_PREFIX}{name.upper()}` | {_type_name(field.annotation)} "
            f"| {_default(name, field)} | {_limits(field)} | {desc} |"
        )
    return "\n".join(rows) + "\n"


def _walk(
    command: click.Command, path: list[str], parent: click.Context | None
) -> list[tuple[str, str]]:
    settings = {} if parent else dict(command.context_settings)  # children inherit
    settings.update(terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH)
    ctx = click.Context(command, info_name=path[-1], parent=parent, **settings)
    pages = [(" ".join(path), command.get_help(ctx))]
    if isinstance(command, click.Group):
        for name in sorted(command.list_commands(ctx)):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                pages += _walk(sub, [*path, name], ctx)
    return pages


def render_cli_md() -> str:
    from .cli.main import cli
    from .cli.output import EXIT_CODES

    pages = _walk(cli, ["aide-memoire"], None)
    out = [CLI_HEADER.rstrip("\n")]
    out += [f"| {code} | {meaning} |" for code, meaning in EXIT_CODES.items()]
    out += ["", "Commands:", ""]
    out += [f"- [`{title}`](#{title.replace(' ', '-')})" for title, _ in pages[1:]]
    for title, text in pages:
        out += ["", f"## {title}", "", "```text", text.rstrip(), "```"]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    pages = {"configuration": render_configuration_md, "cli": render_cli_md}
    if len(argv) != 1 or argv[0] not in pages:
        print("usage: python -m aide_memoire.refdocs configuration|cli", file=sys.stderr)
        return 2
    sys.stdout.write(pages[argv[0]]())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
