"""Fitting the default random forest so that an integer sample weight is a repetition.

A bootstrapped forest draws ``n`` rows per tree.  For "weight 2" to mean
exactly "this row twice" (scikit-learn's ``check_sample_weight_equivalence``),
both fits must draw the same rows with the same random numbers:

* each tree draws ``sum(sample_weight)`` rows (``max_samples``), not
  ``n_rows``; at least the number of rows of positive weight (weights that
  sum to 1 get the usual bootstrap), at most ``max(10 * rows, 100000)``
  (population-count weights would otherwise make the sampling the cost);
* weights are always passed (ones when none are given), so that both fits
  draw through the same weighted sampler (an unweighted forest uses another
  random function);
* rows are fitted in a canonical order (sorted by ``X`` then ``y``), so that
  the cumulative weights the sampler inverts put a row and its repetitions in
  the same interval whatever order the caller's rows are in.

A row of weight 0 is never drawn, and the trees ignore zero-weight rows.
What is left is the order in which a tree sums equal rows (rounding only).
"""
import numpy as np
import scipy.sparse as sp

__all__ = ["fit_default_forest"]


def canonical_row_order(X, y):
    """Row indices sorting ``(X, y)`` lexicographically (NaN last, stable).

    A sparse ``X`` is sorted one column at a time (stable sorts from the last
    key to the first, as ``np.lexsort`` does), so that no dense copy of it
    is made.
    """
    y = np.asarray(y, dtype=np.float64)
    if not sp.issparse(X):
        X = np.asarray(X, dtype=np.float64)
        return np.lexsort([y] + [X[:, j] for j in range(X.shape[1] - 1, -1, -1)])
    X = sp.csc_matrix(X, dtype=np.float64)
    n = X.shape[0]
    order = np.argsort(y, kind="stable")
    rank = np.empty(n, dtype=np.intp)
    dropped = np.zeros(n, dtype=bool)
    for j in range(X.shape[1] - 1, -1, -1):
        rows = X.indices[X.indptr[j]:X.indptr[j + 1]]
        values = X.data[X.indptr[j]:X.indptr[j + 1]]
        stored = values != 0          # a stored zero is a zero (NaN is not)
        rows, values = rows[stored], values[stored]
        if rows.size == 0:
            continue   # an all-zero column orders nothing
        # a stable sort by this column: the rows it holds sorted by (value,
        # current rank), the zeros in between in their current order
        rank[order] = np.arange(n)
        rows = rows[np.lexsort((rank[rows], values))]   # NaN last
        values = np.sort(values)
        dropped[rows] = True
        zeros = order[~dropped[order]]
        dropped[rows] = False
        first_positive = np.searchsorted(values, 0.0, side="right")
        order = np.concatenate([rows[:first_positive], zeros, rows[first_positive:]])
    return order


def fit_default_forest(model, X, y, sample_weight, to_model_input):
    """Fit ``model`` (the default forest) on ``X, y`` weighted, rows in canonical order.

    Parameters
    ----------
    model : unfitted forest
    X : ndarray of shape (n_samples, n_features)
        The validated features.
    y : ndarray of shape (n_samples,)
    sample_weight : ndarray of shape (n_samples,)
        Ones when the caller gave none.
    to_model_input : callable
        ``X`` in the form the model is fitted with (e.g. a DataFrame).

    Returns
    -------
    model : the fitted forest
    """
    order = canonical_row_order(X, y)
    if getattr(model, "bootstrap", False) and "max_samples" in model.get_params():
        n_positive = int(np.count_nonzero(sample_weight))
        size = min(max(float(sample_weight.sum()), n_positive),
                   max(10 * n_positive, 100_000))
        model.set_params(max_samples=max(int(round(size)), 1))
    model.fit(to_model_input(X[order]), y[order], sample_weight=sample_weight[order])
    return model
