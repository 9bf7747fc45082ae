"""The facade: Memory and AsyncMemory, thin fronts over the services."""
