"""Readable cuts for the one-call card: :class:`ReadableExtraTrees` and
:func:`card_rule_texts`.

Extra trees cut at uniform random numbers (``insurance <= 0.23307031``,
``chist <= 5.053213``).  After the forest is grown every cut moves to a
readable value in the same gap between consecutive distinct training values
of its feature, so each cut sends every training row the way it went before
(the trees, their leaf values and FIRE's design on the training rows are
unchanged):

* a feature of at most :data:`MAX_DISCRETE` distinct values is cut at the
  midpoint of the gap (0.5 between 0 and 1, 5.5 between 5 and 6);
* another feature at the number of fewest significant digits strictly inside
  the gap (the decimal nearest the gap's midpoint at that precision).

Thresholds are compared in float32 (scikit-learn's trees): the gaps are those
of the float32 training values, and a cut is stored as the float32 value of
its readable decimal, which the library's threshold text prints back as that
decimal (or a shorter one of the same float32), exact for inputs read as the
library reads them (rounded to float32 first).  :func:`card_rule_texts` then prints a cut on a discrete feature the
way a person reads it: ``x = 0`` / ``x = 1`` for a two-valued feature,
``x <= 5`` / ``x >= 6`` (``2 <= x <= 4``, ``x = 3``) for integer values, the
midpoint otherwise.  For an integer-valued feature the integer bounds select
the same rows as the cut for every integer input; the equalities of a
two-valued feature are the cut for rows that take one of its two training
values.
"""
from decimal import ROUND_HALF_EVEN, Context, Decimal

import numpy as np
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.utils import check_array

from firecy._escape import display_text

__all__ = ["MAX_DISCRETE", "ReadableExtraTrees", "card_rule_texts", "readable_cut",
           "unread_values"]

MAX_DISCRETE = 10
# float32 holds every half-integer below 2**23 exactly: integer cuts stay exact
_INTEGER_LIMIT = 2.0 ** 22


class ReadableExtraTrees(ExtraTreesClassifier):
    """Extra trees whose cuts are moved to readable values in the same gaps.

    Fits as :class:`~sklearn.ensemble.ExtraTreesClassifier` (the same
    parameters), then moves every tree's thresholds with
    :func:`readable_cut`.

    Attributes
    ----------
    feature_values_ : list of ndarray of float32 or None
        Per feature, its sorted distinct training values when it has at most
        :data:`MAX_DISCRETE` of them (missing values left out), else None.
    """

    def fit(self, X, y, sample_weight=None):
        """Fit the forest and move its cuts (see the class notes).

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        super().fit(X, y, sample_weight=sample_weight)
        values = distinct_values(X)
        self.feature_values_ = [v if v.size <= MAX_DISCRETE else None for v in values]
        for tree in self.estimators_:
            _move_cuts(tree.tree_, values)
        return self


def distinct_values(X):
    """Per column, the sorted distinct finite float32 values of ``X``."""
    try:
        X = check_array(X, accept_sparse="csc", dtype=np.float32, ensure_all_finite=False)
    except TypeError:   # scikit-learn < 1.6 names it force_all_finite
        X = check_array(X, accept_sparse="csc", dtype=np.float32, force_all_finite=False)
    out = []
    for j in range(X.shape[1]):
        if hasattr(X, "indptr"):
            col = X.data[X.indptr[j]:X.indptr[j + 1]]
            if X.indptr[j + 1] - X.indptr[j] < X.shape[0]:
                col = np.append(col, np.float32(0.0))   # implicit zeros
        else:
            col = X[:, j]
        out.append(np.unique(col[np.isfinite(col)]))
    return out


def _move_cuts(tree_, values):
    state = tree_.__getstate__()
    nodes = state["nodes"].copy()
    for i in np.flatnonzero(nodes["left_child"] >= 0):
        nodes["threshold"][i] = readable_cut(values[nodes["feature"][i]],
                                             float(nodes["threshold"][i]))
    state["nodes"] = nodes
    tree_.__setstate__(state)


def readable_cut(values, threshold):
    """The readable threshold in the gap of sorted float32 ``values`` that holds
    ``threshold`` (``lo <= threshold < hi``: the rows ``x <= threshold`` are
    the rows ``x <= lo``), as the float64 of a float32; ``threshold`` itself
    when it lies outside the values' range.

    Parameters
    ----------
    values : ndarray of float32
        Sorted distinct values of the feature.
    threshold : float

    Returns
    -------
    float
    """
    i = int(np.searchsorted(values, threshold, side="right"))
    if i == 0 or i == values.size:
        return threshold
    lo, hi = float(values[i - 1]), float(values[i])
    mid = (Decimal(_shortest(values[i - 1])) + Decimal(_shortest(values[i]))) / 2
    if values.size <= MAX_DISCRETE:
        candidates = [mid]
    else:
        # the fewest digits that stay strictly inside the gap: the decimal
        # nearest the midpoint at that precision (if any grid point at that
        # precision is inside, the nearest to the midpoint is)
        candidates = [Context(prec=k, rounding=ROUND_HALF_EVEN).plus(mid) for k in range(1, 10)]
    for d in candidates:
        t = float(np.float32(d))
        if lo < t < hi:
            return t
    return lo   # neighbouring float32 values: x <= lo selects the same rows


def _shortest(v):
    """The shortest decimal text of a float32 value."""
    return str(np.float32(v))


def card_rule_texts(model, cols, feature_values):
    """The text of each rule (design column) in ``cols``: cuts on a discrete
    feature as equalities or integer bounds (see the module notes), every
    other condition as :func:`~firecy.rules.format_conditions` prints it,
    and the features printed so: ``{feature: values}`` for a two-valued one
    (read for rows taking one of ``values``), ``{feature: None}`` for integer
    bounds (read for integer values).

    Parameters
    ----------
    model : FIREClassifier
        Fitted on a :class:`ReadableExtraTrees`.
    cols : sequence of int
    feature_values : list of ndarray or None
        ``ReadableExtraTrees.feature_values_``.

    Returns
    -------
    texts : list of str
    readings : dict
    """
    from firecy.rules import format_conditions, simplify_conditions

    ens = model.ensemble_
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        names = getattr(ens, "feature_names", None)
    names = None if names is None else [str(n) for n in names]
    texts, readings = [], {}
    for j in cols:
        conds = simplify_conditions(ens.rules[int(j)])
        features = list(dict.fromkeys(c.feature for c in conds))
        parts = []
        for f in features:
            mine = [c for c in conds if c.feature == f]
            vals = feature_values[f] if f < len(feature_values) else None
            text = None
            if vals is not None and all(c.op in ("<=", ">") and not c.labels
                                        and not c.is_categorical for c in mine):
                text = _discrete_text(_name(names, f), mine, vals)
                if text is not None:
                    readings[int(f)] = vals if vals.size == 2 else None
            parts.append(text if text is not None
                         else format_conditions(mine, names, simplify=False))
        texts.append(" and ".join(parts) if parts else format_conditions([], names))
    return texts, readings


def unread_values(Xm, readings, names=None):
    """A sentence per feature of ``readings`` whose values in ``Xm`` the card's
    text does not read as the model does (a two-valued feature's value
    outside its two, a non-integer value under integer bounds); missing
    values are the trees' to route."""
    out = []
    for f, vals in sorted(readings.items()):
        col = Xm.iloc[:, f].to_numpy() if hasattr(Xm, "iloc") else Xm[:, f]
        col = np.asarray(col.toarray() if hasattr(col, "toarray") else col,
                         dtype=np.float32).ravel()
        col = col[np.isfinite(col)]
        name = _name(names, f)
        if vals is not None:
            odd = np.setdiff1d(np.unique(col), vals)
            if odd.size:
                shown = ", ".join(_value_text(v) for v in vals)
                out.append(f"{name} takes {odd.size} value(s) other than its training "
                           f"values {shown} (e.g. {_value_text(odd[0])}): the card reads "
                           f"'{name} = ...' for those two only; the model compares with "
                           f"the cut {_shortest((vals[0] + vals[1]) / 2)}")
        elif np.any(col != np.round(col)):
            odd = col[col != np.round(col)][0]
            out.append(f"{name} takes non-integer values (e.g. {_shortest(odd)}): the card's "
                       f"integer bounds on {name} read integers; the model compares "
                       "with the midpoints between its training values")
    return out


def _name(names, f):
    # escaped as every printed rule's (a newline or a bidi mark in a name)
    return f"x{f}" if names is None else display_text(names[f])


def _discrete_text(name, conds, vals):
    """``name = v``, ``name <= u``, ``name >= l`` or ``l <= name <= u`` for
    conditions ``<=`` / ``>`` on one feature with a few values ``vals``, or
    None when the feature's values are not integers and it has more than two."""
    v = vals.astype(np.float64)
    inside = np.ones(v.size, dtype=bool)
    for c in conds:
        t = float(c.threshold)
        inside &= (v <= t) if c.op == "<=" else (v > t)
    if not inside.any() or inside.all():
        return None
    if v.size == 2:
        return f"{name} = {_value_text(v[inside][0])}"
    if not (np.all(v == np.round(v)) and np.all(np.abs(v) < _INTEGER_LIMIT)):
        return None
    # integer bounds equivalent to the cuts for every integer x:
    # x <= t  <=>  x <= floor(t);  x > t  <=>  x >= floor(t) + 1
    low = max((int(np.floor(float(c.threshold))) + 1 for c in conds if c.op == ">"),
              default=None)
    high = min((int(np.floor(float(c.threshold))) for c in conds if c.op == "<="),
               default=None)
    if low is not None and high is not None:
        return f"{name} = {low}" if low == high else f"{low} <= {name} <= {high}"
    return f"{name} <= {high}" if low is None else f"{name} >= {low}"


def _value_text(v):
    return str(int(v)) if float(v).is_integer() and abs(v) < _INTEGER_LIMIT else _shortest(v)
