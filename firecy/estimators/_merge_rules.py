"""One weight per distinct rule: :func:`merge_equal_rules`.

The solver sees two columns with the same conditions (leaves of different
trees, see :func:`~firecy.ensembles._equal_rules.equal_rule_groups`) as two
rules, and may keep both.  The fitted model states each rule once: the
weights of equal kept rules move onto the first of them, with the same
prediction for every row (their columns are equal up to their values).
"""
import numpy as np

from firecy.ensembles import equal_rule_groups

__all__ = ["merge_equal_rules"]


def merge_equal_rules(ensemble, coef):
    """``coef`` with the weights of equal kept rules summed onto one of each group.

    Parameters
    ----------
    ensemble : RuleEnsemble
        The fit's rules; ``leaf_values`` are the values solved on.
    coef : ndarray of shape (n_rules,)

    Returns
    -------
    coef : ndarray of shape (n_rules,)
        A new array (the input when no two kept rules are equal): for each
        group, ``sum_k coef_k v_k / v_first`` on its first column (the one
        with the largest ``|v|`` if the first has ``v = 0``), 0 on the others.
    """
    coef = np.asarray(coef, dtype=np.float64)
    if coef.ndim != 1:
        return coef
    groups = equal_rule_groups(ensemble, np.flatnonzero(coef))
    if not groups:
        return coef
    out = coef.copy()
    values = np.asarray(ensemble.leaf_values, dtype=np.float64)
    for group in groups:
        g = np.asarray(group)
        keep = g[0] if values[g[0]] != 0 else g[np.argmax(np.abs(values[g]))]
        total = float(np.sum(coef[g] * values[g]))
        out[g] = 0.0
        out[keep] = total / values[keep]
    return out
