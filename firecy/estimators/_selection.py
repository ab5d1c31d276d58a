"""Model selection along FIRE paths.

Every task here is a plain module-level function of arrays and penalty
objects, so joblib can ship it to threads, processes or a Dask cluster
unchanged.  :func:`select_on_paths` runs two stages:

1. one full-data path per grid point (gamma x fusion x group-L0), on the
   grid's own lambda sequence, stopped after the first point beyond the rule
   budget;
2. one validation task per (fold, grid point): the path on the fold's
   training rows over the same lambdas (those of stage 1 within the budget),
   scored by a validation loss on the fold's held-out rows.

The selected model is the stage-1 solution at the selected lambda: the
warm-started full-data path on the same grid is the refit.  Every design
here is a :class:`~firecy.solver.BlockDesign` built from the leaf table.  How
a task fits a path on it and predicts with it is the ``fitter``'s business
(default :class:`SquaredLossPaths`, regression); a classifier passes its own.
"""
import warnings
from dataclasses import dataclass, field, fields

import numpy as np
from sklearn.utils.parallel import Parallel, delayed

from firecy.solver import BlockDesign, PathResult, fire_path

__all__ = ["FIREPath", "SquaredLossPaths", "full_path_task", "fold_errors_task",
           "weighted_squared_error", "select_on_paths"]


@dataclass
class FIREPath(PathResult):
    """A regularisation path on the full training data and its validation scores.

    The fields of :class:`firecy.solver.PathResult` (``lambdas``, the values
    of the penalty's ``lam``, decreasing; ``coefs``, ``intercepts``,
    ``objectives``, ``n_rules``, ``n_iter`` and ``converged`` at each point,
    on the full data; ``lambda_max``), plus the following.

    Attributes
    ----------
    params : dict
        The fixed penalty parameters of this path (``gamma``, ``fusion``,
        ``group_l0``, or ``penalty`` for a user penalty object).
    validation_error : ndarray of shape (n_points,)
        The validation loss on the held-out rows (the weighted mean squared
        error for regression), averaged over the folds (one fold for
        ``selection="validation"``). ``inf`` for points beyond the rule
        budget, NaN when no selection was run.
    validation_error_std : ndarray of shape (n_points,)
        Standard deviation of the fold errors (0 with a single split).
    eligible : ndarray of bool, shape (n_points,)
        Points within the rule budget.

    Notes
    -----
    Dict-style access works too: ``path["lambdas"]``, ``path.keys()``.
    """

    params: dict = field(default_factory=dict)
    validation_error: np.ndarray = field(default_factory=lambda: np.empty(0))
    validation_error_std: np.ndarray = field(default_factory=lambda: np.empty(0))
    eligible: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))

    @classmethod
    def from_path(cls, path, **scores):
        """A FIREPath with the fields of the solver's ``path`` and ``scores``."""
        return cls(**{f.name: getattr(path, f.name) for f in fields(path)}, **scores)

    def __getitem__(self, key):
        if not isinstance(key, str) or key.startswith("_") or not hasattr(self, key):
            raise KeyError(key)
        return getattr(self, key)

    def keys(self):
        """The names of the fields."""
        return [f.name for f in fields(self)]


class SquaredLossPaths:
    """The default ``fitter``: how a task fits a path and predicts with it.

    A fitter has two methods, ``path(design, y, penalty, **kwargs)`` (the
    arguments of :func:`~firecy.solver.fire_path`; returns a
    :class:`~firecy.solver.PathResult`) and ``predict(design, y, path)`` (the
    prediction at every path point on the rows of ``design``, what the
    validation loss scores; ``y`` are those rows' targets, for a fitter that
    keeps per-row data such as an offset in them).  This one is regression's:
    the squared loss on the target (the baseline already subtracted).
    """

    def path(self, design, y, penalty, **kwargs):
        return fire_path(design, y, penalty, **kwargs)

    def predict(self, design, y, path):
        return np.asarray(design.tocsc() @ path.coefs.T) + path.intercepts[None, :]


def full_path_task(leaf_table, leaf_values, block_ptr, y, sample_weight, penalty,
                   lambdas, n_lambdas, eps, max_rules, fit_intercept, tol, max_iter,
                   progress=None, fitter=None):
    """Stage 1: the path on all training rows (``lambdas=None``: default grid)."""
    design = BlockDesign.from_leaf_table(leaf_table, leaf_values, block_ptr)
    fitter = SquaredLossPaths() if fitter is None else fitter
    return fitter.path(
        design, y, penalty, sample_weight=sample_weight, lambdas=lambdas,
        n_lambdas=n_lambdas, eps=eps, max_rules=max_rules,
        fit_intercept=fit_intercept, tol=tol, max_iter=max_iter, progress=progress,
    )


def weighted_squared_error(y, pred, sample_weight):
    """Weighted mean squared error of each column of ``pred``.

    Unweighted if the weights sum to zero.
    """
    resid2 = (y[:, None] - pred) ** 2
    if sample_weight.sum() > 0:
        return (sample_weight[:, None] * resid2).sum(axis=0) / sample_weight.sum()
    return resid2.mean(axis=0)


def fold_errors_task(leaf_table, leaf_values, block_ptr, y, sample_weight, train, test,
                     penalty, lambdas, fit_intercept, tol, max_iter, progress=None,
                     loss=weighted_squared_error, fitter=None):
    """Stage 2: validation losses of the path fitted on ``train``, scored on ``test``.

    Returns
    -------
    errors : ndarray of shape (len(lambdas),)
        ``loss(y[test], prediction, sample_weight[test])`` at each lambda,
        the prediction being ``fitter.predict`` on the test rows (for
        regression the intercept plus ``M w``); NaN for an empty test set.
    """
    fitter = SquaredLossPaths() if fitter is None else fitter
    design = BlockDesign.from_leaf_table(leaf_table[train], leaf_values, block_ptr)
    path = fitter.path(
        design, y[train], penalty, sample_weight=sample_weight[train],
        lambdas=lambdas, fit_intercept=fit_intercept, tol=tol, max_iter=max_iter,
        progress=progress,
    )
    if len(test) == 0:
        return np.full(len(path.lambdas), np.nan)
    test_design = BlockDesign.from_leaf_table(leaf_table[test], leaf_values, block_ptr)
    pred = fitter.predict(test_design, y[test], path)
    return loss(y[test], pred, sample_weight[test])


def select_on_paths(grid, leaf_table, leaf_values, block_ptr, target, sample_weight,
                    splits, *, lambdas, n_lambdas, eps, max_rules, n_jobs, loss, lam,
                    **common):
    """Both stages, and the choice of (grid point, path point).

    Parameters
    ----------
    grid : list of (dict, Penalty)
        The grid points and their penalty templates.
    splits : list of (train, test) or None
        Validation folds; None: nothing to select (one grid point, fixed
        ``lam``).
    lambdas : ndarray or None
        A fixed lambda grid, or None for each path's default grid.
    loss : callable
        ``loss(y, pred, sample_weight)`` per column of ``pred``.
    lam : float or None
        The estimator's fixed ``lam``, for the warning when it breaks the
        rule budget.
    **common
        ``fit_intercept``, ``tol``, ``max_iter``, ``progress`` for the solver,
        and ``fitter`` (see :class:`SquaredLossPaths`).

    Returns
    -------
    paths : list of FIREPath
        One per grid point.
    best : (int, int)
        The selected grid point and path point.
    """
    parallel = Parallel(n_jobs=n_jobs, prefer="threads")
    full = parallel(
        delayed(full_path_task)(
            leaf_table, leaf_values, block_ptr, target, sample_weight, pen, lambdas,
            n_lambdas, eps, max_rules, **common,
        )
        for _, pen in grid
    )
    eligible = [
        np.ones(len(p), dtype=bool) if max_rules is None else p.n_rules <= max_rules
        for p in full
    ]
    # the path stops after the first point beyond the budget: the eligible
    # points are a prefix
    n_eligible = [int(np.argmin(e)) if not e.all() else len(e) for e in eligible]

    errors = [np.full(len(p), np.nan) for p in full]
    stds = [np.full(len(p), np.nan) for p in full]
    if splits is not None:
        tasks = [(g, k) for k in range(len(splits)) for g in range(len(grid))
                 if n_eligible[g] > 0]
        fold_errs = parallel(
            delayed(fold_errors_task)(
                leaf_table, leaf_values, block_ptr, target, sample_weight,
                splits[k][0], splits[k][1], grid[g][1],
                full[g].lambdas[:n_eligible[g]], loss=loss, **common,
            )
            for g, k in tasks
        )
        per_grid = {g: [] for g in range(len(grid))}
        for (g, _), e in zip(tasks, fold_errs):
            per_grid[g].append(e)
        for g, errs in per_grid.items():
            errors[g][:] = np.inf
            stds[g][:] = np.inf
            if errs:
                errs = np.vstack(errs)
                errors[g][:n_eligible[g]] = errs.mean(axis=0)
                stds[g][:n_eligible[g]] = errs.std(axis=0)

    best = None
    for g in range(len(full)):
        for k in range(n_eligible[g]):
            score = errors[g][k] if splits is not None else 0.0
            if best is None or score < best[0]:
                best = (score, g, k)
    if best is None:
        # fixed lam beyond the budget everywhere: keep the sparsest
        _, g = min((int(p.n_rules[0]), g) for g, p in enumerate(full))
        best = (np.nan, g, 0)
        warnings.warn(
            f"lam={lam!r} gives {full[g].n_rules[0]} rules, more than "
            f"max_rules={max_rules}; increase lam or use lam=None to select it",
            UserWarning,
            stacklevel=4,
        )
    paths = [
        FIREPath.from_path(p, params=dict(params), validation_error=errors[g],
                           validation_error_std=stds[g], eligible=eligible[g])
        for g, ((params, _), p) in enumerate(zip(grid, full))
    ]
    return paths, best[1:]
