"""A plain-text report of the kept rules: :func:`rules_report`."""
from __future__ import annotations

import math

import numpy as np

from firecy.rules._antecedents import count_antecedents
from firecy.rules._confirmatory import confirmatory_suffix
from firecy._escape import display_value
from firecy.rules._inputs import check_coef, is_estimator, n_outputs, unpack
from firecy.rules._account import (estimator_intercept, counts_sentence,
                                    prediction_sentence)
from firecy.rules._table import class_labels, rules_table

__all__ = ["rules_report", "estimator_intercept"]



def _interval(row, digits):
    """`` [lower, upper]``: a held-out interval of the term's effect, if known."""
    lo, hi = row.get("lower", math.nan), row.get("upper", math.nan)
    if lo != lo or hi != hi:
        return ""
    return f" [{_fmt(lo, digits)}, {_fmt(hi, digits)}]"


def _fmt(v, digits):
    return f"{v:.{digits}g}"


def rules_report(ensemble, coef=None, intercept=None, feature_names=None, X=None,
                 sample_weight=None, *, show_missing="auto", precision=None, digits=4,
                 max_rules=None, classes=None, exact=False, intercept_note=None):
    """A plain-text report of the kept rules.

    Parameters
    ----------
    ensemble, coef, feature_names, X, sample_weight, show_missing, precision, exact
        As in :func:`rules_table` (an estimator also supplies ``intercept``).
    intercept : float or array-like of shape (n_outputs,), optional
        The model's intercept (``intercept_`` of an estimator; 0 if omitted).
    digits : int, default=4
        Significant digits of the intercept and the contributions.
    max_rules : int, optional
        Print only the first ``max_rules`` rules (the counts cover all).
    classes : array-like, optional
        A classifier's class labels, to say which class the rules speak for
        (an estimator supplies its ``classes_``).
    intercept_note : str or sequence of str, optional
        Text printed after the intercept (one per output of a multi-output
        model); an estimator's says how its intercept and the ensemble's
        baseline add up (:func:`estimator_intercept`).

    Returns
    -------
    str
        The intercept, one line per rule, "if <conditions> then
        +<contribution>", largest contribution first and numbered as in
        :func:`firecy.plotting.plot_rules`, then (an estimator fitted with
        ``linear_terms=True``) one line per kept linear term, "+<slope> per
        unit of <feature> (<feature> clipped to [<lower>, <upper>], centred at
        <center>)", then
        the numbers of rules, trees and distinct antecedents (and of linear
        terms).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10, linear_terms=False).fit(X, y)
    >>> from firecy.rules import rules_report
    >>> print(rules_report(fire, feature_names=["age", "dose"]))
    intercept: 0.5
    prediction = intercept + the contributions of the rules a row satisfies
    1. if age > 2.0 and dose > 15.0 then +5.5   (tree 0, support 25.0%)
    2. if age > 2.0 and dose <= 15.0 then +3.5   (tree 0, support 25.0%)
    2 rules from 1 tree..., 2 distinct antecedents (split nodes to read)
    """
    baseline_note = "" if intercept_note is None else intercept_note
    if classes is None and is_estimator(ensemble):
        classes = getattr(ensemble, "classes_", None)
    if is_estimator(ensemble) and intercept is None:
        intercept, baseline_note = estimator_intercept(ensemble, X)
    # a fitted estimator's own rules: their support on its training rows
    support = getattr(ensemble, "_train_support", None) if X is None and coef is None else None
    # a fitted estimator's own weights: its linear terms too
    source = ensemble if is_estimator(ensemble) and coef is None else None
    stability = getattr(ensemble, "_rule_stability", None) if coef is None else None
    ensemble, coef, intercept, est_names = unpack(ensemble, coef, intercept)
    if feature_names is None:
        feature_names = est_names
    if source is not None:
        # each row's "class" is its output's index, as the lines below pick
        # them (not the label, which may be any value; the header names it)
        K = n_outputs(ensemble)
        rows = rules_table(source, None, feature_names, X, sample_weight,
                           show_missing=show_missing, precision=precision, exact=exact,
                           as_frame=False, support=support, stability=stability,
                           classes=[0, 0] if K == 1 else list(range(K)))
    else:
        rows = rules_table(ensemble, coef, feature_names, X, sample_weight,
                           show_missing=show_missing, precision=precision, exact=exact,
                           as_frame=False, support=support, stability=stability)
    coef = check_coef(ensemble, coef)
    intercepts = np.atleast_1d(np.asarray(0.0 if intercept is None else intercept,
                                          dtype=np.float64))
    n_out = n_outputs(ensemble)
    labels = class_labels(ensemble, classes)
    lines = []
    for k in range(n_out):
        krows = [r for r in rows if r.get("class", 0) == k]
        name = "prediction"
        if labels is not None:
            # a classifier: say which class each block of rules speaks for
            name = (f"log-odds of class {display_value(labels[0])}" if n_out == 1
                    else f"score of class {display_value(labels[k])} "
                         f"(probabilities: softmax of the scores)")
        if n_out > 1:
            # every class has a score, rules or not: its intercept is part
            # of every row's probabilities
            lines.append(f"class {k}:" if labels is None
                         else f"class {display_value(labels[k])}:")
        b = intercepts[k] if intercepts.size > k else intercepts[0]
        note = baseline_note if isinstance(baseline_note, str) else baseline_note[k]
        lines.append(f"intercept: {_fmt(b, digits)}{note}")
        if not krows and n_out > 1:
            lines.append(f"{name} = intercept (no rule speaks for this class)")
            continue
        lines.append(prediction_sentence(
            name, any(r.get("kind") == "linear" for r in krows)))
        shown = krows if max_rules is None else krows[:max_rules]
        width = len(str(len(shown)))
        for i, r in enumerate(shown, 1):
            conf = " (confirmatory)" if r.get("confirmatory") else ""
            if r.get("kind") == "linear":
                lines.append(f"{i:>{width}}. {r['rule']}{_interval(r, digits)}{conf}")
                continue
            sup = "" if math.isnan(r["support"]) else f", support {100 * r['support']:.1f}%"
            if "stability" in r and not math.isnan(r["stability"]):
                sup += f", stability {100 * r['stability']:.0f}%"
            contrib = r["contribution"]
            sign = "+" if contrib >= 0 else "-"
            where = f"confirmatory{sup}" if conf else f"tree {r['tree']}{sup}"
            lines.append(
                f"{i:>{width}}. if {r['rule']} then {sign}{_fmt(abs(contrib), digits)}"
                f"{_interval(r, digits)}   ({where})"
            )
        if max_rules is not None and len(krows) > max_rules:
            lines.append(f"... and {len(krows) - max_rules} more")
    # the confirmatory terms are counted apart ("+ 2 confirmatory")
    selected = [r for r in rows if not r.get("confirmatory")]
    rule_rows = [r for r in selected if r.get("kind") != "linear"]
    n_trees = len(set(r["tree"] for r in rule_rows))
    n_linear = len(selected) - len(rule_rows)
    if any("lower" in r for r in rows):
        level = getattr(source, "_interval_level", 0.95)
        lines.append(f"[lower, upper]: the {100 * level:g}% interval of each term's effect, "
                     "refitted without penalty on held-out rows (inference); the weight "
                     "beside it is the penalised fit's")
    lines.append(counts_sentence(len(rule_rows), n_trees, count_antecedents(ensemble, coef),
                                 n_linear) + confirmatory_suffix(len(rows) - len(selected)))
    return "\n".join(lines)
