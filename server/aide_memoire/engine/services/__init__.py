"""The engine's services, each owning its state, all built from one EngineContext.

:func:`start_services` makes them in :data:`SERVICE_ORDER`; the order is what the
recall adjusters and write hooks run in (lifecycle's before the facts layer's).
``Memory`` is the facade over them; no service imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .code import CodeService
from .exchange import ExchangeService
from .facts import FactsService
from .lifecycle import LifecycleService
from .operations import OperationsService
from .recall import RecallService
from .records import RecordsService
from .trust import TrustService
from .wiki import WikiService

if TYPE_CHECKING:
    from ..runtime.context import EngineContext

__all__ = [
    "SERVICE_ORDER",
    "CodeService",
    "ExchangeService",
    "FactsService",
    "LifecycleService",
    "OperationsService",
    "RecallService",
    "RecordsService",
    "Services",
    "TrustService",
    "WikiService",
    "start_services",
]

SERVICE_ORDER = (
    "trust", "records", "recall", "lifecycle", "facts", "exchange", "operations", "code",
    "wiki",
)


@dataclass(frozen=True)
class Services:
    trust: TrustService
    records: RecordsService
    recall: RecallService
    lifecycle: LifecycleService
    facts: FactsService
    exchange: ExchangeService
    operations: OperationsService
    code: CodeService
    wiki: WikiService

    def close(self) -> None:
        """Stop what the services started (the background runner), newest first."""
        self.lifecycle.close()


def start_services(ctx: EngineContext) -> Services:
    """Every service over ``ctx``, in :data:`SERVICE_ORDER`."""
    trust = TrustService(ctx)
    records = RecordsService(ctx)
    recall = RecallService(ctx)
    lifecycle = LifecycleService(ctx)  # its adjuster and hook first: they run first
    try:
        facts = FactsService(ctx, records)
        return Services(
            trust=trust, records=records, recall=recall, lifecycle=lifecycle, facts=facts,
            exchange=ExchangeService(ctx),
            operations=OperationsService(ctx, recall=recall, facts=facts, lifecycle=lifecycle),
            code=CodeService(ctx),
            wiki=WikiService(ctx),
        )
    except BaseException:
        lifecycle.close()  # its background thread must not outlive a failed start
        raise
