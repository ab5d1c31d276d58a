"""What the rule tables accept: a rule ensemble and weights, or a fitted estimator.

Small accessors shared by the tables, reports, JSON export, antecedent counts
and :mod:`firecy.plotting`.
"""
from __future__ import annotations

import numpy as np

from firecy._validation import check_sample_weight

__all__ = ["is_estimator", "unpack", "feature_names_of", "tree_of", "model_tree_of",
           "block_label", "check_coef", "n_outputs",
           "column_class", "leaf_support", "missing_features"]


def is_estimator(obj):
    """Whether ``obj`` is a fitted FIRE estimator (it has ``ensemble_`` and ``coef_``)."""
    return hasattr(obj, "ensemble_") and hasattr(obj, "coef_")


def unpack(model_or_ensemble, coef, intercept=None):
    """Accept either (ensemble, coef) or a fitted FIRE estimator."""
    if is_estimator(model_or_ensemble):
        est = model_or_ensemble
        if coef is None:
            coef = est.coef_
        if intercept is None:
            intercept = getattr(est, "intercept_", None)
        return est.ensemble_, coef, intercept, getattr(est, "feature_names_in_", None)
    if coef is None:
        raise TypeError("coef is required when the first argument is a rule ensemble")
    return model_or_ensemble, coef, intercept, None


def feature_names_of(ensemble, feature_names):
    """The names to print: ``feature_names`` if given, else the ensemble's."""
    if feature_names is not None:
        return [str(n) for n in feature_names]
    names = getattr(ensemble, "feature_names", None)
    return [str(n) for n in names] if names is not None else None


def tree_of(ensemble, cols):
    """Block (tree) index of each design column in ``cols``."""
    ptr = np.asarray(ensemble.block_ptr)
    return np.searchsorted(ptr, np.asarray(cols), side="right") - 1


def _blocks_per_depth(ensemble):
    # a union of depth cuts repeats the leaf-level blocks once per depth
    maps = getattr(ensemble, "column_maps", None)
    return int(ensemble.n_trees) // len(maps) if maps else None


def model_tree_of(ensemble, cols):
    """The tree each column's rule comes from, as reports name it: its block,
    or for a union of depth cuts (one block per depth and tree) the block of
    the leaf-level ensemble it repeats, the same at every depth."""
    blocks = tree_of(ensemble, cols)
    per_depth = _blocks_per_depth(ensemble)
    return blocks if per_depth is None else blocks % per_depth


def block_label(ensemble, block):
    """A block's name in reports: ``"tree t"``, and its depth under a union."""
    per_depth = _blocks_per_depth(ensemble)
    if per_depth is None:
        return f"tree {int(block)}"
    return f"tree {int(block) % per_depth}, depth {ensemble.rule_depth[int(block) // per_depth]}"


def check_coef(ensemble, coef):
    """``coef`` as float64 of shape ``(n_rules,)``, or a ValueError."""
    coef = np.asarray(coef, dtype=np.float64)
    n_rules = int(ensemble.n_rules)
    if coef.shape != (n_rules,):
        raise ValueError(f"coef has shape {coef.shape}; expected ({n_rules},)")
    return coef


def n_outputs(ensemble):
    """Number of outputs (classes) of the ensemble, at least 1."""
    return int(getattr(ensemble, "n_outputs", 1) or 1)


def column_class(ensemble, cols):
    """Output (class) index of each column (0 for single-output ensembles)."""
    tree_class = getattr(ensemble, "tree_class", None)
    if tree_class is None:
        return np.zeros(len(cols), dtype=np.int64)
    return np.asarray(tree_class)[tree_of(ensemble, cols)]


def leaf_support(ensemble, X, sample_weight, columns=None):
    """Weighted fraction of the rows of X in each leaf column, shape (R,).

    With ``columns`` (indices of the kept rules), the rows are routed only
    through the trees holding them (a fit keeps a few rules of hundreds of
    trees): the columns of the other trees are NaN.
    """
    R = int(ensemble.n_rules)
    if columns is None:
        return column_support(np.asarray(ensemble.leaf_table(X)), R, sample_weight)
    columns = np.asarray(columns)
    # a boolean mask would read as the indices 0 and 1
    if columns.size and (columns.dtype.kind not in "iu" or columns.min() < 0
                         or columns.max() >= R):
        raise ValueError(f"columns must be indices of the ensemble's {R} columns "
                         f"(integers in [0, {R})), got dtype {columns.dtype}"
                         + (f", range [{columns.min()}, {columns.max()}]"
                            if columns.dtype.kind in "iub" else ""))
    blocks = np.unique(tree_of(ensemble, columns.astype(np.int64)))
    if blocks.size == 0:
        return np.full(R, np.nan)
    support = column_support(np.asarray(ensemble.leaf_table(X, blocks=blocks)), R,
                             sample_weight)
    return unknown_outside_blocks(ensemble, support, blocks)


def unknown_outside_blocks(ensemble, per_column, blocks):
    """``per_column`` (shape (R,), float) with NaN in every column outside ``blocks``."""
    routed = np.zeros(int(ensemble.n_rules), dtype=bool)
    for t in np.asarray(blocks, dtype=np.int64).tolist():
        routed[ensemble.block_ptr[t]:ensemble.block_ptr[t + 1]] = True
    per_column[~routed] = np.nan
    return per_column


def column_support(leaves, n_columns, sample_weight=None):
    """Weighted fraction of the rows in each design column, shape (n_columns,).

    ``leaves`` is a leaf table (n_samples, n_trees) of design columns: each
    row lands in one column per tree.  NaN for every column without rows.
    """
    leaves = np.asarray(leaves)
    n = leaves.shape[0]
    if n == 0:
        return np.full(int(n_columns), np.nan)
    flat = leaves.reshape(-1)
    w = check_sample_weight(sample_weight, n, normalize=True)
    if np.all(w == w[0]):
        # equal weights: counts, without an (n, T) array of weights
        return np.bincount(flat, minlength=int(n_columns)) / n
    return np.bincount(flat, weights=np.repeat(w, leaves.shape[1]),
                       minlength=int(n_columns))


def missing_features(X, show_missing):
    """Resolve show_missing="auto" to the features with missing values in X."""
    if show_missing != "auto":
        return show_missing
    if X is None:
        return False
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        return True  # categorical / object columns: be explicit
    if arr.ndim != 2:
        return False
    return set(np.flatnonzero(np.isnan(arr).any(axis=0)).tolist())
