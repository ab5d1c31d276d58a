"""``plot_risk_card``: a risk card's points table and reliability curve."""
from __future__ import annotations

import textwrap

import numpy as np

from firecy._display import risk_percent
from firecy._escape import printable_texts
from firecy.plotting._common import _require_matplotlib

__all__ = ["plot_risk_card"]


def plot_risk_card(card, *, wrap=44, figsize=None, figure=None):
    """Draw a risk card: the points table and the reliability curve.

    Parameters
    ----------
    card : RiskCard
        From :func:`firecy.risk.risk_card`.
    wrap : int, default=44
        Characters per line of a rule's text.
    figsize : (float, float), optional
    figure : matplotlib.figure.Figure, optional
        An empty figure to draw into, e.g. ``plt.figure()`` to draw under
        pyplot (a notebook, sphinx-gallery); by default a standalone
        ``Figure`` that pyplot does not manage (save it, or display it).

    Returns
    -------
    matplotlib.figure.Figure
        Left: the rules and their points, the starting points, and the
        score -> risk table. Right: the reliability curve on the data the
        card was built on, the card's risk of each score against the observed
        frequency of the event among the rows with that score (marker area
        proportional to the rows), with the diagonal of perfect calibration.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from firecy import FIREClassifier
    >>> from firecy.plotting import plot_risk_card
    >>> from firecy.risk import risk_card
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> forest = RandomForestClassifier(n_estimators=30, max_depth=2, random_state=0)
    >>> fire = FIREClassifier(forest, max_rules=4, linear_terms=False, random_state=0).fit(X, y)
    >>> fig = plot_risk_card(risk_card(fire, X, y))
    >>> len(fig.axes)
    2
    """
    Figure = _require_matplotlib()
    rows = []
    for i, (rule, pts) in enumerate(zip(card.rules, card.points), 1):
        lines = textwrap.wrap(rule, wrap, break_on_hyphens=False) or [rule]
        rows.append((f"{i}.", "\n".join(lines), f"{int(pts):+d}"))
    rows.append(("", "everyone starts with", f"{card.intercept_points:+d}"))
    n_lines = sum(r[1].count("\n") + 1 for r in rows) + 6
    if figsize is None:
        figsize = (12.0, max(4.0, 0.28 * n_lines + 1.5))
    if figure is None:
        fig = Figure(figsize=figsize, layout="constrained")
    else:
        fig = figure
        fig.set_size_inches(figsize)
        fig.set_layout_engine("constrained")
    ax_t, ax_r = fig.subplots(1, 2, width_ratios=[1.5, 1.0])

    ax_t.axis("off")
    # parse_math=False on every text from the data: a "$" in a label or a
    # feature name must print as itself, not start matplotlib's mathtext
    ax_t.set_title(f"risk of {card.event!r}: add the points of the rules that hold",
                   fontsize=10, loc="left", parse_math=False)
    y = 1.0
    step = 1.0 / max(n_lines, 12)
    for num, text, pts in rows:
        ax_t.text(0.0, y, num, va="top", ha="left", fontsize=9, transform=ax_t.transAxes)
        ax_t.text(0.05, y, text, va="top", ha="left", fontsize=9, family="monospace",
                  transform=ax_t.transAxes, parse_math=False)
        ax_t.text(1.0, y, pts, va="top", ha="right", fontsize=10, fontweight="bold",
                  transform=ax_t.transAxes)
        y -= step * (text.count("\n") + 1.3)
    ax_t.axhline(y + 0.3 * step, color="0.5", lw=0.8)
    cells = [[str(int(s)) for s in card.scores],
             [risk_percent(r) for r in card.risk]]
    shown = min(len(card.scores), 14)
    cells = [c[:shown] for c in cells]
    if len(card.scores) > shown:
        cells = [c + ["..."] for c in cells]
    table = ax_t.table(cellText=cells, rowLabels=["SCORE", "RISK"], loc="bottom",
                       cellLoc="center", bbox=[0.08, max(y - 3.2 * step, 0.0), 0.92,
                                               2.4 * step])
    table.auto_set_font_size(False)
    table.set_fontsize(8)

    t = card.table
    ax_r.plot([0, 1], [0, 1], color="0.6", linestyle="--", lw=1, label="perfect calibration")
    sizes = 20 + 300 * np.asarray(t["n"], dtype=float) / max(float(np.max(t["n"])), 1e-300)
    ax_r.scatter(t["risk"], t["observed"], s=sizes, alpha=0.7, color="#c07a12",
                 edgecolor="black", zorder=3, label="scores (area: rows)")
    ax_r.plot(t["risk"], t["observed"], color="#c07a12", lw=1, alpha=0.6)
    for s_, x_, y_ in zip(t["score"], t["risk"], t["observed"]):
        ax_r.annotate(str(int(s_)), (x_, y_), textcoords="offset points", xytext=(5, -10),
                      fontsize=7, color="0.3")
    ax_r.set_xlim(-0.02, 1.02)
    ax_r.set_ylim(-0.02, 1.02)
    ax_r.set_xlabel("predicted risk (card)")
    ax_r.set_ylabel("observed risk")
    ax_r.set_title(f"reliability: AUC {card.auc_:.3f}, CAL {100 * card.cal_:.1f}%",
                   fontsize=10)
    ax_r.grid(True, alpha=0.3)
    ax_r.legend(loc="upper left", fontsize=8)
    return printable_texts(fig)

