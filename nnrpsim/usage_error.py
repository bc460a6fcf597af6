"""The command line's one complaint about its own input (the protocol and scenario layers
raise theirs): printed as one line ``error: <what>: <reason>``, exit status 2."""


class UsageError(Exception):
    """A one-line complaint about the command line or its input."""
