"""The same registry for in-process agents: no server, no MCP SDK.

- :func:`tool_specs` gives function specs in the shape OpenAI-compatible tool calling
  expects: ``{"type": "function", "function": {"name", "description", "parameters"}}``.
- :func:`call_tool` runs one of those tools on a ``Memory`` from JSON arguments.
- :func:`register_tools` hands every tool, as a typed Python function, to a framework
  object with ``register_tool(fn)`` or ``tool(fn)``.
- :func:`auto_recall` decorates a handler so that it receives the memories recalled for
  its input.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import ValidationError

from ..engine.core.domain import QUERY_MAX
from ..engine.core.errors import InvalidInput
from . import edge
from .core import RecallInput, RecallOutput, recall
from .registry import ToolSpec, available_tools, tool_by_name

if TYPE_CHECKING:
    from ..engine.facade.memory import Memory

__all__ = ["auto_recall", "call_tool", "register_tools", "render_recall", "tool_specs"]

F = TypeVar("F", bound=Callable[..., Any])


def tool_specs() -> list[dict[str, Any]]:
    """Every tool as an OpenAI-style function spec (JSON schema parameters)."""
    return [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.input.model_json_schema(),
            },
        }
        for spec in available_tools()
    ]


def _spec(name: str) -> ToolSpec:
    spec = tool_by_name(name)
    if spec is None or not spec.available:
        known = ", ".join(s.name for s in available_tools())
        raise InvalidInput(f"no tool named {name!r}; the tools are: {known}")
    return spec


def call_tool(
    memory: Memory,
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    namespace: str = "default",
) -> dict[str, Any]:
    """Run tool ``name`` with ``arguments`` (a dict or a JSON string, as a model sends them).

    Returns the tool's structured output as JSON-ready data. Bad arguments raise
    ``InvalidInput`` with the validation message; engine errors propagate unchanged.
    """
    spec = _spec(name)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"arguments for {name} are not JSON: {exc}") from None
    try:
        args = edge.parse(spec, arguments)
    except ValidationError as exc:
        raise InvalidInput(f"bad arguments for {name}: {exc}") from None
    # In process, the caller's own actor stands (Memory.acting_as), not "mcp".
    out = edge.call(spec, memory, args, default_namespace=namespace, actor=None)
    dumped: dict[str, Any] = out.model_dump(mode="json")
    return dumped


def _as_function(spec: ToolSpec, memory: Memory, namespace: str) -> Callable[..., dict[str, Any]]:
    """A plain Python function with the tool's flat, annotated signature and docstring."""
    params = [
        inspect.Parameter(
            field_name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[field.annotation, field],
            default=inspect.Parameter.empty if field.is_required() else field.get_default(
                call_default_factory=True
            ),
        )
        for field_name, field in spec.input.model_fields.items()
    ]

    def tool(**kwargs: Any) -> dict[str, Any]:
        return call_tool(memory, spec.name, kwargs, namespace=namespace)

    tool.__name__ = tool.__qualname__ = spec.name
    tool.__doc__ = spec.description
    tool.__signature__ = inspect.Signature(params, return_annotation=dict)  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in params} | {"return": dict}
    return tool


def register_tools(agent: Any, memory: Memory, *, namespace: str = "default") -> list[Any]:
    """Give every tool to ``agent`` via ``agent.register_tool(fn)``, else ``agent.tool(fn)``.

    Returns the functions handed over. Raises ``TypeError`` if the agent has neither.
    """
    register = getattr(agent, "register_tool", None) or getattr(agent, "tool", None)
    if not callable(register):
        raise TypeError("the agent has neither register_tool() nor tool(); use tool_specs()")
    functions = [_as_function(spec, memory, namespace) for spec in available_tools()]
    for fn in functions:
        register(fn)
    return functions


def _first_text(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    for value in (*args, *kwargs.values()):
        if isinstance(value, str) and value.strip():
            return value
    raise InvalidInput("auto_recall found no text argument to recall for; pass query=")


def auto_recall(
    memory: Memory,
    *,
    namespace: str = "default",
    limit: int = 5,
    max_tokens: int | None = None,
    query: Callable[..., str] | None = None,
    inject_as: str = "memories",
) -> Callable[[F], F]:
    """Decorate a handler so it gets ``memories=RecallOutput`` for its input.

    The query is ``query(*args, **kwargs)`` if given, else the first non-empty string
    argument. ``RecallOutput.hits`` are the memories; ``render_recall(out)`` is the
    quoted text rendering to put in a prompt. Works on sync and async handlers.
    """

    def recall_for(args: tuple[Any, ...], kwargs: dict[str, Any]) -> RecallOutput:
        text = query(*args, **kwargs) if query is not None else _first_text(args, kwargs)
        request = RecallInput(query=text[:QUERY_MAX], limit=limit, max_tokens=max_tokens)
        return recall(memory, request, namespace)

    def decorate(fn: F) -> F:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                kwargs[inject_as] = await asyncio.to_thread(recall_for, args, kwargs)
                return await fn(*args, **kwargs)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            kwargs[inject_as] = recall_for(args, kwargs)
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def render_recall(out: RecallOutput) -> str:
    """The quoted text rendering of a recall, as the MCP tool returns it."""
    spec = _spec("memory_recall")
    assert spec.render is not None
    return spec.render(out)

