"""Copying a store between backends (``aide-memoire migrate-store``), verified.

SQLite to PostgreSQL and back: every table the schema has (read from the source's own
catalogue, catalogue.py), rows hashed the same way on both sides (digest.py), one write
transaction on the target (copy.py), the source read-only (endpoints.py).
"""

from __future__ import annotations

from .copy import Progress, migrate_store
from .models import TableResult, TransferReport

__all__ = ["Progress", "TableResult", "TransferReport", "migrate_store"]
