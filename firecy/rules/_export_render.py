"""Printing an export plan as Python or SQL (see :mod:`firecy.rules._export`)."""
from __future__ import annotations

import math

from firecy._escape import (
    display_value, python_docstring, python_literal, sql_comment, sql_identifier, sql_string,
)
from firecy.rules._export_tests import CodeTest, LabelTest

__all__ = ["render_python", "render_sql"]

_PY_HELPERS = '''

def _num(v):
    """A number as a float, None when missing (None, NaN)."""
    if v is None:
        return None
    v = float(v)
    return None if v != v else v


def _label(v):
    """A category label, None when missing (None, NaN, pandas.NA)."""
    if v is None:
        return None
    try:
        if v != v:
            return None
    except (TypeError, ValueError):
        return None
    return v


def _xgboost_label(v, ordered, known, name):
    """XGBoost's reading of a label it was not fitted with: the next of its
    labels in sorted order (XGBoost 3.2 re-codes by binary search), and an
    error after the last one."""
    if v is None or v in known:
        return v
    try:
        i = bisect.bisect_left(ordered, v)
    except TypeError:
        i = len(ordered)
    if i == len(ordered):
        raise ValueError(f"{name}: category {v!r} is not one the model was fitted with")
    return ordered[i]
'''


def _is_label_feature(plan, f):

    return any(isinstance(test, LabelTest) and test.feature == f
               for _, _, rules in plan.trees for tests, _ in rules for test in tests)


def _py_float(v):
    v = float(v)
    if math.isinf(v):
        return "math.inf" if v > 0 else "-math.inf"
    return repr(v)


def _py_test(test):

    x = f"x{test.feature}"
    if isinstance(test, LabelTest):
        labels = "{" + ", ".join(python_literal(v) for v in test.labels) + "}" if test.labels \
            else "frozenset()"
        core = f"{x} {'not in' if test.negate else 'in'} {labels}"
    elif isinstance(test, CodeTest):
        parts = [f"({x} {lo_op} {_py_float(lo)} and {x} {hi_op} {_py_float(hi)})"
                 for lo_op, lo, hi_op, hi in test.ranges]
        core = " or ".join(parts) if parts else "False"
        core = f"not ({core})" if test.negate else f"({core})"
    else:
        core = f"{x} {test.op} {_py_float(test.t)}"
        if test.zero_band is not None:
            band = _py_float(test.zero_band)
            core = (f"abs({x}) <= {band} or {core}" if test.zero_value
                    else f"abs({x}) > {band} and {core}")
    if test.missing:
        return f"({x} is None or {core})"
    return f"({x} is not None and {core})"


def _header(plan, lang):
    n_rules = sum(len(r) for _, _, r in plan.trees)
    n_trees = plan.n_trees
    n_linear = len(plan.linear or [])
    from firecy._version import __version__

    n_conf = plan.n_confirmatory
    lines = [
        f"Rules extracted by firecy {__version__} from a {plan.source} model: "
        f"{n_rules} rules from {n_trees} trees"
        + (f" and {n_linear - n_conf} linear terms" if n_linear - n_conf else "")
        + (f", plus {n_conf} confirmatory terms (confirmatory=: kept whatever lambda, "
           "their conditions compared in float64 as written)" if n_conf else "") + ".",
        "prediction = intercept + the contribution of every rule the row satisfies "
        + ("+ every linear term, slope * (min(max(x, lower), upper) - center), 0 for a "
           "missing x " if n_linear else "")
        + "(the model's raw prediction: a classifier's margin).",
        f"Comparisons are the library's, exactly: {plan.reading}.",
    ]
    if plan.classes is not None:
        lines.append(_margin_meaning(plan.classes, lang))
    if plan.constraints:
        lines.append(f"Fitted under {plan.constraints} (over non-missing values).")
    cats = [plan.feature_names[f] for f in plan.used if _is_label_feature(plan, f)]
    if cats:
        lines.append("Categorical features, read by label: "
                     + ", ".join(map(display_value, cats)) + ".")
    if lang == "sql":
        lines.append("Missing values are NULL; other values are finite numbers.")
    else:
        lines.append("Missing values are None or NaN.")
    return lines


def _margin_meaning(classes, lang):
    """What a classifier's margin(s) mean, with the class each one speaks for."""
    shown = [display_value(c) for c in classes]
    if len(classes) == 2:
        return (f"Classes {shown[0]} and {shown[1]}: the margin is the log-odds "
                f"of {shown[1]}, P({shown[1]}) = 1 / (1 + exp(-margin)).")
    where = "out[k]" if lang == "python" else "The column ending in _k"
    names = ", ".join(f"{k} = {c}" for k, c in enumerate(shown))
    return (f"{where} is the margin of class k ({names}): the predicted class has the "
            f"largest margin, and the probabilities are softmax(margins).")


def render_python(plan, name):
    """The plan as the source of ``def name(row)``."""
    K = len(plan.intercepts)
    head = _header(plan, "python")
    # the header is text about the data (labels, names): python_docstring keeps
    # it inside the docstring whatever they contain
    out = ['"""' + python_docstring(head[0]), ""] + [python_docstring(line) for line in head[1:]]
    out += ['"""', "import bisect", "import math", _PY_HELPERS]
    for f in plan.used:
        if f in plan.next_label:
            ordered = sorted(plan.labels[f])
            out.append(f"_LABELS_{f} = ({''.join(python_literal(v) + ', ' for v in ordered)})")
            out.append(f"_KNOWN_{f} = frozenset(_LABELS_{f})")
    out += ["", "", f"def {name}(row):",
            '    """The raw prediction of one row (a mapping from feature name to value)."""']
    for f in plan.used:
        key = python_literal(plan.feature_names[f])
        if _is_label_feature(plan, f):
            read = f"_label(row[{key}])"
            if f in plan.next_label:
                read = f"_xgboost_label({read}, _LABELS_{f}, _KNOWN_{f}, {key})"
        else:
            read = f"_num(row[{key}])"
        out.append(f"    x{f} = {read}")
    if K == 1:
        out.append(f"    out = {_py_float(plan.intercepts[0])}")
    else:
        out.append("    out = [" + ", ".join(_py_float(b) for b in plan.intercepts) + "]")
    for k, t, rules in plan.trees:
        target = "out" if K == 1 else f"out[{k}]"
        out.append(f"    # {plan.tree_labels[t]}" + ("" if K == 1 else f", output {k}"))
        for i, (tests, contribution) in enumerate(rules):
            cond = " and ".join(_py_test(test) for test in tests) or "True"
            out.append(f"    {'if' if i == 0 else 'elif'} {cond}:")
            out.append(f"        {target} += {_py_float(contribution)}")
    for i, (k, tests, weight) in enumerate(plan.confirmatory or []):
        target = "out" if K == 1 else f"out[{k}]"
        out.append(f"    # confirmatory rule {i + 1}" + ("" if K == 1 else f", output {k}"))
        out.append(f"    if {' and '.join(_py_test(test) for test in tests)}:")
        out.append(f"        {target} += {_py_float(weight)}")
    for k, f, lo, hi, center, slope in plan.linear or []:
        target = "out" if K == 1 else f"out[{k}]"
        out.append(f"    # linear term (x clipped to [lower, upper], minus center)"
                   + ("" if K == 1 else f", output {k}"))
        out.append(f"    if x{f} is not None:")
        out.append(f"        {target} += {_py_float(slope)} * (min(max(x{f}, {_py_float(lo)}), "
                   f"{_py_float(hi)}) - ({_py_float(center)}))")
    out.append("    return out")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# SQL
# ---------------------------------------------------------------------------
_TRUE, _FALSE = "1 = 1", "1 = 0"


def _sql_float(v):
    v = float(v)
    if not math.isfinite(v):
        raise ValueError("a non-finite number cannot be written in SQL")
    return repr(v)


def _sql_compare(col, op, t):
    if math.isinf(t):  # finite inputs: the comparison is a constant
        below = op in ("<=", "<")
        return _TRUE if below == (t > 0) else _FALSE
    return f"{col} {op} {_sql_float(t)}"


def _sql_test(test, col):

    if isinstance(test, LabelTest):
        if test.labels:
            core = (f"{col} {'NOT IN' if test.negate else 'IN'} ("
                    + ", ".join(sql_string(v) for v in test.labels) + ")")
        else:
            core = _TRUE if test.negate else _FALSE
    elif isinstance(test, CodeTest):
        parts = [f"({_sql_compare(col, lo_op, lo)} AND {_sql_compare(col, hi_op, hi)})"
                 for lo_op, lo, hi_op, hi in test.ranges]
        core = "(" + " OR ".join(parts) + ")" if parts else _FALSE
        if test.negate:
            core = f"NOT {core}"
    else:
        core = _sql_compare(col, test.op, test.t)
        if test.zero_band is not None:
            band = _sql_float(test.zero_band)
            core = (f"ABS({col}) <= {band} OR {core}" if test.zero_value
                    else f"ABS({col}) > {band} AND {core}")
    if test.missing:
        return f"({col} IS NULL OR {core})"
    return f"({col} IS NOT NULL AND {core})"


def _sql_xgboost_label(col, labels):
    """XGBoost's reading of a label: itself if known, else the next known
    label in sorted order (binary collation), NULL after the last one."""
    ordered = sorted(labels)
    whens = " ".join(f"WHEN {col} < {sql_string(v)} THEN {sql_string(v)}" for v in ordered)
    known = ", ".join(sql_string(v) for v in ordered)
    return f"(CASE WHEN {col} IN ({known}) THEN {col} {whens} ELSE NULL END)"


def render_sql(plan, columns=None, alias=None, table=None):
    """The plan as one SQL expression per output."""
    columns = dict(columns or {})
    unknown = set(columns) - set(plan.feature_names)
    if unknown:
        raise ValueError(f"columns names unknown features: {sorted(unknown)}")
    # a table-qualified name cannot fall back to a string literal, as SQLite
    # reads a double-quoted name that matches no column: a missing column is an error
    prefix = "" if table is None else sql_identifier(table) + "."
    for f in plan.used:
        name = plan.feature_names[f]
        columns.setdefault(name, prefix + sql_identifier(name))
    for f in plan.next_label:
        name = plan.feature_names[f]
        columns[name] = _sql_xgboost_label(columns[name], plan.labels[f])
    K = len(plan.intercepts)
    exprs = []
    for k in range(K):
        terms = [_sql_float(plan.intercepts[k])]
        for kk, t, rules in plan.trees:
            if kk != k:
                continue
            whens = []
            for tests, contribution in rules:
                cond = " AND ".join(
                    _sql_test(test, columns[plan.feature_names[test.feature]])
                    for test in tests) or _TRUE
                whens.append(f"WHEN {cond} THEN {_sql_float(contribution)}")
            terms.append(f"CASE {' '.join(whens)} ELSE 0.0 END  /* {plan.tree_labels[t]} */")
        for i, (kk, tests, weight) in enumerate(plan.confirmatory or []):
            if kk != k:
                continue
            cond = " AND ".join(_sql_test(test, columns[plan.feature_names[test.feature]])
                                for test in tests)
            terms.append(f"CASE WHEN {cond} THEN {_sql_float(weight)} ELSE 0.0 END  "
                         f"/* confirmatory rule {i + 1} */")
        for kk, f, lo, hi, center, slope in plan.linear or []:
            if kk != k:
                continue
            col = columns[plan.feature_names[f]]
            clipped = (f"(CASE WHEN {col} < {_sql_float(lo)} THEN {_sql_float(lo)} "
                       f"WHEN {col} > {_sql_float(hi)} THEN {_sql_float(hi)} ELSE {col} END)")
            terms.append(f"CASE WHEN {col} IS NULL THEN 0.0 ELSE {_sql_float(slope)} * "
                         f"({clipped} - ({_sql_float(center)})) END  /* linear term */")
        exprs.append("\n  + ".join(terms))
    head = sql_comment(" ".join(_header(plan, "sql"))) + "\n"
    if K == 1:
        expr = head + exprs[0]
        return expr if alias is None else f"{expr}\n  AS {sql_identifier(alias)}"
    alias = "margin" if alias is None else alias
    return head + ",\n".join(f"{e}\n  AS {sql_identifier(f'{alias}_{k}')}"
                              for k, e in enumerate(exprs))
