"""A lease per namespace, so that two maintenance runners never work the same one.

Taken and released in short write transactions; a runner that died leaves a lease
that expires on its own (and its run is marked interrupted by the next runner).
"""

from __future__ import annotations

from datetime import timedelta

from ..core import clock
from ..core.errors import MaintenanceBusy
from ..storage.protocol import Connection

__all__ = ["LEASE_MINUTES", "acquire", "holder", "release"]

LEASE_MINUTES = 15.0


def acquire(tx: Connection, namespace: str, holder_id: str) -> None:
    """Take the namespace's lease or raise MaintenanceBusy naming who holds it."""
    now = clock.now()
    stamp = clock.format_time(now)
    found = tx.execute(
        "SELECT holder, expires_at FROM maintenance_leases WHERE namespace = ?", (namespace,)
    ).fetchone()
    if found is not None and str(found[1]) > stamp:
        raise MaintenanceBusy(
            f"maintenance of {namespace!r} is already running (run {found[0]}, lease until "
            f"{found[1]}); wait for it to finish, or until the lease expires"
        )
    if found is not None:  # its holder died: its run did not finish
        tx.execute(
            "UPDATE maintenance_runs SET status = 'interrupted', finished_at = ? "
            "WHERE id = ? AND status = 'running'", (stamp, found[0]),
        )
    expires = clock.format_time(now + timedelta(minutes=LEASE_MINUTES))
    tx.execute(
        "INSERT INTO maintenance_leases (namespace, holder, acquired_at, expires_at) "
        "VALUES (?, ?, ?, ?) ON CONFLICT (namespace) DO UPDATE SET holder = excluded.holder, "
        "acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
        (namespace, holder_id, stamp, expires),
    )


def release(tx: Connection, namespace: str, holder_id: str) -> None:
    tx.execute(
        "DELETE FROM maintenance_leases WHERE namespace = ? AND holder = ?", (namespace, holder_id)
    )


def holder(conn: Connection, namespace: str) -> str | None:
    found = conn.execute(
        "SELECT holder FROM maintenance_leases WHERE namespace = ? AND expires_at > ?",
        (namespace, clock.format_time(clock.now())),
    ).fetchone()
    return str(found[0]) if found else None
