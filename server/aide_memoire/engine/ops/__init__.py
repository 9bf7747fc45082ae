"""Operations on a store: snapshots and restore, the doctor, re-embedding.

Each works on a :class:`~aide_memoire.engine.storage.db.SqliteDatabase` (restore on a bare
file, since a store that needs restoring may not open); ``Memory`` exposes them as thin methods.
"""
