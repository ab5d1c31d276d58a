"""Does the data fit the model? :func:`check_model_matches_data`.

A fitted model given with data it was not fitted on (features rescaled after
the fit, columns in another order, another unit) still routes every row
somewhere, but its thresholds no longer cut the rows: nearly every row falls
into one leaf of each tree.  The rules are then nearly constant columns, the
solver crawls (ConvergenceWarnings that blame ``max_iter``) and the model
keeps a rule or none.  This check reads the leaf table the fit builds anyway
and says what is wrong, in words, before the solve.
"""
import warnings

import numpy as np

from firecy._warn import user_stacklevel

__all__ = ["check_model_matches_data", "leaf_concentration"]

# A tree fitted on the data splits them: its largest leaf holds well under
# every row, and every leaf holds some.  Both can fail alone on data the
# model fits (a rare signal on sparse features: one leaf holds 99.9% of the
# rows, but every leaf holds a row), so a mismatch is both at once: the
# median tree puts at least MAX_LEAF_SHARE of the rows in one leaf and
# leaves at least half of its leaves empty.  Measured on the any-model
# benchmark's ten data sets with the paper's depth-3 forest and five
# library-default models (RF, XGBoost, LightGBM, GB, HGB), as
# rule_depth="auto" cuts them: no model was flagged on its training rows or
# on held-out rows (cut or not); with the features multiplied by 100 or
# standardised after the fit, 49 and 44 of the 59 models were (the others
# on data whose scale barely changes, e.g. diabetes, already standardised)
# (benchmarks/any_model/leaf_share.py).
MAX_LEAF_SHARE = 0.95
MAX_REACHED = 0.5


def leaf_concentration(leaf_table, block_ptr, sample_weight):
    """Per block, the weighted share of the rows in its most populated
    column, and the fraction of its columns that hold a row.

    Parameters
    ----------
    leaf_table : ndarray of int, shape (n_samples, n_blocks)
    block_ptr : ndarray of int, shape (n_blocks + 1,)
    sample_weight : ndarray of float, shape (n_samples,)

    Returns
    -------
    share : ndarray of float, shape (n_blocks,)
    reached : ndarray of float, shape (n_blocks,)
    """
    n_columns = int(block_ptr[-1])
    starts = np.asarray(block_ptr[:-1])
    w = np.asarray(sample_weight, dtype=np.float64)
    total = w.sum()
    if total <= 0:
        return np.zeros(leaf_table.shape[1]), np.zeros(leaf_table.shape[1])
    mass = np.bincount(np.asarray(leaf_table).ravel(), minlength=n_columns,
                       weights=np.repeat(w, leaf_table.shape[1]))
    reached = np.add.reduceat((mass > 0).astype(np.float64), starts) / np.diff(block_ptr)
    return np.maximum.reduceat(mass, starts) / total, reached


def _model_r2(ensemble, leaf_table, target, sample_weight):
    """R² of the (cut) trees' own prediction of a regression target, or None."""
    try:
        values = np.asarray(ensemble.leaf_values * ensemble.column_scale, dtype=np.float64)
        pred = values[leaf_table].sum(axis=1)
    except Exception:   # an ensemble without one output per row
        return None
    y = np.asarray(target, dtype=np.float64)
    if y.ndim != 1 or pred.shape != y.shape:
        return None
    w = sample_weight
    resid = np.average((y - pred) ** 2, weights=w)
    spread = np.average((y - np.average(y, weights=w)) ** 2, weights=w)
    return None if spread <= 0 else 1.0 - resid / spread


def check_model_matches_data(model, ensemble, leaf_table, data, task, baseline=None,
                             prefitted=True):
    """Warn when a fitted model routes nearly every row of ``X`` to one leaf per tree.

    Parameters
    ----------
    model : the (unwrapped) model, for the message
    ensemble : RuleEnsemble
        The fit's rules (after the depth cut).
    leaf_table : ndarray of shape (n_samples, n_blocks)
    data : FitData
    task : Task
        A squared-loss task's ``model_y`` (y) gives the model's own R².
    baseline : ndarray, optional
        The ensemble's baseline on the rows (for the R²).
    prefitted : bool
        Whether the user gave the model fitted (a model fitted here on ``X``
        matches it by construction: nothing to check).
    """
    if not prefitted or leaf_table.size == 0:
        return
    block_ptr = np.asarray(ensemble.block_ptr)
    sizes = np.diff(block_ptr)
    split = sizes > 1      # a single-leaf tree holds every row by definition
    if not split.any():
        return
    shares, reached = leaf_concentration(leaf_table, block_ptr, data.sample_weight)
    shares, reached = shares[split], reached[split]
    median = float(np.median(shares))
    if median < MAX_LEAF_SHARE or float(np.median(reached)) > MAX_REACHED:
        return
    detail = ""
    if task.loss == "squared" and baseline is not None:
        r2 = _model_r2(ensemble, leaf_table, np.asarray(task.model_y) - baseline,
                       data.sample_weight)
        if r2 is not None:
            detail = f"; the model's own predictions explain R² = {r2:.3f} of y"
    warnings.warn(
        f"X does not look like the data the fitted {type(model).__name__} was fitted on: "
        f"in the median tree {100 * median:.1f}% of the rows land in one leaf and "
        f"{100 * (1 - float(np.median(reached))):.0f}% of the leaves get no row "
        f"({int(np.count_nonzero(shares >= MAX_LEAF_SHARE))} of {shares.size} trees put "
        f"at least {100 * MAX_LEAF_SHARE:.0f}% in one){detail}. The model's thresholds do "
        "not split these rows, so its rules cannot fit y. Were the features transformed "
        "(scaled, reordered, other units) after the model was fitted? Pass X as the model "
        "saw it, or an unfitted model to fit on this X.",
        UserWarning, stacklevel=user_stacklevel())
