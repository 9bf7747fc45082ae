"""The SQLite implementations of the data layer's repositories (FTS5, sqlite-vec)."""
