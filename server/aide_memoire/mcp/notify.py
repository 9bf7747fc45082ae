"""Telling subscribed clients that a write changed what a resource shows.

After a successful write in a namespace, the resources of that namespace (its recent
memories, its review queue, the memory written, ``memory://status``) may read
differently, and a namespace seen for the first time adds resources to the list.

- Up to 2025-11-25 a client subscribes with ``resources/subscribe``; it then gets
  ``notifications/resources/updated`` for each subscribed URI the write touched, and
  ``notifications/resources/list_changed`` when a write creates a namespace (a client
  that subscribed to nothing is sent nothing unasked).
- From 2026-07-28 a client opens a ``subscriptions/listen`` stream naming the URIs (and
  whether it wants list changes); the same events go through the SDK's in-process bus,
  whose listen handler delivers only what each stream asked for.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
)

from .resources import STATUS_URI, TEMPLATES, touched_by

__all__ = ["Changes"]

log = logging.getLogger(__name__)
_BY_NAME = {t.name: t for t in TEMPLATES}


class Changes:
    """The server's subscriptions (both eras) and the namespaces it has seen."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        # Legacy subscriptions, per connection: (a session to notify through, its URIs).
        self._subscribed: dict[int, tuple[Any, set[str]]] = {}
        self._namespaces: set[str] | None = None
        self._lock = threading.Lock()

    @staticmethod
    def _key(session: Any) -> int:
        # A ServerSession is made per request; the connection under it is the client.
        return id(getattr(session, "_connection", session))

    def subscribe(self, session: Any, uri: str) -> None:
        key = self._key(session)
        _, uris = self._subscribed.get(key, (session, set()))
        uris.add(uri)
        self._subscribed[key] = (session, uris)

    def unsubscribe(self, session: Any, uri: str) -> None:
        found = self._subscribed.get(self._key(session))
        if found is not None:
            found[1].discard(uri)

    def subscriptions(self, session: Any) -> set[str]:
        found = self._subscribed.get(self._key(session))
        return set() if found is None else set(found[1])

    def know(self, namespaces: set[str]) -> None:
        """The namespaces the store holds (read once, on the first write)."""
        with self._lock:
            if self._namespaces is None:
                self._namespaces = set(namespaces)

    @property
    def known(self) -> bool:
        return self._namespaces is not None

    def _new_namespace(self, namespace: str) -> bool:
        with self._lock:
            if self._namespaces is None or namespace in self._namespaces:
                return False
            self._namespaces.add(namespace)
            return True

    async def written(self, namespace: str, memory_id: str | None) -> None:
        """Notify what a write in ``namespace`` (of ``memory_id``, if one) changed."""
        uris = [STATUS_URI, _BY_NAME["recent"].uri(namespace=namespace),
                _BY_NAME["review"].uri(namespace=namespace)]
        if memory_id:
            uris.append(_BY_NAME["memory"].uri(namespace=namespace, id=memory_id))
        listed = self._new_namespace(namespace)
        for uri in uris:
            await self.bus.publish(ResourceUpdated(uri=uri))
        if listed:
            await self.bus.publish(ResourcesListChanged())
        for key, (subscriber, subscribed) in list(self._subscribed.items()):
            try:
                for uri in sorted(subscribed):
                    if uri in uris or touched_by(uri, namespace):
                        await subscriber.send_resource_updated(uri)
                if listed and subscribed:
                    await subscriber.send_resource_list_changed()
            except Exception as exc:  # noqa: BLE001 - a gone client must not fail the write
                log.warning("dropping a subscription whose client is gone: %s", exc)
                self._subscribed.pop(key, None)
