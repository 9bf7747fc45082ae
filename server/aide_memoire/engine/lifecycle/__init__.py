"""Lifecycle: utility scoring at query time, feedback, deduplication, consolidation, tiers
and the maintenance runner (see docs/lifecycle.md)."""
