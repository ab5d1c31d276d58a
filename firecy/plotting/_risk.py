"""``plot_risk_card``: a risk card's points table, its full score table and its
reliability curve.

The layout is computed in inches from the card's lines (no layout engine):
every rule line, every score of the table and the reliability panel get their
own room, so no text overlaps another or leaves the figure; a score label on
the reliability curve that would touch another text is left out (the table
gives every score).
"""
from __future__ import annotations

import textwrap

import numpy as np

from firecy._display import risk_percent
from firecy._escape import printable_texts
from firecy.plotting._common import _require_matplotlib

__all__ = ["plot_risk_card"]

_LINE = 0.19         # inches per line of 9-point text
_CHAR = 0.0753       # inches per character of 9-point DejaVu Sans Mono
_CELL = 0.56         # inches per score of the score table
_LABEL = 0.7         # inches for "SCORE" / "RISK"
_PANEL = 4.0         # inches: the reliability panel's side
_MARGIN = 0.25

def plot_risk_card(card, *, wrap=44, per_row=10, figsize=None, figure=None):
    """Draw a risk card: the points table, the score table and the reliability curve.

    Parameters
    ----------
    card : RiskCard or RiskCardClassifier
        From :func:`firecy.risk.risk_card`, or a fitted
        :class:`~firecy.risk.RiskCardClassifier` (its ``card_``).
    wrap : int, default=44
        Characters per line of a rule's text.
    per_row : int, default=10
        Scores per row of the score table.
    figsize : (float, float), optional
        Default: the size the card needs, so that no text overlaps or is cut
        (the layout is in inches: a smaller size crowds it).
    figure : matplotlib.figure.Figure, optional
        An empty figure to draw into, e.g. ``plt.figure()`` to draw under
        pyplot (a notebook, sphinx-gallery); by default a standalone
        ``Figure`` that pyplot does not manage (save it, or display it).

    Returns
    -------
    matplotlib.figure.Figure
        Left: the rules and their points, the starting points, and the
        score -> risk table of every score the card can reach. Right: the
        reliability curve on the data the card was built on, the card's risk
        of each score against the observed frequency of the event among the
        rows with that score (marker area proportional to the rows; a score
        label is left out where it would overlap another), with the diagonal
        of perfect calibration.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from firecy.plotting import plot_risk_card
    >>> from firecy.risk import RiskCardClassifier
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> clf = RiskCardClassifier(max_rules=4, n_estimators=50, random_state=0).fit(X, y)
    >>> fig = plot_risk_card(clf)
    >>> len(fig.axes)
    2
    """
    Figure = _require_matplotlib()
    card = _the_card(card)
    wrap = _positive_int(wrap, "wrap")
    per_row = _positive_int(per_row, "per_row")
    rows = []
    for i, (rule, pts) in enumerate(zip(card.rules, card.points), 1):
        lines = textwrap.wrap(rule, wrap, break_on_hyphens=False) or [rule]
        rows.append((f"{i}.", lines, f"{int(pts):+d}"))
    rows.append(("", ["everyone starts with"], f"{card.intercept_points:+d}"))
    scores = [str(int(s)) for s in card.scores]
    risks = [risk_percent(r) for r in card.risk]
    chunks = [slice(k, k + per_row) for k in range(0, len(scores), per_row)]

    text_w = max(wrap, max(len(line) for _, lines, _ in rows for line in lines)) * _CHAR
    left_w = max(0.4 + text_w + 0.7, _LABEL + per_row * _CELL, 4.6)
    n_rule_lines = sum(len(lines) for _, lines, _ in rows)
    left_h = (1.6 + n_rule_lines * _LINE + 0.25 + 0.2 + len(chunks) * 2.6 * _LINE
              + 0.2)
    width = _MARGIN + left_w + 0.9 + _PANEL + _MARGIN
    height = max(left_h, _PANEL + 1.3)
    if figsize is None:
        figsize = (width, height)
    if figure is None:
        fig = Figure(figsize=figsize)
    else:
        fig = figure
        fig.set_size_inches(figsize)
        fig.set_layout_engine("none")
    sx, sy = figsize[0] / width, figsize[1] / height

    # the left panel: an axes whose data units are inches from its top left
    ax_t = fig.add_axes((_MARGIN / width, 0.0, left_w / width, 1.0))
    ax_t.set_xlim(0.0, left_w)
    ax_t.set_ylim(height, 0.0)
    ax_t.axis("off")
    y = 0.3
    # parse_math=False on every text from the data: a "$" in a label or a
    # feature name must print as itself, not start matplotlib's mathtext
    ax_t.text(0.0, y, f"risk of {card.event!r}: add the points of the rules that hold",
              va="top", ha="left", fontsize=10, parse_math=False)
    y += 2 * _LINE
    for num, lines, pts in rows:
        if not num:   # the starting points, under a rule
            ax_t.plot([0.0, left_w], [y + 0.05, y + 0.05], color="0.5", lw=0.8)
            y += 0.12
        ax_t.text(0.0, y, num, va="top", ha="left", fontsize=9)
        ax_t.text(0.4, y, "\n".join(lines), va="top", ha="left", fontsize=9,
                  family="monospace", parse_math=False, linespacing=1.25)
        ax_t.text(left_w, y, pts, va="top", ha="right", fontsize=10, fontweight="bold")
        y += len(lines) * _LINE + 0.08
    y += 0.3
    ax_t.text(0.0, y, "SCORE = the sum of the points; its risk:", va="top", ha="left",
              fontsize=9)
    y += 1.5 * _LINE
    for chunk in chunks:
        for label, cells in (("SCORE", scores[chunk]), ("RISK", risks[chunk])):
            ax_t.text(0.0, y, label, va="top", ha="left", fontsize=8, fontweight="bold")
            for k, cell in enumerate(cells):
                ax_t.text(_LABEL + (k + 0.5) * _CELL, y, cell, va="top", ha="center",
                          fontsize=8)
            y += 1.1 * _LINE
        ax_t.plot([0.0, _LABEL + per_row * _CELL], [y - 0.04, y - 0.04], color="0.8",
                  lw=0.6)
        y += 0.4 * _LINE

    # the right panel: a square of _PANEL inches under its title
    top = height - 0.5
    ax_r = fig.add_axes(((_MARGIN + left_w + 0.9) / width, (top - _PANEL) / height,
                         _PANEL / width, _PANEL / height))
    t = card.table
    ax_r.plot([0, 1], [0, 1], color="0.6", linestyle="--", lw=1, label="perfect calibration")
    sizes = 20 + 300 * np.asarray(t["n"], dtype=float) / max(float(np.max(t["n"])), 1e-300)
    ax_r.scatter(t["risk"], t["observed"], s=sizes, alpha=0.7, color="#c07a12",
                 edgecolor="black", zorder=3, label="scores (area: rows)")
    ax_r.plot(t["risk"], t["observed"], color="#c07a12", lw=1, alpha=0.6)
    ax_r.set_xlim(-0.02, 1.02)
    ax_r.set_ylim(-0.02, 1.02)
    ax_r.set_xlabel("predicted risk (card)")
    ax_r.set_ylabel("observed risk")
    ax_r.set_title(f"reliability: AUC {card.auc_:.3f}, CAL {100 * card.cal_:.1f}%",
                   fontsize=10)
    ax_r.grid(True, alpha=0.3)
    legend = ax_r.legend(loc="upper left", fontsize=8)
    if sx >= 1.0 and sy >= 1.0:
        _score_labels(ax_r, t, legend)
    return printable_texts(fig)


def _score_labels(ax, t, legend):
    """Each score next to its point, most rows first, unless it would overlap
    the legend, another label or leave the panel."""
    taken = [legend.get_window_extent()]
    inside = ax.get_window_extent()
    for i in np.argsort(-np.asarray(t["n"], dtype=float), kind="stable"):
        x_, y_ = float(t["risk"][i]), float(t["observed"][i])
        right = x_ < 0.8
        label = ax.annotate(str(int(t["score"][i])), (x_, y_), textcoords="offset points",
                            xytext=(6 if right else -6, -10 if y_ > 0.12 else 6),
                            ha="left" if right else "right", fontsize=7, color="0.2",
                            zorder=5)
        box = label.get_window_extent()
        if (box.x0 < inside.x0 or box.x1 > inside.x1 or box.y0 < inside.y0
                or box.y1 > inside.y1 or any(box.overlaps(b) for b in taken)):
            label.remove()
        else:
            taken.append(box)


def _the_card(card):
    from sklearn.utils.validation import check_is_fitted

    if hasattr(card, "card_") or type(card).__name__ == "RiskCardClassifier":
        check_is_fitted(card)
        return card.card_
    if not all(hasattr(card, a) for a in ("rules", "points", "scores", "risk", "table")):
        raise TypeError("plot_risk_card draws a RiskCard (firecy.risk.risk_card) or a fitted "
                        f"RiskCardClassifier, got {type(card).__name__}")
    return card


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)
