"""How the command reports a problem: one line on stderr, never a traceback."""

__all__ = ["PROG", "CLIError", "one_line"]

PROG = "firecy"


class CLIError(Exception):
    """A problem with the user's input: printed as one line, exit status 1."""


def one_line(exc):
    """The first line of an exception's message (its type if it has none)."""
    text = str(exc).strip()
    if not text:
        return type(exc).__name__
    first = text.splitlines()[0]
    return first if len(first) < 400 else first[:397] + "..."
