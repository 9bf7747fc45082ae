"""The code index's tables (SQLite only, by decision: docs/architecture.md, "Data access").

Its SQL lives here, beside storage/sqlite/ (the tables are made by
storage/sqlite_steps.py): ``files`` writes and reads roots, files, chunks, symbols, prose
pages and their links; ``search`` ranks chunks with FTS5's bm25 and finds symbols;
``vectors`` keeps the chunks' dense vectors. engine/code/ walks, parses, chunks and
ranks, and reaches the tables only through these functions.
"""
