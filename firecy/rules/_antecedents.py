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

    Examples
    --------
    A depth-2 tree whose FIRE model keeps the two leaves under the root's
    right child: the root (node 0) and that child (node 4) are read.

    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10, linear_terms=False).fit(X, y)
    >>> from firecy.rules import kept_antecedents
    >>> fire.coef_.nonzero()[0]
    array([2, 3])
    >>> kept_antecedents(fire)
    array([0, 4])

    With explicit weights on the ensemble (keeping the leftmost leaf):

    >>> kept_antecedents(fire.ensemble_, [1.0, 0.0, 0.0, 0.0])
    array([0, 1])
    """
    ensemble, coef, _, _ = unpack(ensemble, coef)
    coef = check_coef(ensemble, coef)
    kept = np.flatnonzero(coef)
    paths = [np.asarray(ensemble.node_paths[j], dtype=np.int64) for j in kept]
    if not paths:
        return np.empty(0, dtype=np.int64)
    ids = np.concatenate(paths)
    if getattr(ensemble, "column_maps", None) is not None:
        # a union of depth cuts holds each tree once per cut, its node ids
        # shifted by the tree ensemble's node count per cut: one split node
        # read in two cuts is one antecedent
        ids = ids % int(ensemble.uncut.node_offset[-1])
    return np.unique(ids)


def count_antecedents(ensemble, coef=None):
    """Number of distinct split nodes on the paths of the kept rules.

    This is what a reader must examine to understand the rule set (the
    "antecedents" of the FIRE paper, section 6): rules from one tree that
    share a parent share its split, so fused rule sets count fewer.

    Parameters
    ----------
    ensemble : RuleEnsemble or fitted FIRE estimator
    coef : array-like of shape (n_rules,), optional
        Rule weights (an estimator's ``coef_`` by default); a rule is kept
        when its weight is nonzero.

    Returns
    -------
    int

    Examples
    --------
    Two kept rules of two conditions each, from one tree: they share the
    root's split, so a reader examines two split nodes, not four.

    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10, linear_terms=False).fit(X, y)
    >>> from firecy.rules import count_antecedents, rules_table
    >>> [row["rule"] for row in rules_table(fire, as_frame=False)]
    ['x0 > 2.0 and x1 > 15.0', 'x0 > 2.0 and x1 <= 15.0']
    >>> count_antecedents(fire)
    2
    """
    return int(kept_antecedents(ensemble, coef).size)
