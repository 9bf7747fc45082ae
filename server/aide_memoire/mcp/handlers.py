"""Tool handlers: each takes the engine, validated arguments and the default namespace,
makes its engine call and returns the tool's output model. No MCP types here, so the
same handlers serve in-process agents (see ``agents``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..engine.errors import NotFound
from ..engine.facts.models import MemoryDetail
from . import models as m
from .render import estimate_tokens, render_memory

if TYPE_CHECKING:
    from ..engine.memory import Memory

__all__ = [
    "forget",
    "get",
    "recall",
    "search",
    "status",
    "store",
    "store_conversation",
]


def store(memory: Memory, args: m.StoreInput, default_ns: str) -> m.StoreOutput:
    namespace = args.namespace or default_ns
    memory_id = memory.store(
        args.content,
        namespace=namespace,
        kind=args.kind,
        tags=args.tags,
        importance=args.importance,
        metadata=args.metadata,
        observed_at=args.observed_at,
        source=args.source,
        supersedes=args.supersedes,
    )
    return m.StoreOutput(id=memory_id, namespace=namespace)


def store_conversation(
    memory: Memory, args: m.StoreConversationInput, default_ns: str
) -> m.StoreConversationOutput:
    namespace = args.namespace or default_ns
    turns = [turn.model_dump(exclude_none=True) for turn in args.turns]
    ids = memory.store_conversation(
        turns,
        namespace=namespace,
        session_id=args.session_id,
        observed_at=args.observed_at,
        context_turns=args.context_turns,
        source=args.source,
    )
    # The engine names a new session itself; read it back so the agent can continue it.
    session = args.session_id or memory.get(ids[0], namespace=namespace).session_id
    return m.StoreConversationOutput(ids=ids, session_id=session, namespace=namespace)


def recall(memory: Memory, args: m.RecallInput, default_ns: str) -> m.RecallOutput:
    namespace = args.namespace or default_ns
    hits = memory.recall(
        args.query,
        namespace=namespace,
        limit=args.limit,
        kinds=args.kinds or None,
        tags=args.tags or None,
        since=args.since,
        until=args.until,
        as_of=args.as_of,
        include_superseded=args.include_superseded,
    )
    omitted = 0
    if args.max_tokens is not None:
        kept, used = [], 0
        for hit in hits:
            cost = estimate_tokens(render_memory(hit)) + 1
            if used + cost > args.max_tokens:
                break
            kept.append(hit)
            used += cost
        omitted = len(hits) - len(kept)
        hits = kept
    return m.RecallOutput(query=args.query, namespace=namespace, hits=hits, omitted=omitted)


def search(memory: Memory, args: m.SearchInput, default_ns: str) -> m.SearchOutput:
    namespace = args.namespace or default_ns
    records = memory.search(
        namespace=namespace,
        tags=args.tags or None,
        kinds=args.kinds or None,
        min_importance=args.min_importance,
        since=args.since,
        until=args.until,
        as_of=args.as_of,
        include_superseded=args.include_superseded,
        limit=args.limit,
    )
    return m.SearchOutput(namespace=namespace, memories=records)


def get(memory: Memory, args: m.GetInput, default_ns: str) -> MemoryDetail:
    return memory.get_detail(args.id, namespace=args.namespace or default_ns)


def forget(memory: Memory, args: m.ForgetInput, default_ns: str) -> m.ForgetOutput:
    namespace = args.namespace or default_ns
    if not memory.forget(args.id, namespace=namespace):
        # As the CLI exits 1: forgetting what is not there is an error the agent must see
        # (a wrong id or namespace), not a silent success.
        raise NotFound(f"no memory {args.id!r} in namespace {namespace!r}; nothing was "
                       "forgotten (check the id with memory_recall or memory_get)")
    return m.ForgetOutput(id=args.id, namespace=namespace, forgotten=True)


def status(memory: Memory, args: m.StatusInput, default_ns: str) -> m.StatusOutput:
    report = memory.status()
    return m.StatusOutput(**report.model_dump(), default_namespace=default_ns)
