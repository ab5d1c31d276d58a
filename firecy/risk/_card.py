"""The risk-score view of a binary rule model: :func:`risk_card`, :class:`RiskCard`.

A binary :class:`~firecy.FIREClassifier` predicts the log-odds
:math:`\\eta(x) = c_0 + \\sum_j c_j [x \\in \\text{rule } j]`, with
:math:`c_j = w_j v_j` the rule's contribution and :math:`c_0` the intercept
plus the ensemble's (constant) baseline.  A risk card rounds this to integer
points on a scale :math:`\\alpha` (points per unit of log-odds):

.. math::

    p_j = \\mathrm{round}(\\alpha c_j), \\quad p_0 \\in \\{\\lfloor \\alpha c_0 \\rfloor,
    \\lceil \\alpha c_0 \\rceil\\}, \\qquad
    \\text{risk}(S) = \\frac{1}{1 + e^{-S / \\alpha}}, \\quad
    S = p_0 + \\sum_j p_j [x \\in \\text{rule } j].

(the rounding below starts there and then moves points one at a time).
No rounding flips a sign: each point :math:`p_j` has the sign of
:math:`c_j` or is 0, so a rule that raises the model's risk never lowers the
card's, and a card rounded from a model fitted with monotone constraints
(``FIREClassifier(monotone=...)``) keeps them.

The scale is searched on a grid such that every rule's points stay within
``max_points`` (each scale rounds :math:`\\alpha c`; the start is the floor or
the ceiling of :math:`\\alpha c_0`); the best of these roundings by log-loss
are then polished by local moves (one point more or less on one rule or on
the start, kept when it lowers the log-loss) with the scale refitted exactly
after each move (FasterRisk's multiplier: for fixed integer points the best
scale is a one-dimensional convex problem), see ``firecy.risk._rounding``.
Among all the candidates whose log-loss on the data given is at most
``(1 + max_loss_increase)`` times the rule model's and at least
``(1 - max_loss_decrease)`` times it (the default 0: the card does not fit the
data better than the model it rounds; the local moves stop there), the card
takes, with
``prefer="auc"`` (the default), the one that ranks best (highest AUC on that
data, then the lowest log-loss); ``"loss"``: the lowest log-loss;
``"small"``: the fewest points (smallest largest ``|p_j|``), then the lowest
log-loss.  When no candidate meets the bound, the one with the lowest
log-loss (``within_bound_`` says which); when only candidates below the floor
meet it, the choice is among those.

Why a floor: the rule model's log-loss is that of the penalised fit its
selection chose; integer points that fit the training rows much better than
it have been refitted on them, past that choice.  Without the floor, on one
fold of the MASS biopsy data the local moves took the card's training
log-loss to 0.86 times the model's and its test AUC from the model's 0.99 to
0.96; with it, the card's test AUC over the benchmark's 35 folds follows the
rule model's (benchmarks/risk_cards/RESULTS.md, issue 27).
"""
import textwrap

import numpy as np
from scipy.special import expit

from firecy._display import risk_percent
from firecy._validation import check_int, check_real, check_sample_weight
from firecy.risk._metrics import calibration_error, rank_auc, reliability_table
from firecy._escape import display_value
from firecy.risk._rounding import round_points
from firecy.risk._model_terms import (
    achievable_scores,
    contributions,
    event_indicator,
    log_loss,
    rule_membership,
)

__all__ = ["RiskCard", "risk_card"]

_GRID_PER_POINT = 24
_PREFER = ("auc", "loss", "small")


class RiskCard:
    """A risk score read off a binary rule model: integer points per rule.

    Build it with :func:`risk_card`. ``print(card)`` shows the card.

    Attributes
    ----------
    model : FIREClassifier
        The fitted binary rule model the card rounds.
    event : object
        The label whose risk the card gives (``classes_[1]``).
    rules : list of str
        The rules that keep points (nonzero after rounding), largest points first.
    points : ndarray of int
        Their points.
    columns : ndarray of int
        Their design columns in the model.
    intercept_points : int
        The points everyone starts with.
    scale : float
        Points per unit of log-odds: risk(S) = 1 / (1 + exp(-S / scale)).
    scores : ndarray of int
        Every score a row can reach (for rules of different trees that
        exclude each other, a superset).
    risk : ndarray of float
        The risk at each of ``scores``.
    table : dict of ndarray
        The reliability table on the data the card was built on, one entry
        per score that occurs: ``score``, ``n`` (weight of its rows),
        ``risk`` (predicted) and ``observed`` (observed frequency).
    log_loss_, auc_, cal_ : float
        The card's log-loss, AUC (ties count one half) and CAL (rows grouped
        by score, the paper's definition) on that data.
    n_scores_ : int
        The number of distinct scores on that data (rows with one score tie
        in the ranking).
    points_range_ : tuple of int
        The smallest and the largest points of a rule (0 for a card without
        rules).
    model_log_loss_, model_auc_, model_cal_ : float
        The same for the unrounded rule model (CAL grouped by its distinct
        predictions).
    max_loss_increase : float
        The stated bound on the log-loss increase of the rounding.
    max_loss_decrease : float or None
        The floor: how far below the rule model's log-loss the card's may go
        (``None``: no floor).
    within_bound_ : bool
        Whether ``log_loss_ <= (1 + max_loss_increase) * model_log_loss_``.
    n_dropped_rules_ : int
        Rules of the model that get 0 points (left off the card).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from firecy import FIREClassifier
    >>> from firecy.risk import risk_card
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> forest = RandomForestClassifier(n_estimators=30, max_depth=2, random_state=0)
    >>> fire = FIREClassifier(forest, max_rules=4, linear_terms=False, random_state=0).fit(X, y)
    >>> card = risk_card(fire, X, y)

    A row's risk is read off its integer score:

    >>> score = card.score(X[:3])
    >>> bool(np.allclose(card.predict_proba(X[:3]), 1 / (1 + np.exp(-score / card.scale))))
    True
    >>> card.within_bound_
    True
    """

    def __init__(self, model, event, rules, points, columns, intercept_points, scale,
                 scores, max_loss_increase):
        self.model = model
        self.event = event
        self.rules = rules
        self.points = points
        self.columns = columns
        self.intercept_points = int(intercept_points)
        self.scale = float(scale)
        self.scores = scores
        self.risk = expit(scores / self.scale)
        self.max_loss_increase = float(max_loss_increase)

    # -- applying the card --------------------------------------------------
    def score(self, X):
        """The integer score of each row: starting points plus the points of its rules.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of int64, shape (n_samples,)
        """
        A, cols, _ = rule_membership(self.model, X)
        pos = np.searchsorted(cols, self.columns)
        return (self.intercept_points + A[:, pos] @ self.points).astype(np.int64)

    def predict_proba(self, X):
        """The card's risk of the event for each row.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return expit(self.score(X) / self.scale)

    def evaluate(self, X, y, sample_weight=None):
        """Log-loss, AUC and CAL of the card (and of the rule model) on ``(X, y)``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels of the model's classes.
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        dict
            ``n_scores`` (distinct scores of the rows of positive weight),
            ``log_loss``, ``auc``, ``cal`` (rows grouped by score),
            ``model_log_loss``, ``model_auc``, ``model_cal`` (grouped by the
            model's distinct predictions).
        """
        event = event_indicator(self.model, y)
        s = check_sample_weight(sample_weight, event.shape[0])
        score = self.score(X)
        p = expit(score / self.scale)
        eta = np.asarray(self.model.decision_function(X), dtype=np.float64)
        q = expit(eta)
        return {
            "n_scores": int(np.unique(score[s > 0]).size),
            "log_loss": log_loss(event, score / self.scale, s),
            "auc": rank_auc(event, score, sample_weight=s),
            "cal": calibration_error(event, p, groups=score, sample_weight=s),
            "model_log_loss": log_loss(event, eta, s),
            "model_auc": rank_auc(event, eta, sample_weight=s),
            "model_cal": calibration_error(event, q, groups=np.round(eta, 9),
                                           sample_weight=s),
        }

    # -- showing it ---------------------------------------------------------
    def to_text(self, width=60, per_line=10):
        """The card as plain text (what ``print(card)`` shows).

        Parameters
        ----------
        width : int, default=60
            Width of the rule column.
        per_line : int, default=10
            Scores per line of the score -> risk table.

        Returns
        -------
        str
        """
        lines = [f"RISK CARD: risk of {display_value(self.event)}", ""]
        n = len(self.rules)
        num = len(str(max(n, 1)))
        for i, (rule, pts) in enumerate(zip(self.rules, self.points), 1):
            wrapped = textwrap.wrap(rule, width, break_on_hyphens=False) or [rule]
            lines.append(f"{i:>{num}}. {wrapped[0]:<{width}} {_pts(pts):>10}")
            lines.extend(f"{'':>{num}}  {more}" for more in wrapped[1:])
        lines.append(f"{'':>{num}}  {'everyone starts with':<{width}} "
                     f"{_pts(self.intercept_points):>10}")
        lines.append(f"{'':>{num}}  {'SCORE = the sum of the points above':<{width}}")
        lines.append("")
        for k in range(0, len(self.scores), per_line):
            chunk = slice(k, k + per_line)
            lines.append("SCORE " + "".join(f"{s:>7d}" for s in self.scores[chunk]))
            lines.append("RISK  " + "".join(f"{risk_percent(r):>7}" for r in self.risk[chunk]))
        lines.append("")
        lines.append(f"risk = 1 / (1 + exp(-SCORE / {self.scale:.4g}))")
        lines.append(
            f"on the data it was built on: AUC {self.auc_:.3f} (rule model "
            f"{self.model_auc_:.3f}), CAL {100 * self.cal_:.1f}% "
            f"(rule model {100 * self.model_cal_:.1f}%), log-loss {self.log_loss_:.4f} "
            f"(rule model {self.model_log_loss_:.4f}, bound "
            f"{(1 + self.max_loss_increase) * self.model_log_loss_:.4f}"
            f"{'' if self.within_bound_ else ', not met'})")
        lo, hi = self.points_range_
        lines.append(f"{self.n_scores_} distinct scores on that data, points from {lo:+d} "
                     f"to {hi:+d}")
        if self.n_dropped_rules_:
            lines.append(f"{self.n_dropped_rules_} rule(s) of the model get 0 points "
                         "and are left out")
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        return (f"RiskCard(event={self.event!r}, n_rules={len(self.rules)}, "
                f"scale={self.scale:.4g}, auc={self.auc_:.3f}, cal={self.cal_:.3f})")

    def plot(self, **kwargs):
        """Draw the card: see :func:`firecy.plotting.plot_risk_card`.

        Parameters
        ----------
        **kwargs
            Passed to :func:`firecy.plotting.plot_risk_card`.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from firecy.plotting import plot_risk_card

        return plot_risk_card(self, **kwargs)


def _pts(p):
    p = int(p)
    return f"{p:+d} point" + ("" if abs(p) == 1 else "s")


def risk_card(model, X, y, *, max_points=5, max_loss_increase=0.02, prefer="auc",
              max_loss_decrease=0.0, sample_weight=None):
    """The risk card of a fitted binary FIRE classifier.

    Parameters
    ----------
    model : FIREClassifier
        Fitted, with two classes; the card gives the risk of ``classes_[1]``.
        A model that keeps a linear term (``linear_terms=True``, the
        default) is refused: a card's points belong to rules a row
        satisfies or not; fit it with ``linear_terms=False``.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Data to choose the scale on (the training data, typically) and to
        fill the reliability table.
    y : array-like of shape (n_samples,)
    max_points : int, default=5
        The largest number of points (in absolute value) of one rule.
    max_loss_increase : float, default=0.02
        The stated bound: the card's log-loss on ``(X, y)`` may exceed the
        rule model's by this fraction (see the module notes for the choice).
    prefer : {"auc", "loss", "small"}, default="auc"
        Among the roundings within the bound: the highest AUC on ``(X, y)``
        (then the lowest log-loss), the lowest log-loss, or the fewest points.
    max_loss_decrease : float in [0, 1] or None, default=0.0
        The floor: the card's log-loss on ``(X, y)`` stays at or above
        ``(1 - max_loss_decrease)`` times the rule model's (the local moves
        on the points stop there); ``None``: no floor.  See the module notes.
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    RiskCard

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from firecy import FIREClassifier
    >>> from firecy.risk import risk_card
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> forest = RandomForestClassifier(n_estimators=50, max_depth=3, random_state=0)
    >>> fire = FIREClassifier(forest, max_rules=6, linear_terms=False,
    ...                       random_state=0).fit(X, y)
    >>> card = risk_card(fire, X, y)
    >>> int(abs(card.points).max()) <= 5
    True
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model)
    if not hasattr(model, "classes_") or len(model.classes_) != 2:
        raise ValueError("a risk card needs a fitted binary classifier (two classes)")
    n_linear = int(np.count_nonzero(getattr(model, "linear_coef_", ())))
    if n_linear:
        raise ValueError(
            f"the model keeps {n_linear} linear term(s) (linear_terms=True): a risk card "
            "gives points to rules a row satisfies or not, and a linear term has no such "
            "points; fit the classifier with linear_terms=False for a card")
    if getattr(model, "confirmatory_", None) is not None:
        raise ValueError("the model has confirmatory terms (confirmatory=): a risk card "
                         "gives points to the rules FIRE selected only; fit the classifier "
                         "without them for a card")
    max_points = check_int(max_points, "max_points", low=1)
    max_loss_increase = check_real(max_loss_increase, "max_loss_increase", low=0.0)
    event = event_indicator(model, y)
    A, cols, Xm = rule_membership(model, X)
    if A.shape[0] != event.shape[0]:
        raise ValueError(f"X has {A.shape[0]} rows, y {event.shape[0]}")
    s = check_sample_weight(sample_weight, event.shape[0])
    c, c0 = contributions(model, Xm, cols)
    eta = A @ c + c0
    model_loss = log_loss(event, eta, s)
    bound = (1.0 + max_loss_increase) * model_loss

    if prefer not in _PREFER:
        raise ValueError(f"prefer must be one of {_PREFER}, got {prefer!r}")
    floor = None
    if max_loss_decrease is not None:
        max_loss_decrease = check_real(max_loss_decrease, "max_loss_decrease", low=0.0)
        if max_loss_decrease > 1.0:
            raise ValueError(f"max_loss_decrease must be at most 1, got {max_loss_decrease}")
        floor = (1.0 - max_loss_decrease) * model_loss
    cands = round_points(A, c, c0, event, s, max_points=max_points,
                         n_scales=_GRID_PER_POINT, floor=floor)
    ok = [t for t in cands if t[0] <= bound and (floor is None or t[0] >= floor)]
    if not ok and floor is not None:  # only roundings below the floor meet the bound
        ok = [t for t in cands if t[0] <= bound]
    if not ok:
        _, pts, p0, alpha = min(cands, key=lambda t: t[0])
    elif prefer == "loss":
        _, pts, p0, alpha = min(ok, key=lambda t: t[0])
    elif prefer == "small":
        _, pts, p0, alpha = min(ok, key=lambda t: (_size(t[1]), t[0]))
    else:
        # the ranking depends on the points only (not on the start or the scale)
        auc_of = {}
        for t in ok:
            key = t[1].tobytes()
            if key not in auc_of:
                auc_of[key] = rank_auc(event, A @ t[1], sample_weight=s)
        best = max(range(len(ok)), key=lambda i: (auc_of[ok[i][1].tobytes()], -ok[i][0]))
        _, pts, p0, alpha = ok[best]
    keep = pts != 0
    table_rows = _rule_texts(model, cols)
    order = np.argsort(-np.abs(pts[keep]), kind="stable")
    kept_cols = cols[keep][order]
    points = pts[keep][order].astype(np.int64)
    card = RiskCard(
        model, _plain(model.classes_[1]), [table_rows[j] for j in kept_cols], points,
        kept_cols, int(p0), alpha,
        achievable_scores(model.ensemble_, kept_cols, points, int(p0)), max_loss_increase,
    )
    # the columns of A follow cols (sorted); the card keeps its own order
    score = (A[:, np.searchsorted(cols, kept_cols)] @ points + int(p0)).astype(np.int64)
    _fill_metrics(card, event, score, eta, s, model_loss)
    card.n_dropped_rules_ = int(np.count_nonzero(~keep))
    card.max_loss_decrease = max_loss_decrease
    return card


def _size(pts):
    return float(np.max(np.abs(pts))) if pts.size else 0.0


def _plain(label):
    """A numpy scalar label as the Python value (prints as 1, not np.int64(1))."""
    return label.item() if hasattr(label, "item") else label


def _rule_texts(model, cols):
    from firecy.rules import rules_table

    rows = rules_table(model, as_frame=False)
    return {r["column"]: r["rule"] for r in rows}


def _fill_metrics(card, event, score, eta, s, model_loss):
    p = expit(score / card.scale)
    card.log_loss_ = log_loss(event, score / card.scale, s)
    card.auc_ = rank_auc(event, score, sample_weight=s)
    card.cal_ = calibration_error(event, p, groups=score, sample_weight=s)
    card.model_log_loss_ = model_loss
    card.model_auc_ = rank_auc(event, eta, sample_weight=s)
    card.model_cal_ = calibration_error(event, expit(eta), groups=np.round(eta, 9),
                                        sample_weight=s)
    card.n_scores_ = int(np.unique(score[s > 0]).size)
    card.points_range_ = ((int(card.points.min()), int(card.points.max()))
                          if card.points.size else (0, 0))
    card.within_bound_ = bool(card.log_loss_ <= (1 + card.max_loss_increase) * model_loss)
    t = reliability_table(event, p, groups=score, sample_weight=s)
    card.table = {"score": t["group"].astype(np.int64), "n": t["weight"],
                  "risk": t["predicted"], "observed": t["observed"]}
