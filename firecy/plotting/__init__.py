"""Pictures of extracted rule sets, regularisation paths, risk cards and
one row's explanation.

matplotlib is imported only when a function here is called (install it with
``pip install matplotlib`` or ``pip install "firecy[plot]"``).  The functions
draw on a :class:`matplotlib.figure.Figure` of their own (no pyplot state, no
GUI backend needed) unless given an ``ax``, and return the figure.
"""
from firecy.plotting._explanation import plot_explanation
from firecy.plotting._path import plot_path
from firecy.plotting._risk import plot_risk_card
# the gids mark the drawn nodes and leaves, for users who restyle them
from firecy.plotting._rules import LEAF_GID, NODE_GID, plot_rules  # noqa: F401

# shared with firecy's other packages (not public API: see __all__)
from firecy.plotting._common import _require_matplotlib  # noqa: F401
from firecy.plotting._explanation import one_row  # noqa: F401

__all__ = ["plot_rules", "plot_path", "plot_risk_card", "plot_explanation"]
