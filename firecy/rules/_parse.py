"""Reading a printed rule back: :func:`parse_rule` and :func:`evaluate_parsed`.

A printed rule can then be checked, or applied, without firecy's objects.
"""
from __future__ import annotations

import ast
import re
from collections import namedtuple

import numpy as np

from firecy.ensembles import LIGHTGBM_ZERO_THRESHOLD, Condition
from firecy.ensembles import ALL_ROWS, MISSING_SUFFIX, NOT_ZERO_MISSING_SUFFIX, ZERO_MISSING_SUFFIX
from firecy.ensembles import CATEGORICAL

__all__ = ["ParsedCondition", "RuleParseError", "parse_rule", "evaluate_parsed",
           "library_reading"]

ParsedCondition = namedtuple("ParsedCondition", "feature op value missing zero_missing")
ParsedCondition.__doc__ = """One condition read from a rule's text (a named tuple).

:func:`parse_rule` returns them; :func:`evaluate_parsed` applies them.

Parameters
----------
feature : int
    Index into ``feature_names``.
op : {"<=", "<", ">", ">=", "in", "not in"}
value : float or frozenset
    The threshold as written, or the categories of ``in`` / ``not in``.
missing : bool
    Whether a missing value satisfies it (the ``(or ...missing)`` suffix).
zero_missing : bool
    Whether 0 counts as missing (LightGBM's zero-as-missing suffixes).

Examples
--------
>>> from firecy.rules import ParsedCondition, parse_rule
>>> parse_rule("colour in {1, 4} (or missing)", ["colour"])
[ParsedCondition(feature=0, op='in', value=frozenset({1, 4}), missing=True, zero_missing=False)]
>>> cond = ParsedCondition(1, "<=", 2.5, False, False)
>>> parse_rule("x1 <= 2.5") == [cond]
True
"""

_NUM_RE = re.compile(
    r"[-+]?(?:inf|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)", re.IGNORECASE
)
_OPS_AFTER_NAME = ("not in", "in", "<=", ">=", "<", ">")


class RuleParseError(ValueError):
    """A rule text that :func:`parse_rule` cannot read.

    A :class:`ValueError`; its message says where the text stops making sense.

    Examples
    --------
    >>> from firecy.rules import RuleParseError, parse_rule
    >>> try:
    ...     parse_rule("age >> 40", ["age"])
    ... except RuleParseError as err:
    ...     print(err)
    expected a feature name at position 0 of 'age >> 40'
    >>> issubclass(RuleParseError, ValueError)
    True
    """


def parse_rule(text, feature_names=None):
    """Read a rule printed by :func:`format_conditions` back into conditions.

    Parameters
    ----------
    text : str
        E.g. ``"bmi <= 0.0294 and 0.5 < s5 <= 2.0 (or missing)"``.
    feature_names : sequence of str, optional
        The names used when printing (``x0``, ``x1``, ... when omitted).
        Names may contain spaces, operators or the word "and": they are
        matched as whole names, longest first.

    Returns
    -------
    list of ParsedCondition
        An interval ``a < x <= b`` gives two conditions (``x > a``,
        ``x <= b``) that share the suffix.  ``(all rows)`` gives ``[]``.

    Notes
    -----
    Thresholds are returned as Python floats, as written.  To select the rows
    the library selects, round both them and the input to the library's
    precision (float32 for scikit-learn and XGBoost, float64 for LightGBM)
    before comparing, as :func:`evaluate_parsed` does.

    Examples
    --------
    >>> from firecy.rules import parse_rule
    >>> for cond in parse_rule("bmi <= 0.0294 and 0.5 < s5 <= 2.0 (or missing)",
    ...                        ["bmi", "s5"]):
    ...     print(cond)
    ParsedCondition(feature=0, op='<=', value=0.0294, missing=False, zero_missing=False)
    ParsedCondition(feature=1, op='>', value=0.5, missing=True, zero_missing=False)
    ParsedCondition(feature=1, op='<=', value=2.0, missing=True, zero_missing=False)

    A printed rule of a fitted ensemble, read back, selects the rows of its
    leaf:

    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy.ensembles import rule_ensemble_from_model
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> ens = rule_ensemble_from_model(tree)
    >>> from firecy.rules import evaluate_parsed, library_reading, rule_text
    >>> text = rule_text(ens, 2)
    >>> text
    'x0 > 2.0 and x1 <= 15.0'
    >>> rows = evaluate_parsed(parse_rule(text), X, **library_reading(ens))
    >>> bool(np.array_equal(rows, tree.apply(X) == ens.leaf_node_ids[2]))
    True
    """
    text = text.strip()
    if text == ALL_ROWS:
        return []
    if feature_names is None:
        names = None
    else:
        names = sorted({str(n): i for i, n in enumerate(feature_names)}.items(),
                       key=lambda kv: -len(kv[0]))
    pos = 0
    out = []
    while True:
        clause, pos = _parse_clause(text, pos, names)
        out.extend(clause)
        if pos == len(text):
            return out
        if not text.startswith(" and ", pos):
            raise RuleParseError(f"expected ' and ' at position {pos} of {text!r}")
        pos += 5


def _parse_name(text, pos, names):
    if names is None:
        m = re.compile(r"x(\d+)").match(text, pos)
        if not m:
            raise RuleParseError(f"expected a feature name at position {pos} of {text!r}")
        return int(m.group(1)), m.end()
    for name, idx in names:
        if text.startswith(name, pos):
            rest = text[pos + len(name):]
            if any(rest.startswith(" " + op + " ") for op in _OPS_AFTER_NAME):
                return idx, pos + len(name)
    raise RuleParseError(f"expected a feature name at position {pos} of {text!r}")


def _parse_op(text, pos, ops):
    for op in ops:
        if text.startswith(" " + op + " ", pos):
            return op, pos + len(op) + 2
    raise RuleParseError(f"expected one of {ops} at position {pos} of {text!r}")


def _parse_number(text, pos):
    m = _NUM_RE.match(text, pos)
    if not m:
        raise RuleParseError(f"expected a number at position {pos} of {text!r}")
    return float(m.group(0)), m.end()


def _parse_set(text, pos):
    if not text.startswith("{", pos):
        raise RuleParseError(f"expected '{{' at position {pos} of {text!r}")
    i, quote = pos + 1, None
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "}":
            break
        i += 1
    else:
        raise RuleParseError(f"unclosed '{{' at position {pos} of {text!r}")
    inner = text[pos + 1:i].strip()
    values = ast.literal_eval("(" + inner + ",)") if inner else ()
    return frozenset(values), i + 1


def _parse_suffix(text, pos):
    for suffix, missing, zero in ((MISSING_SUFFIX, True, False), (ZERO_MISSING_SUFFIX, True, True),
                                  (NOT_ZERO_MISSING_SUFFIX, False, True)):
        if text.startswith(suffix, pos):
            return missing, zero, pos + len(suffix)
    return False, False, pos


def _parse_clause(text, pos, names):
    m = _NUM_RE.match(text, pos)
    interval = False
    if m is not None:
        # "a < name op b" unless a feature name itself starts with a digit
        try:
            _parse_name(text, pos, names)
        except RuleParseError:
            interval = True
    if interval:
        lo, pos = _parse_number(text, pos)
        lop, pos = _parse_op(text, pos, ("<=", "<"))
        feat, pos = _parse_name(text, pos, names)
        uop, pos = _parse_op(text, pos, ("<=", "<"))
        hi, pos = _parse_number(text, pos)
        missing, zero, pos = _parse_suffix(text, pos)
        return [
            ParsedCondition(feat, ">" if lop == "<" else ">=", lo, missing, zero),
            ParsedCondition(feat, uop, hi, missing, zero),
        ], pos
    feat, pos = _parse_name(text, pos, names)
    op, pos = _parse_op(text, pos, _OPS_AFTER_NAME)
    if op in CATEGORICAL:
        value, pos = _parse_set(text, pos)
    else:
        value, pos = _parse_number(text, pos)
    missing, zero, pos = _parse_suffix(text, pos)
    return [ParsedCondition(feat, op, value, missing, zero)], pos


def evaluate_parsed(parsed, X, dtype="float64", zero_threshold=0.0, unseen_labels=None):
    """Rows of ``X`` that satisfy every parsed condition.

    The input is read as the library reads it: rounded to ``dtype``, and
    values with ``|x| <= zero_threshold`` read as 0 (LightGBM:
    ``zero_threshold=LIGHTGBM_ZERO_THRESHOLD``, its kZeroThreshold).
    Numeric conditions compare it with the threshold rounded to ``dtype``;
    a missing value (NaN, and 0 for zero-as-missing conditions) satisfies a
    condition only if its ``missing`` flag says so.
    Categorical conditions compare labels on a pandas category (or object)
    column, and whenever the set holds a label that is not a number: a
    label outside the set is "not in" it.  On a numeric column they read a
    value as the category code ``trunc(x)`` (LightGBM's rule; XGBoost's
    agrees on non-negative values).  Each condition is evaluated by
    :meth:`Condition.evaluate <firecy.ensembles.Condition.evaluate>`, the
    code that evaluates the ensemble's own rules.

    Parameters
    ----------
    parsed : list of ParsedCondition
    X : array-like or DataFrame of shape (n_samples, n_features)
    dtype : {"float64", "float32"}
        The library's precision: float32 for scikit-learn and XGBoost,
        float64 for LightGBM.
    zero_threshold : float, default=0.0
    unseen_labels : dict of int -> tuple, optional
        For features whose library reads a label it was not fitted with as
        another of its labels (XGBoost 3.2: the next one in sorted order),
        the library's labels: such labels are read that way before the
        comparison.  :func:`library_reading` gives it.

    Returns
    -------
    ndarray of bool, shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.rules import evaluate_parsed, parse_rule
    >>> X = [[1.0, 0.0], [np.nan, 0.0], [3.0, 0.0], [1.0, 5.0]]
    >>> evaluate_parsed(parse_rule("x0 <= 2.0 (or missing) and x1 < 1"), X)
    array([ True,  True, False, False])

    The precision matters at the threshold: in float32, 0.1000000001 and
    the threshold 0.1 are the same number.

    >>> rule = parse_rule("x0 <= 0.1")
    >>> evaluate_parsed(rule, [[0.1000000001]]), evaluate_parsed(rule, [[0.1000000001]], "float32")
    (array([False]), array([ True]))
    """
    unseen_labels = unseen_labels or {}
    if not hasattr(X, "iloc"):
        X = np.asarray(X)
        if X.dtype != object:
            X = X.astype(np.float64, copy=False)
    out = np.ones(X.shape[0], dtype=bool)
    for p in parsed:
        cond = _as_condition(p, dtype, zero_threshold, _by_label(p, X))
        if cond.category_cast == "exact" and p.feature in unseen_labels:
            cond = Condition(p.feature, p.op, categories=tuple(p.value), missing=p.missing,
                             category_cast="floor", labels=tuple(unseen_labels[p.feature]))
        out &= cond.evaluate(X)
    return out


def _by_label(parsed, X):
    """Whether a categorical condition compares labels rather than codes."""
    if parsed.op not in CATEGORICAL:
        return False
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in parsed.value):
        return True
    if hasattr(X, "iloc"):
        kind = X.dtypes.iloc[parsed.feature]
        # object, or pandas' string dtype (its kind is "O" too)
        return getattr(kind, "name", None) == "category" or getattr(kind, "kind", None) == "O"
    return X.dtype == object


def _as_condition(parsed, dtype, zero_threshold, by_label=False):
    """A parsed condition as a :class:`~firecy.ensembles.Condition` that reads
    its input in ``dtype``; the written threshold is rounded to ``dtype`` too
    (the text of a float32 split is the float32 that splits where the library
    does, written in its shortest form)."""
    if by_label:
        return Condition(parsed.feature, parsed.op, categories=tuple(parsed.value),
                         missing=parsed.missing, category_cast="exact")
    if parsed.op in CATEGORICAL:
        return Condition(parsed.feature, parsed.op,
                         categories=tuple(sorted(float(v) for v in parsed.value)),
                         missing=parsed.missing, dtype=dtype,
                         zero_as_missing=parsed.zero_missing,
                         zero_threshold=zero_threshold, category_cast="trunc")
    with np.errstate(over="ignore"):
        threshold = float(np.asarray(parsed.value, dtype=dtype))
    return Condition(parsed.feature, parsed.op, threshold, missing=parsed.missing,
                     dtype=dtype, zero_as_missing=parsed.zero_missing,
                     zero_threshold=zero_threshold)


def library_reading(ensemble):
    """How the ensemble's library reads its input, for :func:`evaluate_parsed`.

    Parameters
    ----------
    ensemble : RuleEnsemble

    Returns
    -------
    dict
        ``dtype``: "float32" for scikit-learn (except HistGradientBoosting)
        and XGBoost, "float64" otherwise; ``zero_threshold``: LightGBM's
        kZeroThreshold for LightGBM, else 0; ``unseen_labels``: for XGBoost,
        the labels of each feature it re-codes by label (it reads an unseen
        label as the next of them in sorted order).

    Examples
    --------
    A scikit-learn tree rounds its input to float32: 15.0000001 is 15.0 to
    it, so it goes left at ``x1 <= 15.0``; read in float64 it would not.

    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy.ensembles import rule_ensemble_from_model
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> ens = rule_ensemble_from_model(tree)
    >>> from firecy.rules import evaluate_parsed, library_reading, parse_rule
    >>> reading = library_reading(ens)
    >>> reading
    {'dtype': 'float32', 'zero_threshold': 0.0, 'unseen_labels': {}}
    >>> rule = parse_rule("x0 <= 2.0 and x1 <= 15.0")
    >>> row = [[1.0, 15.0000001]]
    >>> evaluate_parsed(rule, row, **reading), evaluate_parsed(rule, row)
    (array([ True]), array([False]))
    >>> bool(tree.apply(np.array(row))[0] == ens.leaf_node_ids[0])   # the tree agrees
    True
    """
    adapter = getattr(ensemble, "_adapter", None)
    rule = getattr(adapter, "split_rule", None)
    unseen = dict(getattr(adapter, "labels", None) or {}) \
        if getattr(ensemble, "source", None) == "xgboost" else {}
    if rule is not None:
        return {"dtype": rule.dtype, "zero_threshold": float(rule.zero_threshold),
                "unseen_labels": unseen}
    for r in ensemble.rules:
        for c in r:
            if not c.is_categorical:
                return {"dtype": c.dtype,
                        "zero_threshold": float(getattr(c, "zero_threshold", 0.0) or 0.0),
                        "unseen_labels": unseen}
    source = getattr(ensemble, "source", None)
    if source == "lightgbm":
        return {"dtype": "float64", "zero_threshold": LIGHTGBM_ZERO_THRESHOLD,
                "unseen_labels": {}}
    return {"dtype": "float32", "zero_threshold": 0.0, "unseen_labels": unseen}
