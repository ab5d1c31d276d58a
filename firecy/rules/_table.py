"""The kept rules as a table: :func:`rules_table`."""
from __future__ import annotations

import math

import numpy as np

from firecy.rules._inputs import (
    is_estimator,
    check_coef,
    column_class,
    feature_names_of,
    is_estimator,
    missing_features,
    n_outputs,
    leaf_support,
    model_tree_of,
    unpack,
)
from firecy._escape import display_text
from firecy.ensembles import simplify_conditions
from firecy.rules._confirmatory import confirmatory_rows
from firecy.rules._linear import linear_rows
from firecy.rules._text import format_conditions

__all__ = ["rules_table", "class_labels"]

# what a reader looks at first comes first (RuleTable prints these four)
_COLUMNS = ["rule", "weight", "support", "importance", "contribution", "leaf_value", "tree",
            "n_conditions", "column", "kind"]
_SHOWN = 4


def class_labels(ensemble, classes):
    """The label each output speaks for, or None without ``classes``.

    ``classes`` are a classifier's labels: output k speaks for ``classes[k]``;
    a single output (binary) for ``classes[1]``, whose log-odds it models.
    """
    if classes is None:
        return None
    labels = [c.item() if hasattr(c, "item") else c for c in np.asarray(classes)]
    K = n_outputs(ensemble)
    if K == 1:
        if len(labels) != 2:
            raise ValueError(f"a single-output ensemble has two classes, got {len(labels)}")
        return [labels[1]]
    if len(labels) != K:
        raise ValueError(f"the ensemble has {K} outputs but {len(labels)} classes were given")
    return labels


def rules_table(ensemble, coef=None, feature_names=None, X=None, sample_weight=None, *,
                classes=None, show_missing="auto", precision=None, as_frame=None,
                support=None, exact=False, stability=None):
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
        Data to measure each rule's ``support`` on (default: a fitted
        estimator's training rows, with their sample weights; NaN for a bare
        ensemble).
    sample_weight : array-like of shape (n_samples,), optional
        Weights of the rows of ``X`` in ``support``.
    classes : array-like, optional
        The class labels of a classifier (default: a classifier's
        ``classes_``): the table then has a first column ``class``, the label
        each rule speaks for (``classes[k]`` for the rules of output k; for a
        binary model with one output, ``classes[1]``, whose log-odds the rules
        add to).
    show_missing : "auto", bool or collection of int, default="auto"
        Missing-value suffixes in the rule text (see the module notes):
        "auto" prints them for the features with missing values in ``X``
        (none without ``X``).
    precision : int, optional
        Round thresholds in the text to this many significant digits
        (display only).
    as_frame : bool, optional
        Return a pandas DataFrame (the default when pandas is importable) or
        a list of dicts with the same keys (``as_frame=False``, or without
        pandas).
    support : array-like of shape (n_rules,), optional
        Each design column's support, already measured (a fitted estimator's
        ``rules_`` passes its training rows' support); exclusive with ``X``.
    exact : bool, default=False
        Rule texts exact for every input (see :func:`format_conditions`);
        the default is exact for inputs of at most 15 significant digits.
    stability : array-like of shape (n_rules,), optional
        Each design column's selection frequency over refits on subsamples
        (a fitted estimator's, once known: see ``docs/stability.rst``); adds
        a ``stability`` column after ``support``.

    Returns
    -------
    pandas.DataFrame or list of dict
        One row per kept rule, sorted by ``|contribution|`` descending (ties
        by column), with columns:

        ``rule``: the conditions, simplified, joined by " and ";
        ``weight``: the rule's coefficient w_j;
        ``support``: (weighted) fraction s_j of the rows of ``X`` that
        satisfy it (NaN without ``X`` or ``support``);
        ``importance``: ``|contribution| * sqrt(s_j (1 - s_j))``, the
        standard deviation of the rule's term over those rows (RuleFit's
        rule importance, Friedman & Popescu 2008);
        ``contribution``: w_j * v_j, what the rule adds to the prediction of
        every row that satisfies it;
        ``leaf_value``: the value v_j in the rule's design column (the
        leaf's value; 1 for every rule of an indicator ensemble, e.g. a
        boosted model under ``rule_values="unit"``, whose tree values are in
        ``ensemble.column_scale``);
        ``tree``: index of its tree (block; under a union of depths the
        tree's, the same at every depth); ``n_conditions``: number of
        conditions after simplification (an interval counts two);
        ``column``: its index j in ``coef`` and in the ensemble's design;
        ``kind``: ``"rule"``, or ``"linear"`` for a linear term of an
        estimator fitted with ``linear_terms=True`` (after its output's
        rules, by decreasing importance): ``rule`` is then its text, e.g.
        ``+0.071 per unit of educ (educ clipped to [8, 18], centred at 12.6)``
        (it adds ``slope * (clip(x, lower, upper) - center)``), ``weight``
        and ``contribution`` its slope per unit of the feature,
        ``importance`` the slope times the training standard deviation of
        the clipped feature, ``support`` and ``leaf_value`` NaN, ``tree``
        missing (None in the records, ``<NA>`` in the nullable integer
        column of the DataFrame: a linear term comes from no tree),
        ``column`` its position after the rules' columns (as in
        ``path_.coefs``).
        An estimator fitted with ``confirmatory=`` lists its confirmatory
        terms last in each output, with a last column ``confirmatory`` (True
        for them, False for the others): a confirmatory rule's ``rule`` is
        its text as given, ``leaf_value`` 1, ``weight`` and
        ``contribution`` what it adds where it holds, ``tree`` missing; a
        confirmatory linear term reads as a linear term.
        A multi-output ensemble (multi-class forest) adds a first column
        ``class``: the output the rule contributes to (its label when
        ``classes`` is known). After an estimator's
        ``inference(X_test, y_test)``, ``lower``, ``upper`` and ``p_value``
        follow ``contribution``: the held-out refit's interval of the term's
        effect (a rule's contribution, a linear term's slope) and its p-value.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10, linear_terms=False).fit(X, y)
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
    if classes is None:
        classes = getattr(ensemble, "classes_", None)
    # a fitted estimator's own weights: its linear terms too
    linear_source = ensemble if is_estimator(ensemble) and coef is None else None
    if support is None and X is None and coef is None:
        # a fitted estimator knows its training rows' support
        support = getattr(ensemble, "_train_support", None)
    if stability is None and is_estimator(ensemble):
        stability = getattr(ensemble, "_rule_stability", None)
    ensemble, coef, _, est_names = unpack(ensemble, coef)
    if feature_names is None:
        feature_names = est_names
    names = feature_names_of(ensemble, feature_names)
    coef = check_coef(ensemble, coef)
    leaf_values = np.asarray(ensemble.leaf_values, dtype=np.float64)
    if support is not None:
        if X is not None:
            raise ValueError("pass X or support, not both")
        support = np.asarray(support, dtype=np.float64).reshape(-1)
        if support.shape[0] != len(leaf_values):
            raise ValueError(f"support has {support.shape[0]} values for "
                             f"{len(leaf_values)} rules")
    elif X is not None:
        support = leaf_support(ensemble, X, sample_weight, columns=np.flatnonzero(coef))
    show = missing_features(X, show_missing)
    multi = n_outputs(ensemble) > 1
    labels = class_labels(ensemble, classes)
    cols = np.flatnonzero(coef)
    trees = model_tree_of(ensemble, cols)
    classes = column_class(ensemble, cols)
    rows = []
    for j, t, k in zip(cols.tolist(), trees.tolist(), classes.tolist()):
        simplified = simplify_conditions(ensemble.rules[j])
        s_j = float(support[j]) if support is not None else math.nan
        contribution = float(coef[j] * leaf_values[j])
        row = {
            "rule": format_conditions(simplified, names, show_missing=show,
                                      precision=precision, simplify=False, exact=exact),
            "weight": float(coef[j]),
            "support": s_j,
            **({} if stability is None else {"stability": float(stability[j])}),
            "importance": abs(contribution) * math.sqrt(max(s_j * (1.0 - s_j), 0.0))
                          if s_j == s_j else math.nan,
            "contribution": contribution,
            "leaf_value": float(leaf_values[j]),
            "tree": int(t),
            "n_conditions": len(simplified),
            "column": int(j),
            "kind": "rule",
        }
        if labels is not None:
            row = {"class": labels[k], **row}
        elif multi:
            row = {"class": int(k), **row}
        rows.append((int(k), row))
    rows.sort(key=lambda kr: (kr[0], -abs(kr[1]["contribution"]), kr[1]["column"]))
    if linear_source is not None:
        # after each output's rules: a slope per unit of x is no contribution
        # to compare with theirs
        rows += linear_rows(linear_source, names, len(leaf_values), labels, multi,
                            precision or 4)
        # then the confirmatory terms (confirmatory=), flagged in a column of their own
        conf = confirmatory_rows(linear_source, names, len(leaf_values), labels, multi,
                                 precision or 4)
        if conf:
            for _, r in rows:
                r["confirmatory"] = False
            rows += conf
        rows.sort(key=lambda kr: kr[0])
    rows = [r for _, r in rows]
    intervals = getattr(linear_source, "_term_intervals", None)
    if intervals:
        # an estimator's held-out intervals (inference): of each term's effect,
        # a rule's contribution where it holds, a linear term's slope
        for r in rows:
            lo, hi, p = intervals.get(r["column"], (math.nan,) * 3)
            r.update(lower=float(lo), upper=float(hi), p_value=float(p))
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
    columns = (["class"] if multi or labels is not None else []) + _COLUMNS
    if stability is not None:
        columns.insert(columns.index("support") + 1, "stability")
    if rows and "confirmatory" in rows[-1]:
        columns.append("confirmatory")
    if intervals:
        at = columns.index("contribution") + 1
        columns[at:at] = ["lower", "upper", "p_value"]
    table = _rule_table_type(pd)
    try:
        frame = table(rows, columns=columns)
    except UnicodeEncodeError:
        # pandas' Arrow strings hold UTF-8 only: a class label with a lone
        # surrogate stays a Python str, in an object column
        frame = table([{**r, "class": None} for r in rows], columns=columns)
        frame["class"] = pd.Series([r["class"] for r in rows], dtype=object,
                                   index=frame.index)
    # a linear term has no tree: a nullable integer column, not -1 or a float
    frame["tree"] = frame["tree"].astype("Int64")
    return frame


_RULE_TABLE = None


def _rule_table_type(pd):
    """RuleTable: a DataFrame that prints its first columns whole."""
    global _RULE_TABLE
    if _RULE_TABLE is not None:
        return _RULE_TABLE

    class RuleTable(pd.DataFrame):
        """The kept rules (a pandas DataFrame; see :func:`rules_table`).

        Printing it shows the rule text whole with its weight, support and
        importance (a plain frame truncates the text and hides columns); the
        other columns are there as in any DataFrame.
        """

        @property
        def _constructor(self):
            return RuleTable

        def __repr__(self):
            shown = [c for c in self.columns[:_SHOWN + ("class" in self.columns)]]
            if "rule" not in shown or len(self) == 0:
                return super().__repr__()
            view = pd.DataFrame(self[shown])
            with pd.option_context("display.max_colwidth", None, "display.width", 10_000,
                                   "display.max_columns", None, "display.max_rows", 200,
                                   "display.precision", 4):
                width = int(view["rule"].map(len).max())
                # a label printed escaped: one line, valid UTF-8 (a lone surrogate)
                text = view.to_string(formatters={"rule": lambda r: f"{r:<{width}}",
                                                  "class": display_text})
            rest = [c for c in self.columns if c not in shown]
            what = f"{len(self)} rules"
            n_conf = int(self["confirmatory"].sum()) if "confirmatory" in self.columns else 0
            if "kind" in self.columns and (self["kind"] == "linear").any():
                n_lin = int((self["kind"] == "linear").sum())
                what = f"{len(self) - n_lin} rules and {n_lin} linear terms"
            if n_conf:
                what += f" (of them {n_conf} confirmatory)"
            return text + (f"\n[{what}; also: {', '.join(map(str, rest))}]"
                           if rest else "")

    _RULE_TABLE = RuleTable
    return RuleTable
