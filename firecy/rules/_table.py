"""The kept rules as a table: :func:`rules_table`."""
from __future__ import annotations

import math

import numpy as np

from firecy.rules._inputs import (
    check_coef,
    column_class,
    feature_names_of,
    missing_features,
    n_outputs,
    leaf_support,
    tree_of,
    unpack,
)
from firecy.rules._simplify import simplify_conditions
from firecy.rules._text import format_conditions

__all__ = ["rules_table"]

_COLUMNS = ["rule", "weight", "leaf_value", "contribution", "support", "tree",
            "n_conditions", "column"]


def rules_table(ensemble, coef=None, feature_names=None, X=None, sample_weight=None, *,
                show_missing="auto", precision=None, as_frame=None):
    """The kept rules (nonzero weights) as a table, largest contribution first.

    Parameters
    ----------
    ensemble : RuleEnsemble or fitted FIRE estimator
        With an estimator, ``coef`` and ``feature_names`` default to its
        ``coef_`` and ``feature_names_in_``.
    coef : array-like of shape (n_rules,)
        Rule weights, one per design column of the ensemble.
    feature_names : sequence of str, optional
        Default: the estimator's ``feature_names_in_``, else the ensemble's
        ``feature_names``.
    X : array-like of shape (n_samples, n_features), optional
        Data to measure each rule's ``support`` on (NaN without it).
    sample_weight : array-like of shape (n_samples,), optional
        Weights of the rows of ``X`` in ``support``.
    show_missing : "auto", bool or collection of int, default="auto"
        Missing-value suffixes in the rule text (see the module notes):
        "auto" prints them for the features with missing values in ``X``
        (none without ``X``).
    precision : int, optional
        Round thresholds in the text to this many significant digits
        (default: exact).
    as_frame : bool, optional
        Return a pandas DataFrame (the default when pandas is importable) or
        a list of dicts with the same keys (``as_frame=False``, or without
        pandas).

    Returns
    -------
    pandas.DataFrame or list of dict
        One row per kept rule, sorted by ``|contribution|`` descending (ties
        by column), with columns:

        ``rule``: the conditions, simplified, joined by " and ";
        ``weight``: the rule's coefficient w_j;
        ``leaf_value``: the leaf's value v_j in the ensemble;
        ``contribution``: w_j * v_j, what the rule adds to the prediction of
        every row that satisfies it;
        ``support``: (weighted) fraction of the rows of ``X`` that satisfy it
        (NaN without ``X``);
        ``tree``: index of its tree (block); ``n_conditions``: number of
        conditions after simplification (an interval counts two);
        ``column``: its index j in ``coef`` and in the ensemble's design.
        A multi-output ensemble (multi-class forest) adds a first column
        ``class``: the output the rule contributes to.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10).fit(X, y)
    >>> from firecy.rules import rules_table
    >>> table = rules_table(fire, feature_names=["age", "dose"], X=X, as_frame=False)
    >>> [(row["rule"], round(row["contribution"], 6), row["support"]) for row in table]
    [('age > 2.0 and dose > 15.0', 5.5, 0.25), ('age > 2.0 and dose <= 15.0', 3.5, 0.25)]

    A rule adds ``weight * leaf_value`` to the rows it holds on:

    >>> row = table[0]
    >>> bool(np.isclose(row["contribution"], row["weight"] * row["leaf_value"]))
    True
    >>> bool(np.isclose(fire.intercept_ + row["contribution"], fire.predict([[3.0, 20.0]])[0]))
    True
    """
    ensemble, coef, _, est_names = unpack(ensemble, coef)
    if feature_names is None:
        feature_names = est_names
    names = feature_names_of(ensemble, feature_names)
    coef = check_coef(ensemble, coef)
    leaf_values = np.asarray(ensemble.leaf_values, dtype=np.float64)
    support = leaf_support(ensemble, X, sample_weight) if X is not None else None
    show = missing_features(X, show_missing)
    multi = n_outputs(ensemble) > 1
    cols = np.flatnonzero(coef)
    trees = tree_of(ensemble, cols)
    classes = column_class(ensemble, cols)
    rows = []
    for j, t, k in zip(cols.tolist(), trees.tolist(), classes.tolist()):
        simplified = simplify_conditions(ensemble.rules[j])
        row = {
            "rule": format_conditions(simplified, names, show_missing=show,
                                      precision=precision, simplify=False),
            "weight": float(coef[j]),
            "leaf_value": float(leaf_values[j]),
            "contribution": float(coef[j] * leaf_values[j]),
            "support": float(support[j]) if support is not None else math.nan,
            "tree": int(t),
            "n_conditions": len(simplified),
            "column": int(j),
        }
        if multi:
            row = {"class": int(k), **row}
        rows.append(row)
    rows.sort(key=lambda r: (r.get("class", 0), -abs(r["contribution"]), r["column"]))
    if as_frame is False:
        return rows
    try:
        import pandas as pd
    except ImportError:
        if as_frame:
            raise ImportError(
                "rules_table(as_frame=True) needs pandas: pip install pandas "
                "(or pip install 'firecy[pandas]')"
            ) from None
        return rows
    columns = (["class"] if multi else []) + _COLUMNS
    return pd.DataFrame(rows, columns=columns)
