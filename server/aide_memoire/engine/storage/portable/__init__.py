"""SQL both dialects run as written, in one place both backends use.

storage/sqlite/ and storage/postgres/ hold only what each dialect writes its own way
(FTS5 against the bm25 postings, vec0 against pgvector, json_each against jsonb, the
catalogue); a statement that runs unchanged on both lives here, once.
"""
