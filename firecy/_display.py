"""Number formats that the text outputs and the pictures share (a module
below both ``firecy.risk`` and ``firecy.plotting``, so neither imports the
other for them)."""

__all__ = ["risk_percent"]


def risk_percent(r):
    """A risk as a risk card prints it: one decimal, ``<0.1%`` and ``>99.9%``
    at the ends (a card never claims certainty)."""
    if r < 0.001:
        return "<0.1%"
    return f"{100 * r:.1f}%" if r <= 0.999 else ">99.9%"
