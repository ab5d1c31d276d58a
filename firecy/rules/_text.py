"""The text of a rule: its conditions, simplified, joined by ``" and "``.

The conventions (operators, exact thresholds, intervals, missing-value
suffixes) are listed in :mod:`firecy.rules`; one condition's text comes from
:mod:`firecy.ensembles._condition`, which :meth:`Condition.to_text
<firecy.ensembles.Condition.to_text>` uses too.
"""
from __future__ import annotations

from firecy.ensembles._condition import format_category, format_threshold, missing_suffix
from firecy.rules._escape import display_text
from firecy.rules._inputs import feature_names_of
from firecy.rules._simplify import CATEGORICAL, LOWER, UPPER, reading, simplify_conditions

__all__ = ["ALL_ROWS", "format_conditions", "rule_text"]

ALL_ROWS = "(all rows)"


def _feature_name(feature_names, j):
    if feature_names is None:
        return f"x{j}"
    # a name with a newline or a bidi mark must not forge or reorder report lines
    return display_text(feature_names[j])


def format_conditions(conditions, feature_names=None, *, show_missing=False,
                      precision=None, simplify=True):
    """The text of a rule: conditions joined by ``" and "``.

    Parameters
    ----------
    conditions : sequence of Condition
    feature_names : sequence of str, optional
        Names by feature index (``x0``, ``x1``, ... when omitted).
    show_missing : bool or collection of int, default=False
        Print the missing-value suffixes (see the module notes): ``True`` for
        every feature, a collection of feature indices for those only.
        LightGBM's zero-as-missing conditions always print theirs
        (``(or zero/missing)`` / ``(not zero/missing)``), since zero is an
        ordinary value.
    precision : int, optional
        Round thresholds to this many significant digits (for display; the
        default prints them exactly).
    simplify : bool, default=True
        Merge redundant conditions first (:func:`simplify_conditions`).

    Returns
    -------
    str

    Examples
    --------
    >>> from firecy.ensembles import Condition
    >>> from firecy.rules import format_conditions
    >>> rule = [Condition(0, "<=", 5.0), Condition(0, "<=", 10.0),
    ...         Condition(1, ">", 0.5), Condition(0, ">", 1.0)]
    >>> format_conditions(rule, ["age", "dose"])
    '1.0 < age <= 5.0 and dose > 0.5'
    >>> format_conditions(rule, simplify=False)
    'x0 <= 5.0 and x0 <= 10.0 and x1 > 0.5 and x0 > 1.0'
    >>> format_conditions([Condition(1, "<", 0.123456, missing=True)],
    ...                   show_missing=True, precision=3)
    'x1 < 0.123 (or missing)'
    >>> format_conditions([])
    '(all rows)'
    """
    conds = simplify_conditions(conditions) if simplify else list(conditions)
    if any(c.labels and not c.is_categorical for c in conds):
        # numeric splits on category codes (LightGBM, ordered categoricals)
        # print as the labels they select
        conds = [c.as_label_set() for c in conds]
        if simplify:
            conds = simplify_conditions(conds)
    if not conds:
        return ALL_ROWS
    if show_missing is True:
        show = None  # every feature
    elif not show_missing:
        show = frozenset()
    else:
        show = frozenset(int(j) for j in show_missing)

    def suffix(cs):
        # zero is an ordinary value to a reader: a zero-as-missing condition
        # always says what it does with it
        if show is not None and cs[0].feature not in show and not any(
                c.zero_as_missing for c in cs):
            return ""
        return missing_suffix(cs)

    # pair each lower bound with an upper bound read the same way -> interval
    used = set()
    parts = []
    for i, c in enumerate(conds):
        if i in used:
            continue
        name = _feature_name(feature_names, c.feature)
        if c.op in LOWER:
            partner = next(
                (k for k in range(i + 1, len(conds))
                 if k not in used and conds[k].op in UPPER
                 and conds[k].feature == c.feature and reading(conds[k]) == reading(c)),
                None,
            )
            if partner is not None:
                u = conds[partner]
                used.add(partner)
                lop = "<" if c.op == ">" else "<="
                parts.append(
                    f"{format_threshold(c, precision)} {lop} {name} {u.op} "
                    f"{format_threshold(u, precision)}" + suffix([c, u])
                )
                continue
        if c.op in CATEGORICAL:
            cats = ", ".join(format_category(v) for v in c.categories)
            parts.append(f"{name} {c.op} {{{cats}}}" + suffix([c]))
        else:
            parts.append(f"{name} {c.op} {format_threshold(c, precision)}" + suffix([c]))
    return " and ".join(parts)


def rule_text(ensemble, j, feature_names=None, *, show_missing=False, precision=None):
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
        Round thresholds to this many significant digits (default: exact).

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
    names = feature_names_of(ensemble, feature_names)
    return format_conditions(ensemble.rules[j], names, show_missing=show_missing,
                             precision=precision)
