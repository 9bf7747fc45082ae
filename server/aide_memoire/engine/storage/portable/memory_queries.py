"""The memories table, both dialects: the lookups and status changes features ask for.

Part of the memories repository (``PortableMemoryRows`` extends this class), kept apart
from the row reads and writes so each file stays small: exact-duplicate and merge
lookups (lifecycle), usage statistics (scoring), supersession (facts), content hashes
(re-embedding). The metadata reads and access counts are each dialect's own.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterator, Sequence

from ..protocol import Connection

__all__ = ["MemoryQueries"]


class MemoryQueries:
    """Lookups on ``memories`` by id, rowid or namespace; no index is touched here."""

    def size_hint(self, conn: Connection) -> int:
        """An upper bound on the number of memories, in O(1)."""
        return int(conn.execute("SELECT COALESCE(max(rowid), 0) FROM memories").fetchone()[0])

    def speaker_names(self, conn: Connection, namespace: str) -> builtins.list[str]:
        """Distinct speakers of a namespace's turns."""
        return [
            str(s)
            for (s,) in conn.execute(
                "SELECT DISTINCT speaker FROM memories WHERE namespace = ? AND speaker IS NOT NULL",
                (namespace,),
            )
        ]

    def exact_duplicate_rows(
        self, conn: Connection, namespace: str
    ) -> builtins.list[tuple[str, str, str, str, builtins.list[str]]]:
        """(id, content hash, kind, text, tags) of active non-turn memories whose hash and
        kind another such memory shares, oldest first."""
        rows = conn.execute(
            "SELECT id, content_hash, kind, content, tags FROM memories WHERE namespace = ? "
            "AND status = 'active' AND session_id IS NULL AND content_hash IN ("
            "  SELECT content_hash FROM memories WHERE namespace = ? AND status = 'active' "
            "  AND session_id IS NULL GROUP BY content_hash, kind HAVING count(*) > 1) "
            "ORDER BY rowid",
            (namespace, namespace),
        ).fetchall()
        return [(str(i), str(h), str(k), str(c), list(json.loads(t))) for i, h, k, c, t in rows]

    def active_tags_importance(
        self, conn: Connection, memory_id: str, namespace: str
    ) -> tuple[int, builtins.list[str], float] | None:
        """(rowid, tags, importance) of an active memory."""
        found = conn.execute(
            "SELECT rowid, tags, importance FROM memories WHERE id = ? AND namespace = ? "
            "AND status = 'active'", (memory_id, namespace),
        ).fetchone()
        return (int(found[0]), list(json.loads(found[1])), float(found[2])) if found else None

    def active_id_at(
        self, conn: Connection, rowid: int, namespace: str, kind: str
    ) -> str | None:
        """The id of the row at ``rowid`` if it is an active ``kind`` of ``namespace``."""
        found = conn.execute(
            "SELECT id FROM memories WHERE rowid = ? AND namespace = ? AND kind = ? "
            "AND status = 'active'", (rowid, namespace, kind),
        ).fetchone()
        return str(found[0]) if found else None

    def usage(
        self, conn: Connection, rowids: Sequence[int]
    ) -> Iterator[tuple[int, float, float, int, str, str | None, int]]:
        """(rowid, importance, utility, access count, created_at, last_accessed_at,
        helpful votes) of the given rows, 500 at a time (lifecycle scoring)."""
        for start in range(0, len(rowids), 500):
            chunk = list(rowids[start : start + 500])
            for r, imp, util, count, created, accessed, helpful in conn.execute(
                "SELECT m.rowid, m.importance, m.utility, m.access_count, m.created_at, "
                "m.last_accessed_at, COALESCE(f.helpful, 0) FROM memories m "
                "LEFT JOIN memory_feedback f ON f.memory_id = m.id "
                f"WHERE m.rowid IN ({','.join('?' * len(chunk))})",
                chunk,
            ):
                yield (int(r), float(imp), float(util), int(count), str(created), accessed,
                       int(helpful))

    def summary_sources(
        self, conn: Connection, ids: Sequence[str]
    ) -> Iterator[tuple[str, str, builtins.list[str], str | None, str, float]]:
        """(id, text, tags, observed_at, created_at, importance) of the given ids."""
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            for memory_id, content, tags, observed, created, importance in conn.execute(
                "SELECT id, content, tags, observed_at, created_at, importance FROM memories "
                f"WHERE id IN ({','.join('?' * len(chunk))})", chunk,
            ):
                yield (str(memory_id), str(content), list(json.loads(tags)), observed,
                       str(created), float(importance))

    def replacements(
        self, conn: Connection, rowids: Sequence[int]
    ) -> builtins.list[tuple[int, int]]:
        """(rowid, rowid of the memory that superseded it) among ``rowids``."""
        if not rowids:
            return []
        return [
            (int(a), int(b))
            for a, b in conn.execute(
                "SELECT m.rowid, r.rowid FROM memories m JOIN memories r "
                "ON r.id = m.superseded_by AND r.namespace = m.namespace "
                f"WHERE m.rowid IN ({','.join('?' * len(rowids))})",
                list(rowids),
            )
        ]

    def count_in(self, conn: Connection, namespaces: Sequence[str]) -> int:
        """Memories (any status) in the given namespaces."""
        (count,) = conn.execute(
            f"SELECT count(*) FROM memories WHERE namespace IN ({','.join('?' * len(namespaces))})",
            list(namespaces),
        ).fetchone()
        return int(count)

    def content_hashes(self, conn: Connection, rowids: Sequence[int]) -> dict[int, str]:
        """Content hash of each given row that still exists."""
        if not rowids:
            return {}
        return {
            int(r): str(h)
            for r, h in conn.execute(
                f"SELECT rowid, content_hash FROM memories WHERE rowid IN "
                f"({','.join('?' * len(rowids))})", list(rowids),
            )
        }

    def mark_superseded_by(self, tx: Connection, memory_id: str, namespace: str, by: str) -> None:
        """Record ``by`` as the replacement of a memory that has none yet (status kept)."""
        tx.execute(
            "UPDATE memories SET superseded_by = ? WHERE id = ? AND namespace = ? "
            "AND superseded_by IS NULL",
            (by, memory_id, namespace),
        )

    def kind_status_replacement(
        self, conn: Connection, memory_id: str, namespace: str
    ) -> tuple[str, str, str | None] | None:
        """(kind, status, superseded_by) of a memory."""
        found = conn.execute(
            "SELECT kind, status, superseded_by FROM memories WHERE id = ? AND namespace = ?",
            (memory_id, namespace),
        ).fetchone()
        return (str(found[0]), str(found[1]), found[2]) if found else None

    def set_superseded(
        self, tx: Connection, memory_id: str, namespace: str, *, status: str,
        valid_to: str | None, by: str, at: str,
    ) -> None:
        tx.execute(
            "UPDATE memories SET status = ?, valid_to = ?, superseded_by = ?, updated_at = ? "
            "WHERE id = ? AND namespace = ?",
            (status, valid_to, by, at, memory_id, namespace),
        )

    def retire_replaced(
        self, tx: Connection, memory_id: str, namespace: str, *, valid_to: str, by: str, at: str
    ) -> None:
        """Superseded by ``by`` from ``valid_to`` (a quarantined memory keeps its status)."""
        tx.execute(
            "UPDATE memories SET status = CASE WHEN status = 'quarantined' THEN status "
            "ELSE 'superseded' END, valid_to = ?, superseded_by = ?, updated_at = ? "
            "WHERE id = ? AND namespace = ?",
            (valid_to, by, at, memory_id, namespace),
        )

    # -- the services' lookups (engine/services/) -------------------------------------

    def existing_ids(self, conn: Connection, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` already stored, in any namespace (import skips them)."""
        if not ids:
            return set()
        return {str(i) for (i,) in conn.execute(
            f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(ids))})", list(ids))}

    def content_hash_of(self, conn: Connection, memory_id: str, namespace: str) -> str | None:
        found = conn.execute(
            "SELECT content_hash FROM memories WHERE id = ? AND namespace = ?",
            (memory_id, namespace),
        ).fetchone()
        return str(found[0]) if found else None

    def set_utility(self, tx: Connection, memory_id: str, value: float) -> None:
        """The feedback estimate recall's scoring reads; the text and its indexes stay."""
        tx.execute("UPDATE memories SET utility = ? WHERE id = ?", (value, memory_id))

    def count_status(self, conn: Connection, namespace: str, status: str) -> int:
        (count,) = conn.execute(
            "SELECT count(*) FROM memories WHERE namespace = ? AND status = ?",
            (namespace, status),
        ).fetchone()
        return int(count)

    def maintained_namespaces(self, conn: Connection) -> builtins.list[str]:
        """Namespaces that hold memories or have a maintenance run on record, sorted."""
        return [str(n) for (n,) in conn.execute(
            "SELECT DISTINCT namespace FROM memories UNION "
            "SELECT DISTINCT namespace FROM maintenance_runs ORDER BY 1")]

    def contents(self, conn: Connection, namespace: str) -> dict[str, str]:
        """Id -> text of every memory of a namespace (any status)."""
        return {str(i): str(c) for i, c in conn.execute(
            "SELECT id, content FROM memories WHERE namespace = ?", (namespace,))}

    def undo_supersession(self, tx: Connection, memory_id: str, namespace: str, by: str) -> None:
        """Reopen a memory that ``by`` superseded: active again (unless another status
        stands), no end of validity, no replacement."""
        tx.execute(
            "UPDATE memories SET status = CASE WHEN status = 'superseded' THEN 'active' "
            "ELSE status END, valid_to = NULL, superseded_by = NULL "
            "WHERE id = ? AND namespace = ? AND superseded_by = ?",
            (memory_id, namespace, by),
        )

    # -- lifecycle maintenance (engine/lifecycle/) ------------------------------------

    def active_content_importance(
        self, conn: Connection, memory_id: str, namespace: str
    ) -> tuple[str, float] | None:
        """(text, importance) of an active memory (a consolidation's source)."""
        found = conn.execute(
            "SELECT content, importance FROM memories WHERE id = ? AND namespace = ? "
            "AND status = 'active'", (memory_id, namespace),
        ).fetchone()
        return (str(found[0]), float(found[1])) if found else None

    def namespaces_unmaintained_since(self, conn: Connection, cutoff: str) -> builtins.list[str]:
        """Namespaces holding memories with no maintenance run started after ``cutoff``."""
        return [str(n) for (n,) in conn.execute(
            "SELECT DISTINCT m.namespace FROM memories m WHERE NOT EXISTS (SELECT 1 FROM "
            "maintenance_runs r WHERE r.namespace = m.namespace AND r.started_at > ?)",
            (cutoff,))]

    def demotion_candidates(
        self, conn: Connection, namespace: str
    ) -> builtins.list[tuple[str, float, str, str | None, int, int, int, int]]:
        """(id, importance, created_at, last_accessed_at, access count, helpful, unhelpful,
        wrong) of a namespace's active memories that may go cold (no turns, no summaries),
        oldest first."""
        return [
            (str(i), float(imp), str(c), None if a is None else str(a), int(n), int(h), int(u),
             int(w))
            for i, imp, c, a, n, h, u, w in conn.execute(
                "SELECT m.id, m.importance, m.created_at, m.last_accessed_at, m.access_count, "
                "COALESCE(f.helpful, 0), COALESCE(f.unhelpful, 0), COALESCE(f.wrong, 0) "
                "FROM memories m LEFT JOIN memory_feedback f ON f.memory_id = m.id "
                "WHERE m.namespace = ? AND m.status = 'active' AND m.session_id IS NULL "
                "AND m.kind != 'summary' ORDER BY m.rowid", (namespace,),
            )
        ]
