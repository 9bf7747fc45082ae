"""The kernel: domain words, models, errors, clock, text, validation and settings.

Imports nothing else of the engine; every other layer builds on it.
"""
