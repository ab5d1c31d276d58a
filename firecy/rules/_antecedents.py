"""Antecedents: the distinct split nodes a reader of the kept rules examines."""
from __future__ import annotations

import numpy as np

from firecy.rules._inputs import check_coef, unpack

__all__ = ["kept_antecedents", "count_antecedents"]


def kept_antecedents(ensemble, coef=None):
    """Global ids of the internal nodes on the paths of the kept rules.

    Parameters
    ----------
    ensemble : RuleEnsemble or fitted FIRE estimator
    coef : array-like of shape (n_rules,)
        A column is kept when its weight is nonzero.

    Returns
    -------
    ndarray of int64, sorted
    """
    ensemble, coef, _, _ = unpack(ensemble, coef)
    coef = check_coef(ensemble, coef)
    kept = np.flatnonzero(coef)
    paths = [np.asarray(ensemble.node_paths[j], dtype=np.int64) for j in kept]
    if not paths:
        return np.empty(0, dtype=np.int64)
    return np.unique(np.concatenate(paths))


def count_antecedents(ensemble, coef=None):
    """Number of distinct split nodes on the paths of the kept rules.

    This is what a reader must examine to understand the rule set (the
    "antecedents" of the FIRE paper, section 6): rules from one tree that
    share a parent share its split, so fused rule sets count fewer.

    Parameters
    ----------
    ensemble : RuleEnsemble or fitted FIRE estimator
    coef : array-like of shape (n_rules,)

    Returns
    -------
    int
    """
    return int(kept_antecedents(ensemble, coef).size)
