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

__all__ = ["fit_default_forest"]


def canonical_row_order(X, y):
    """Row indices sorting ``(X, y)`` lexicographically (NaN last, stable)."""
    X = np.asarray(X, dtype=np.float64)
    keys = [np.asarray(y, dtype=np.float64)] + [X[:, j] for j in range(X.shape[1] - 1, -1, -1)]
    return np.lexsort(keys)


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
