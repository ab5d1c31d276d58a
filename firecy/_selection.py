"""Model selection along FIRE paths: the tasks the estimators run in parallel.

Every function here is a plain module-level function of arrays and penalty
objects, so joblib can ship it to threads, processes or a Dask cluster
unchanged.  The estimator runs two stages:

1. one full-data path per grid point (gamma x fusion x group-L0), on the
   grid's own lambda sequence, stopped after the first point beyond the rule
   budget;
2. one validation task per (fold, grid point): the path on the fold's
   training rows over the same lambdas (those of stage 1 within the budget),
   scored by the weighted mean squared error on the fold's held-out rows.

The selected model is the stage-1 solution at the selected lambda: the
warm-started full-data path on the same grid is the refit.
"""
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from firecy.solver import BlockDesign, fire_path

__all__ = ["FIREPath", "full_path_task", "fold_errors_task", "leaf_design"]


@dataclass
class FIREPath:
    """A regularisation path on the full training data and its validation scores.

    Attributes
    ----------
    params : dict
        The fixed penalty parameters of this path (``gamma``, ``fusion``,
        ``group_l0``, or ``penalty`` for a user penalty object).
    lambdas : ndarray of shape (n_points,)
        Values of the penalty's ``lam`` (lambda_s), decreasing.
    n_rules : ndarray of int, shape (n_points,)
        Number of nonzero rule weights at each point (full data).
    objectives : ndarray of shape (n_points,)
        The objective F at each point (full data).
    intercepts : ndarray of shape (n_points,)
    coefs : ndarray of shape (n_points, n_rules_total)
        Rule weights at each point (full data).
    converged : ndarray of bool, shape (n_points,)
    n_iter : ndarray of int, shape (n_points,)
        Block updates at each point (full data).
    validation_error : ndarray of shape (n_points,)
        Weighted mean squared error on the held-out rows, averaged over the
        folds (one fold for ``selection="validation"``). ``inf`` for points
        beyond the rule budget, NaN when no selection was run.
    validation_error_std : ndarray of shape (n_points,)
        Standard deviation of the fold errors (0 with a single split).
    eligible : ndarray of bool, shape (n_points,)
        Points within the rule budget.
    """

    params: dict
    lambdas: np.ndarray
    n_rules: np.ndarray
    objectives: np.ndarray
    intercepts: np.ndarray
    coefs: np.ndarray
    converged: np.ndarray
    n_iter: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.intp))
    validation_error: np.ndarray = field(default_factory=lambda: np.empty(0))
    validation_error_std: np.ndarray = field(default_factory=lambda: np.empty(0))
    eligible: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))

    def __len__(self):
        return len(self.lambdas)

    def __getitem__(self, key):
        # dict-style access, so ``est.path_["lambdas"]`` works too
        if not isinstance(key, str) or key.startswith("_") or not hasattr(self, key):
            raise KeyError(key)
        return getattr(self, key)

    def keys(self):
        return ["params", "lambdas", "n_rules", "objectives", "intercepts", "coefs",
                "converged", "n_iter", "validation_error", "validation_error_std", "eligible"]


def leaf_design(leaf_table, leaf_values, n_columns):
    """The rule design M as CSR from a leaf table (one nonzero per row per tree)."""
    n, T = leaf_table.shape
    cols = np.ascontiguousarray(leaf_table, dtype=np.int64).ravel()
    return sp.csr_matrix(
        (leaf_values[cols], cols, np.arange(n + 1, dtype=np.int64) * T),
        shape=(n, n_columns),
    )


def full_path_task(leaf_table, leaf_values, block_ptr, y, sample_weight, penalty,
                   lambdas, n_lambdas, eps, max_rules, fit_intercept, tol, max_iter,
                   progress=None):
    """Stage 1: the path on all training rows (``lambdas=None``: default grid)."""
    design = BlockDesign.from_leaf_table(leaf_table, leaf_values, block_ptr)
    return fire_path(
        design, y, penalty, sample_weight=sample_weight, lambdas=lambdas,
        n_lambdas=n_lambdas, eps=eps, max_rules=max_rules,
        fit_intercept=fit_intercept, tol=tol, max_iter=max_iter, progress=progress,
    )


def fold_errors_task(leaf_table, leaf_values, block_ptr, y, sample_weight, train, test,
                     penalty, lambdas, fit_intercept, tol, max_iter, progress=None):
    """Stage 2: validation errors of the path fitted on ``train``, scored on ``test``.

    Returns
    -------
    errors : ndarray of shape (len(lambdas),)
        Weighted mean squared error on the ``test`` rows at each lambda
        (unweighted if the test rows' weights sum to zero).
    """
    design = BlockDesign.from_leaf_table(leaf_table[train], leaf_values, block_ptr)
    path = fire_path(
        design, y[train], penalty, sample_weight=sample_weight[train],
        lambdas=lambdas, fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
        progress=progress,
    )
    M_test = leaf_design(leaf_table[test], leaf_values, leaf_values.shape[0])
    pred = np.asarray(M_test @ path.coefs.T) + path.intercepts[None, :]
    resid2 = (y[test][:, None] - pred) ** 2
    w = sample_weight[test]
    if w.sum() > 0:
        return (w[:, None] * resid2).sum(axis=0) / w.sum()
    return resid2.mean(axis=0)
