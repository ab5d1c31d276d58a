"""Thresholds the CLI shows, checked against the rows it shows: :func:`display_ensemble`.

Every printed rule writes a float64 threshold in its shortest form that is
exact for every input with at most 15 significant digits
(:mod:`firecy.ensembles._threshold_text`): LightGBM's ``27.600000000000005``
prints as ``27.6``.  The CLI also knows the data it shows: a condition whose
short text would move one of those rows prints exactly instead.  Exports stay
exact.
"""
import copy
import dataclasses

import numpy as np

from firecy.ensembles import short_threshold

__all__ = ["display_ensemble"]


class _DisplayRules:
    """The ensemble's rules, with the kept ones replaced by display copies."""

    def __init__(self, rules, replaced):
        self._rules, self._replaced = rules, replaced

    def __len__(self):
        return len(self._rules)

    def __getitem__(self, j):
        return self._replaced.get(int(j), self._rules[j])


def _values(X, f):
    """Column ``f`` of ``X`` as float64: an array's, or a DataFrame's (a
    category column's codes, missing as NaN, as a numeric split reads them)."""
    if not hasattr(X, "iloc"):
        return np.asarray(X[:, f], dtype=np.float64)
    col = X.iloc[:, f]
    if hasattr(col, "cat"):
        codes = col.cat.codes.to_numpy(dtype=np.float64)
        codes[codes < 0] = np.nan
        return codes
    return col.to_numpy(dtype=np.float64)


def _short_moves_a_row(c, d, X):
    """Whether printing ``c``'s threshold as ``d`` moves one of the rows of X."""
    A = np.zeros((X.shape[0], c.feature + 1))
    A[:, c.feature] = _values(X, c.feature)
    short = dataclasses.replace(c, threshold=d)
    return not np.array_equal(c.evaluate(A), short.evaluate(A))


def display_ensemble(ensemble, coef, X, *, exact=False):
    """A copy of ``ensemble`` whose kept rules print exactly where a row of
    ``X`` needs it (every float64 threshold, with ``exact=True``).

    Parameters
    ----------
    ensemble : RuleEnsemble
    coef : ndarray
        Rule weights; the kept rules are the nonzero ones.
    X : ndarray or DataFrame of shape (n_samples, n_features)
        The data shown (a DataFrame may hold category columns): a float64 condition whose short threshold would move
        one of these rows prints its exact threshold.
    exact : bool, default=False
        Print every kept float64 threshold exactly (``--exact``).

    Returns
    -------
    (RuleEnsemble, int)
        The display copy (for printing only) and the number of kept float64
        thresholds printed shorter than their ``repr``.
    """
    X = X if hasattr(X, "iloc") else np.asarray(X, dtype=np.float64)
    kept = np.flatnonzero(np.asarray(coef).reshape(len(ensemble.rules), -1).any(axis=1))
    replaced, n_short, cache = {}, 0, {}
    for j in kept:
        conds = []
        for c in ensemble.rules[j]:
            if c not in cache:
                cache[c] = c
                d = (None if c.is_categorical or c.dtype != "float64"
                     else short_threshold(c))
                if d is not None and d != float(c.threshold):
                    if exact or _short_moves_a_row(c, d, X):
                        cache[c] = dataclasses.replace(c, exact_text=True)
                    else:
                        n_short += 1
            conds.append(cache[c])
        replaced[int(j)] = conds
    shown = copy.copy(ensemble)
    shown.rules = _DisplayRules(ensemble.rules, replaced)
    return shown, n_short
