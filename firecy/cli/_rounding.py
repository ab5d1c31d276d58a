"""Short thresholds for display that select the same rows: :func:`display_ensemble`.

A LightGBM threshold such as ``27.600000000000005`` (a float64 midpoint of
two data values) prints exactly by default.  The CLI prints the shortest
decimal ``d`` for which the printed comparison ``x <= d``, read in float64,
selects exactly the values the model selects among every number written
with at most 15 significant digits (all a CSV file holds unless it was
written as a float64 ``repr``): no such number lies between ``d`` and the
model's threshold.  For ``27.600000000000005`` that is ``27.6``.  The
library's own reading is accounted for: a float32 comparison (scikit-learn,
XGBoost) is first turned into the float64 boundary where rounding to float32
crosses the threshold.  The data shown are checked too; a condition that
would move one of its rows keeps its exact text.  Exports stay exact.
"""
import copy
import dataclasses
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal

import numpy as np

from firecy.ensembles._condition import format_threshold

__all__ = ["display_ensemble", "short_threshold"]

_DIGITS = 15   # decimal digits every float64 holds exactly (DBL_DIG)


def _float64_boundary(cond):
    """``B`` with: the model selects the "lower" side (``<=`` / ``<``) iff ``x <= B``
    (for float64 ``x``), or None for a condition this module leaves exact."""
    t = float(cond.threshold)
    if not np.isfinite(t) or cond.zero_threshold > 0 and abs(t) <= 1e-30:
        return None
    if cond.dtype == "float64":
        return t if cond.op in ("<=", ">") else float(np.nextafter(t, -np.inf))
    f = np.float32(t)   # largest float32 on the lower side
    if cond.op in ("<=", ">"):
        if float(f) > t:
            f = np.nextafter(f, np.float32(-np.inf))
    elif float(f) >= t:
        f = np.nextafter(f, np.float32(-np.inf))
    if not np.isfinite(f):
        return None
    up = np.nextafter(f, np.float32(np.inf))
    mid = (float(f) + float(up)) / 2          # exact in float64
    even = int(np.asarray(f).view(np.uint32)) % 2 == 0
    return mid if even else float(np.nextafter(mid, -np.inf))   # ties to even


def _grid_neighbours(b):
    """(g1, g2): consecutive 15-digit decimals with float(g1) <= b < float(g2)."""
    ctx = Context(prec=_DIGITS, rounding=ROUND_FLOOR)
    g1 = ctx.plus(Decimal(b))
    step = Decimal((0, (1,), g1.adjusted() - _DIGITS + 1))
    g2 = g1 + step
    while float(g2) <= b:
        g1, g2 = g2, g2 + Decimal((0, (1,), g2.adjusted() - _DIGITS + 1))
    return float(g1), float(g2)


def short_threshold(cond):
    """The shortest threshold printing ``cond`` for every 15-digit input, or None."""
    b = _float64_boundary(cond)
    if b is None:
        return None
    lo, hi = _grid_neighbours(b)
    strict = cond.op in ("<", ">=")
    for digits in range(1, 18):
        for rounding in (ROUND_FLOOR, ROUND_CEILING):
            d = float(Context(prec=digits, rounding=rounding).plus(Decimal(b)))
            # printed "x <= d" must select the 15-digit x <= lo; "x < d" too
            if (lo < d <= hi) if strict else (lo <= d < hi):
                return d
    return None


class _DisplayRules:
    """The ensemble's rules with the kept ones' thresholds shortened."""

    def __init__(self, rules, replaced):
        self._rules, self._replaced = rules, replaced

    def __len__(self):
        return len(self._rules)

    def __getitem__(self, j):
        return self._replaced.get(int(j), self._rules[j])


def display_ensemble(ensemble, coef, X):
    """A copy of ``ensemble`` whose kept rules print short thresholds.

    Parameters
    ----------
    ensemble : RuleEnsemble
    coef : ndarray
        Rule weights; the kept rules are the nonzero ones.
    X : ndarray of shape (n_samples, n_features)
        The data shown: a condition whose short threshold would move one of
        these rows keeps its exact threshold.

    Returns
    -------
    (RuleEnsemble, int)
        The display copy (for printing only) and the number of thresholds
        shortened (only those whose text gets shorter are replaced).
    """
    X = np.asarray(X, dtype=np.float64)
    kept = np.flatnonzero(np.asarray(coef).reshape(len(ensemble.rules), -1).any(axis=1))
    replaced, n_short, cache = {}, 0, {}
    for j in kept:
        conds = []
        for c in ensemble.rules[j]:
            if c not in cache:
                cache[c] = c
                d = None if c.is_categorical else short_threshold(c)
                short = (None if d is None or d == float(c.threshold)
                         else dataclasses.replace(c, threshold=d, dtype="float64"))
                # only where it reads shorter: a float32 comparison already
                # prints its shortest float32 text (26.849998), while its exact
                # float64 boundary needs about 15 digits
                if short is not None and (len(format_threshold(short))
                                          < len(format_threshold(c))):
                    A = np.zeros((X.shape[0], c.feature + 1))
                    A[:, c.feature] = X[:, c.feature]
                    if np.array_equal(c.evaluate(A), short.evaluate(A)):
                        cache[c] = short
                        n_short += 1
            conds.append(cache[c])
        replaced[int(j)] = conds
    shown = copy.copy(ensemble)
    shown.rules = _DisplayRules(ensemble.rules, replaced)
    return shown, n_short
