"""The explicit code index: walk a source tree, chunk it along syntax, search it.

``index.CodeIndex`` is the entry point; ``Memory.code_*`` delegate to it. Its tables and
their SQL are storage's (engine/storage/sqlite_steps.py).
"""
