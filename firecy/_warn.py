"""Warnings that point at the user's line: :func:`user_stacklevel`."""
import sys

__all__ = ["user_stacklevel"]


def user_stacklevel():
    """The ``stacklevel`` for :func:`warnings.warn` that names the first
    caller outside firecy, however deep inside firecy the warning is raised
    (a fixed number breaks whenever a call moves)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("firecy."):
        frame, level = frame.f_back, level + 1
    return level
