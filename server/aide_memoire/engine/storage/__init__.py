"""The data-access layer: the connection protocol and the repositories that own the SQL."""
