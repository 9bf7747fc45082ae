"""The ``aide-memoire`` command line: thin wrappers over one engine call each."""
