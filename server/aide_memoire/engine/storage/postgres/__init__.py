"""The PostgreSQL + pgvector backend (issue #19): a store on a server, shared by a team.

Needs the ``postgres`` extra (psycopg 3). What exists: :class:`PostgresDatabase`
(connections, transactions, migrations), the connection adapter the engine's
``Connection`` protocol describes, keyword search on full-text search, dense search on
pgvector HNSW, namespaces restricted to database roles, and the repositories of
engine/storage/repositories.py over them (:func:`postgres_repositories`). Not wired into
``Memory`` yet (docs/postgres.md says what is missing).
"""

from __future__ import annotations

import importlib.util

from ...core.errors import PartMissing

if importlib.util.find_spec("psycopg") is None:
    raise PartMissing(
        "the PostgreSQL backend needs psycopg: pip install 'aide-memoire[postgres]'",
        part="postgres",
        extra="postgres",
    )

from .bundle import postgres_repositories
from .connection import PgConnection, PgCursor
from .database import PostgresDatabase
from .keyword import index_document, keyword_search, unindex
from .purge import PurgeReport, purge
from .security import (
    grant_store_access,
    restrict_namespace,
    restricted_namespaces,
    unrestrict_namespace,
)
from .vectors import delete_vectors, ensure_space, insert_vectors, knn

__all__ = [
    "PgConnection", "PgCursor", "PostgresDatabase", "PurgeReport", "delete_vectors", "ensure_space",
    "grant_store_access", "index_document", "insert_vectors", "keyword_search", "knn",
    "postgres_repositories", "purge",
    "restrict_namespace", "restricted_namespaces", "unindex", "unrestrict_namespace",
]
