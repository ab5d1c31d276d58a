"""The text of a rule: its conditions, simplified, joined by ``" and "``.

The conventions (operators, exact thresholds, intervals, missing-value
suffixes) are listed in :mod:`firecy.rules`.  The text itself is written by
:mod:`firecy.ensembles._condition_text` (next to the conditions, which
:meth:`Condition.to_text <firecy.ensembles.Condition.to_text>` and
:meth:`RuleEnsemble.rule_text` print with it); this module gives it its public
names.
"""
from __future__ import annotations

from firecy.ensembles import ALL_ROWS, format_conditions

__all__ = ["ALL_ROWS", "format_conditions", "rule_text"]


def rule_text(ensemble, j, feature_names=None, *, show_missing=False, precision=None,
              exact=False):
    """The text of rule (leaf column) ``j`` of ``ensemble``.

    Parameters
    ----------
    ensemble : RuleEnsemble
    j : int
        The rule's column in the ensemble's design.
    feature_names : sequence of str, optional
        Default: the ensemble's ``feature_names``.
    show_missing : bool or collection of int, default=False
        Missing-value suffixes, as in :func:`format_conditions`.
    precision : int, optional
        Round thresholds to this many significant digits (display only).
    exact : bool, default=False
        Print every threshold exactly, so that the text read back
        (:func:`parse_rule`, :func:`evaluate_parsed` with
        :func:`library_reading`) selects the rule's rows for every input.
        The default text is exact for inputs written with at most 15
        significant digits (any float32 input, any CSV not written with
        ``repr``); see :func:`format_conditions`.

    Returns
    -------
    str
        The rule's conditions, simplified (:func:`format_conditions`).

    Examples
    --------
    The four leaves of a depth-2 tree, left to right:

    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy.ensembles import rule_ensemble_from_model
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> ens = rule_ensemble_from_model(tree)
    >>> from firecy.rules import rule_text
    >>> [rule_text(ens, j, ["age", "dose"]) for j in range(ens.n_rules)]
    ['age <= 2.0 and dose <= 15.0', 'age <= 2.0 and dose > 15.0',
     'age > 2.0 and dose <= 15.0', 'age > 2.0 and dose > 15.0']
    """
    return ensemble.rule_text(j, feature_names, show_missing=show_missing,
                              precision=precision, exact=exact)
