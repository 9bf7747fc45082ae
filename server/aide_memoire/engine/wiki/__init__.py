"""The memory as a wiki: linked Markdown pages written from the store, and their lint.

``export.export_wiki`` writes one page per entity, one per decision or pinned memory and
an index (``pages`` renders them, ``names`` makes their safe file names and writes only
what changed); ``lint.lint_wiki`` reads a folder of pages and names what is broken. The
service (services/wiki.py) is the one caller; the CLI and MCP are thin edges over it.
"""
