"""The facade: Memory and AsyncMemory, the context they are built from, and the write pipeline."""
