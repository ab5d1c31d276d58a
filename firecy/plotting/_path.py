"""``plot_path``: the error along a regularisation path against the number of
terms (rules, and linear terms when the fit has them)."""
from __future__ import annotations

import numpy as np

from firecy._escape import printable_texts
from firecy.plotting._common import _require_matplotlib

__all__ = ["plot_path"]


def _get(path, key, default=None):
    if isinstance(path, dict):
        return path.get(key, default)
    try:
        return path[key]
    except (TypeError, KeyError, IndexError):
        return getattr(path, key, default)


def plot_path(path, ax=None, budget=None, *, label=None, selected=None, metric=None,
              linear_terms=None, **line_kwargs):
    """Error along a regularisation path against the number of terms.

    A path's ``n_rules`` counts the nonzero weights at each point: the rules
    and, for a fit with linear terms, the linear terms. The x axis says which:
    "number of terms (rules and linear terms)" for a fit that offers linear
    terms, "number of rules" for one that does not, "number of terms" for a
    path of unknown origin.

    Parameters
    ----------
    path : fitted FIRE estimator, dict-like or PathResult
        An estimator (its ``path_`` is drawn, and its ``linear_terms_`` say
        what the count counts), or a path with arrays ``n_rules`` and
        ``validation_error`` (an estimator's ``path_``); ``objectives`` is
        plotted when there is no ``validation_error``. A stable fit's ``stability`` (see
        :class:`~firecy.FIRERegressor`'s ``stable``) is drawn dotted on a
        second axis, 0 to 1, beside the error.
    ax : matplotlib Axes, optional
        Draw here (call again with the same ``ax`` to compare paths).
    budget : int, optional
        Draw the rule budget as a vertical line.
    label : str, optional
        Legend label of this path.
    selected : int, optional
        Index of the selected point, marked with a star (default: the
        path's ``selected`` entry if it has one).
    metric : str, optional
        Y-axis label (default: "validation error" or "objective").
    linear_terms : bool, optional
        Whether the path's counts include linear terms (default: read from
        the estimator; unknown for a bare path, whose x label then says
        "number of terms", or keeps the label ``ax`` already has).
    **line_kwargs
        Passed to ``ax.plot``.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> from firecy.plotting import plot_path
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, max_rules=3, n_lambdas=5, cv=2, random_state=0).fit(X, y)
    >>> fig = plot_path(fire, budget=3, label="MCP")
    >>> ax = fig.axes[0]
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('number of terms (rules and linear terms)', 'validation error')

    The curve is the validation error against the number of terms, at the
    points the selection validated (the others carry ``inf``):

    >>> line = ax.get_lines()[0]
    >>> line.get_label()
    'MCP'
    >>> validated = np.isfinite(fire.path_.validation_error)
    >>> bool(np.array_equal(line.get_xdata(), fire.path_.n_rules[validated]))
    True
    >>> bool(np.array_equal(line.get_ydata(), fire.path_.validation_error[validated]))
    True
    """
    Figure = _require_matplotlib()
    if hasattr(path, "path_"):          # a fitted estimator
        if linear_terms is None:
            linear_terms = len(getattr(path, "linear_terms_", None) or ()) > 0
        path = path.path_
    n_rules = np.asarray(_get(path, "n_rules"), dtype=float)
    err = _get(path, "validation_error")
    ylabel = "validation error"
    if err is None:
        err, ylabel = _get(path, "objectives"), "objective"
    if err is None:
        raise ValueError("the path has neither 'validation_error' nor 'objectives'")
    err = np.asarray(err, dtype=float)
    if ax is None:
        fig = Figure(figsize=(6.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    line_kwargs.setdefault("marker", "o")
    line_kwargs.setdefault("markersize", 3.5)
    # points the selection did not validate (beyond the rule budget, or an
    # inserted point that repeats a rule count) carry an infinite error
    ok = np.isfinite(err) & np.isfinite(n_rules)
    (line,) = ax.plot(n_rules[ok], err[ok], label=label, **line_kwargs)
    if selected is None:
        selected = _get(path, "selected")
    if selected is not None and np.ndim(selected) == 0 and ok[int(selected)]:
        k = int(selected)
        ax.plot([n_rules[k]], [err[k]], marker="*", markersize=14, color=line.get_color(),
                markeredgecolor="black", linestyle="none", zorder=5)
    if budget is not None and not any(getattr(l, "_firecy_budget", False) for l in ax.lines):
        vl = ax.axvline(budget, color="0.4", linestyle="--", lw=1)
        vl._firecy_budget = True
        ax.text(budget, 0.98, f"budget {budget} ", transform=ax.get_xaxis_transform(),
                va="top", ha="right", fontsize=8, color="0.3")
    if linear_terms is not None or not ax.get_xlabel():
        ax.set_xlabel(_count_label(linear_terms))
    ax.set_ylabel(metric or ylabel)
    ax.grid(True, alpha=0.3)
    _draw_stability(ax, path, n_rules, ok, line.get_color())
    if label is not None:
        ax.legend()
    return printable_texts(fig)


def _count_label(linear_terms):
    """What a path's ``n_rules`` counts, in words."""
    if linear_terms is None:
        return "number of terms"
    return "number of terms (rules and linear terms)" if linear_terms else "number of rules"


def _draw_stability(ax, path, n_rules, ok, color):
    """A stable fit's ``stability`` on a second axis: how far random halves of
    the rows agree on the rules, beside the error (the trade-off to choose on)."""
    stab = _get(path, "stability")
    if stab is None or np.size(stab) != n_rules.size:
        return
    stab = np.asarray(stab, dtype=float)
    shown = ok & np.isfinite(stab)
    if not shown.any():
        return
    twin = ax.twinx()
    twin.plot(n_rules[shown], stab[shown], linestyle=":", marker="s", markersize=3,
              color=color, alpha=0.8)
    twin.set_ylim(0.0, 1.05)
    twin.set_ylabel("stability (halves' rules in common, Dice)")
