"""The explicit code index: walk a source tree, chunk it along syntax, search it.

``index.CodeIndex`` is the entry point; ``Memory.code_*`` delegate to it. This package
file imports nothing, so that migrations.py can read ``schema.SCHEMA_SQL`` without
pulling in the database module that imports migrations.
"""
