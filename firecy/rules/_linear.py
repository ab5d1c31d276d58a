"""Linear terms: what a fitted model's ``linear_terms_`` holds, how it reads
a feature, and how the tables, reports and exports print it.

A linear term of feature ``x`` contributes ``slope * (clip(x, lower, upper)
- center)`` to the raw prediction: the feature clipped at its training
quantiles, centred at the training mean of the clipped values, times the
effect per unit of ``x`` (``linear_coef_``). A missing ``x`` contributes 0
(it takes the value ``center``): the rules, which route missing values as
the model does, carry any effect of missingness. ``docs/linear_terms.rst``
says why.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = ["LinearTerms", "numeric_columns", "linear_slopes", "term_text", "linear_rows"]


def numeric_columns(X, features):
    """The columns ``features`` of ``X`` as a dense float64 array (NaN: missing).

    ``X`` is a NumPy array, a SciPy sparse matrix (an unstored entry is 0) or
    a DataFrame (sparse columns included)."""
    features = [int(f) for f in features]
    n = int(X.shape[0])
    if not features:
        return np.zeros((n, 0))
    if hasattr(X, "iloc"):
        out = np.empty((n, len(features)))
        for q, f in enumerate(features):
            col = X.iloc[:, f]
            if str(getattr(col.dtype, "name", "")).startswith("Sparse"):
                col = col.sparse.to_dense()
            out[:, q] = col.to_numpy(dtype=np.float64, na_value=np.nan)
        return out
    if sp.issparse(X):
        return np.asarray(sp.csc_matrix(X)[:, features].toarray(), dtype=np.float64)
    return np.asarray(X, dtype=np.float64)[:, features]


@dataclass(eq=False)
class LinearTerms:
    """The linear terms offered to a fit: which features, and how each is read.

    A fitted estimator's ``linear_terms_`` (empty with ``linear_terms=False``).
    Term ``t`` reads feature ``features[t]``; its value on a row is
    ``clip(x, lower[t], upper[t])``, or ``center[t]`` where ``x`` is missing,
    and it contributes ``slope * (value - center[t])`` (``slope``: the
    estimator's ``linear_coef_``, the effect per unit of ``x``).

    Attributes
    ----------
    features : ndarray of int, shape (n_terms,)
        The features' column indices in ``X``.
    names : list of str
        Their names at fit time.
    lower, upper : ndarray of float, shape (n_terms,)
        The clip bounds: the training quantiles (the feature's range where
        the quantiles coincide).
    center : ndarray of float, shape (n_terms,)
        The (weighted) training mean of the clipped feature; a missing value
        takes it (it then contributes 0).
    scale : ndarray of float, shape (n_terms,)
        The design column is ``scale * (value - center)``: the solver's weight
        times ``scale`` is the slope.
    sd : ndarray of float, shape (n_terms,)
        The (weighted) training standard deviation of the value: a term's
        importance in ``rules_`` is ``|slope| * sd``.
    not_offered : list of (str, str)
        The numeric features not offered as a term, each with the reason
        ("constant", "all missing", "too small for float64"); categorical
        features are never offered.
    """

    features: np.ndarray
    names: list
    lower: np.ndarray
    upper: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    sd: np.ndarray
    not_offered: list = field(default_factory=list)

    @classmethod
    def empty(cls, not_offered=()):
        z = np.zeros(0)
        return cls(np.zeros(0, dtype=np.int64), [], z, z.copy(), z.copy(), z.copy(), z.copy(),
                   list(not_offered))

    def __len__(self):
        return int(self.features.shape[0])

    def values(self, X):
        """The terms' values on the rows of ``X``, shape (n_samples, n_terms)."""
        x = numeric_columns(X, self.features)
        x = np.clip(x, self.lower, self.upper)
        return np.where(np.isnan(x), self.center, x)

    def centered(self, X):
        """``value - center`` per row and term (what a slope multiplies)."""
        return self.values(X) - self.center

    def design(self, X):
        """The design columns ``scale * (value - center)``, shape (n_samples, n_terms)."""
        return self.centered(X) * self.scale


def linear_slopes(est):
    """A fitted estimator's terms and slopes as (terms, slopes of shape
    (n_terms, n_outputs)); None without a kept linear term."""
    terms = getattr(est, "linear_terms_", None)
    if terms is None or len(terms) == 0:
        return None
    slopes = np.asarray(est.linear_coef_, dtype=np.float64)
    slopes = slopes.reshape(-1, 1) if slopes.ndim == 1 else slopes.T
    if not np.any(slopes):
        return None
    return terms, slopes


def _number(v, digits):
    return f"{v:.{digits}g}"


def term_text(name, slope, lower, upper, center, digits=4):
    """``+0.071 per unit of educ (educ clipped to [8, 18], centred at 12.6)``.

    The term adds ``slope * (clip(x, lower, upper) - center)``: the text gives
    each of the four numbers, so that a reader can compute it by hand."""
    from firecy._escape import display_text

    shown = display_text(str(name))
    sign = "+" if slope >= 0 else "-"
    return (f"{sign}{_number(abs(slope), digits)} per unit of {shown} "
            f"({shown} clipped to [{_number(lower, digits)}, {_number(upper, digits)}], "
            f"centred at {_number(center, digits)})")


def linear_rows(est, names, n_columns, labels=None, multi=False, digits=4):
    """The kept linear terms as ``(output, row)`` of
    :func:`~firecy.rules.rules_table` (kind "linear"), per output by
    decreasing importance. A term's ``column`` follows the rules' (its
    position in ``path_.coefs``, one per term and output)."""
    found = linear_slopes(est)
    if found is None:
        return []
    terms, slopes = found
    K = slopes.shape[1]
    sd = terms.sd
    rows = []
    for t in range(len(terms)):
        f = int(terms.features[t])
        for k in range(K):
            slope = float(slopes[t, k])
            if slope == 0.0:
                continue
            importance = abs(slope) * float(sd[t])
            row = {
                "rule": term_text(names[f], slope, terms.lower[t], terms.upper[t],
                                  terms.center[t], digits),
                "weight": slope, "support": np.nan, "importance": importance,
                "contribution": slope, "leaf_value": np.nan, "tree": None,
                "n_conditions": 0, "column": int(n_columns + t * K + k), "kind": "linear",
            }
            if labels is not None:
                row = {"class": labels[k], **row}
            elif multi:
                row = {"class": int(k), **row}
            rows.append((k, row))
    rows.sort(key=lambda kr: (kr[0], -kr[1]["importance"], kr[1]["column"]))
    return rows
