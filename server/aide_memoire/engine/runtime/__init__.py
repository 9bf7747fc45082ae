"""The running engine: the context every feature and service is handed, and the write pipeline."""
