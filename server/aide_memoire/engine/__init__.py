"""The headless engine: storage, retrieval and lifecycle. Imports nothing from MCP or the CLI."""
