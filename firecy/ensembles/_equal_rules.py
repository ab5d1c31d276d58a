"""Rules that are the same rule: :func:`equal_rule_groups`.

Two leaves of different trees can hold the same conditions (boosting rounds
that split on one feature at one threshold, LightGBM's splits at zero, the
copies of a shallow leaf in a union of depth cuts).  They select the same
rows for every input, so a rule set that keeps both states one rule twice.
"""
from firecy.ensembles._simplify import simplify_conditions

__all__ = ["equal_rule_groups"]


def equal_rule_groups(ensemble, columns):
    """Group ``columns`` of ``ensemble`` whose rules select the same rows for every input.

    Two rules are equal when their simplified conditions are the same set
    (:class:`~firecy.ensembles.Condition` equality: operator, threshold,
    precision, missing-value direction, categories, LightGBM's zero band)
    and they speak for the same output (class).

    Parameters
    ----------
    ensemble : RuleEnsemble
    columns : iterable of int
        Design columns, e.g. the kept rules ``np.flatnonzero(coef)``.

    Returns
    -------
    list of list of int
        The groups of two or more equal rules, each in increasing column
        order, ordered by their first column.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from firecy.ensembles import rule_ensemble_from_model
    >>> from firecy.ensembles._equal_rules import equal_rule_groups
    >>> X = np.arange(20.0).reshape(-1, 1)
    >>> y = (X[:, 0] > 9.5).astype(float)
    >>> gb = GradientBoostingRegressor(n_estimators=3, max_depth=1).fit(X, y)
    >>> ens = rule_ensemble_from_model(gb)   # three stumps at x0 <= 9.5
    >>> equal_rule_groups(ens, range(ens.n_rules))
    [[0, 2, 4], [1, 3, 5]]
    """
    import numpy as np

    block_of = np.searchsorted(np.asarray(ensemble.block_ptr), np.asarray(list(columns),
                                                                     dtype=np.int64),
                               side="right") - 1
    classes = np.asarray(ensemble.tree_class)[block_of] if len(block_of) else block_of
    groups = {}
    for j, k in zip(columns, classes.tolist()):
        key = (k, frozenset(simplify_conditions(ensemble.rules[int(j)])))
        groups.setdefault(key, []).append(int(j))
    return sorted((sorted(g) for g in groups.values() if len(g) > 1), key=lambda g: g[0])
