"""Readable rules: simplification, text, tables, reports, antecedent counts.

A fitted FIRE model keeps a few leaves of a tree ensemble, each with a weight
``w_j``.  Leaf ``j`` is the rule "the row satisfies every split on the path
from the root to the leaf"; a row's prediction is the intercept plus
``w_j * v_j`` (weight times leaf value, the rule's *contribution*) for every
kept rule it satisfies.  This module turns that into something a person can
read:

* :func:`simplify_conditions` merges redundant splits on one feature
  (``x < 5 and x < 10`` becomes ``x < 5``) without changing which rows, missing
  values included, satisfy the rule;
* :func:`rule_text` / :func:`rules_table` / :func:`rules_report` print the kept
  rules with the real feature names and each library's own operators;
* :func:`parse_rule` reads such a text back, so a printed rule can be checked
  (or applied) independently of firecy's objects;
* :func:`count_antecedents` counts the distinct split nodes a reader must
  examine (the "antecedents" of the FIRE paper, section 6).

Text conventions
----------------
* Operators are the library's: scikit-learn and LightGBM send ``x <= t`` left
  and ``x > t`` right, XGBoost ``x < t`` left and ``x >= t`` right.
  Categorical splits print as ``x in {1, 4}`` / ``x not in {1, 4}``.
* Two bounds on one feature print as an interval, ``0.5 < x <= 2``.
* Thresholds are exact, never rounded for looks, in the library's precision.
  scikit-learn and XGBoost round the input to float32 before comparing, so a
  float32 threshold is printed: the float32 that splits the float32 values
  where the library does, in its shortest form (sklearn's
  ``0.800000011920929`` prints as ``0.8``).  Read back as a float32 and
  compared with the input rounded to float32, it selects exactly the leaf's
  rows; and for data written with up to 7 significant digits the plain
  decimal comparison agrees too.  That is why a split between 26.8 and 26.9
  prints as ``bmi <= 26.849998``: its threshold, 26.8499994, lies below the
  float32 value of 26.85, so a bmi of 26.85 does not satisfy it.  LightGBM
  compares in float64 (after reading every ``|x| <= 1e-35`` as 0): its
  thresholds print as their ``repr``.  :func:`parse_rule`,
  :func:`evaluate_parsed` and :func:`library_reading` implement these
  readings; ``Condition.to_text`` follows the same convention.  Pass
  ``precision=`` to round for display instead.
* Missing values: with ``show_missing=True`` a condition that a missing value
  satisfies ends in ``(or missing)``; a condition without the suffix is not
  satisfied by a missing value.  LightGBM's ``zero_as_missing`` splits end in
  ``(or zero/missing)`` / ``(not zero/missing)`` (LightGBM also reads every
  ``|x| <= 1e-35`` as 0, see :func:`library_reading`).  By default
  (``show_missing="auto"``) suffixes are printed only for features that have
  missing values in the ``X`` given (none when no ``X`` is given): the text is
  then exact for every row without missing values.
* A rule with no condition (a tree with a single leaf) prints as
  ``(all rows)``.
"""
from __future__ import annotations

import ast
import dataclasses
import math
import re
from collections import namedtuple

import numpy as np

from firecy.ensembles._condition import (
    LIGHTGBM_ZERO_THRESHOLD,
    MISSING_SUFFIX,
    NOT_ZERO_MISSING_SUFFIX,
    ZERO_MISSING_SUFFIX,
    format_category,
    format_threshold,
    missing_suffix,
)

__all__ = [
    "simplify_conditions",
    "format_conditions",
    "rule_text",
    "rules_table",
    "rules_report",
    "count_antecedents",
    "kept_antecedents",
    "parse_rule",
    "evaluate_parsed",
    "ParsedCondition",
    "ALL_ROWS",
    "LIGHTGBM_ZERO_THRESHOLD",
    "library_reading",
]

ALL_ROWS = "(all rows)"

_UPPER = ("<=", "<")
_LOWER = (">", ">=")
_CATEGORICAL = ("in", "not in")



# ---------------------------------------------------------------------------
# simplification
# ---------------------------------------------------------------------------
def _zam(c):
    return bool(getattr(c, "zero_as_missing", False))


def _reading(c):
    """How a condition reads its input: precision, zero rules."""
    return (c.dtype, _zam(c), float(getattr(c, "zero_threshold", 0.0) or 0.0))


def _cast(c):
    return getattr(c, "category_cast", "trunc")


def _family(c):
    if c.op in _CATEGORICAL:
        return "cat"
    return "upper" if c.op in _UPPER else "lower"


def _group_key(c):
    """Conditions with the same key are merged into one.

    The key holds everything that decides which rows a condition reads as
    missing and how it reads a value (feature, precision, zero-as-missing,
    category cast): within a group the missing rows are the same set and the
    non-missing rows are compared on the same number, so the conjunction of
    the group is again one condition of the group's family.
    """
    fam = _family(c)
    key = (c.feature, fam) + _reading(c)
    if fam == "cat":
        key += (_cast(c),)
    return key


def _tightest_upper(group):
    # {x op t}: a smaller t is tighter; on a tie "<" is tighter than "<=".
    return min(group, key=lambda c: (c.threshold, 0 if c.op == "<" else 1))


def _tightest_lower(group):
    # {x op t}: a larger t is tighter; on a tie ">" is tighter than ">=".
    return min(group, key=lambda c: (-c.threshold, 0 if c.op == ">" else 1))


def _merge_categorical(group):
    op, cats = group[0].op, list(group[0].categories)
    for c in group[1:]:
        other = list(c.categories)
        if op == "in" and c.op == "in":
            cats = [v for v in cats if v in other]
        elif op == "in":  # in A and not in B
            cats = [v for v in cats if v not in other]
        elif c.op == "in":  # not in A and in B
            cats, op = [v for v in other if v not in cats], "in"
        else:  # not in A and not in B
            cats = cats + [v for v in other if v not in cats]
    try:
        cats = sorted(cats)
    except TypeError:
        pass
    return dataclasses.replace(group[0], op=op, categories=tuple(cats))


def simplify_conditions(conditions):
    """Merge redundant conditions on the same feature, exactly.

    Within each group of conditions that read a feature the same way (same
    feature, same comparison precision, same zero rules, same category cast),
    the upper bounds (``<=``, ``<``) merge into the tightest,
    the lower bounds (``>``, ``>=``) into the tightest, and categorical
    conditions into one set (``in A and not in B`` is ``in A - B``).  A merged
    condition is satisfied by a missing value only if every condition merged
    into it was.  Conditions that read the feature differently (for instance
    a float32 and a float64 comparison) are never merged.

    Parameters
    ----------
    conditions : sequence of Condition
        A rule in path order.

    Returns
    -------
    list of Condition
        Grouped by feature in the order features first appear; for one
        feature the lower bound comes before the upper bound, then any
        categorical condition.  A row satisfies all of them if and only if it
        satisfies all of ``conditions``.
    """
    groups = {}
    first_seen = {}
    for c in conditions:
        groups.setdefault(_group_key(c), []).append(c)
        first_seen.setdefault(c.feature, len(first_seen))
    fam_order = {"lower": 0, "upper": 1, "cat": 2}
    out = []
    for key in sorted(groups, key=lambda k: (first_seen[k[0]], fam_order[k[1]])):
        group = groups[key]
        if len(group) == 1:
            out.append(group[0])
            continue
        fam = key[1]
        if fam == "cat":
            merged = _merge_categorical(group)
        elif any(math.isnan(c.threshold) for c in group):
            out.extend(group)  # nothing sensible to merge; keep as is
            continue
        elif fam == "upper":
            merged = _tightest_upper(group)
        else:
            merged = _tightest_lower(group)
        missing = all(c.missing for c in group)
        if merged.missing != missing:
            merged = dataclasses.replace(merged, missing=missing)
        out.append(merged)
    return out


# ---------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------
def _feature_name(feature_names, j):
    if feature_names is None:
        return f"x{j}"
    return str(feature_names[j])


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
    precision : int, optional
        Round thresholds to this many significant digits (for display; the
        default prints them exactly).
    simplify : bool, default=True
        Merge redundant conditions first (:func:`simplify_conditions`).

    Returns
    -------
    str
    """
    conds = simplify_conditions(conditions) if simplify else list(conditions)
    if not conds:
        return ALL_ROWS
    if show_missing is True:
        show = None  # every feature
    elif not show_missing:
        show = frozenset()
    else:
        show = frozenset(int(j) for j in show_missing)

    def suffix(cs):
        if show is not None and cs[0].feature not in show:
            return ""
        return missing_suffix(cs)

    # pair each lower bound with an upper bound read the same way -> interval
    used = set()
    parts = []
    for i, c in enumerate(conds):
        if i in used:
            continue
        name = _feature_name(feature_names, c.feature)
        if c.op in _LOWER:
            partner = next(
                (k for k in range(i + 1, len(conds))
                 if k not in used and conds[k].op in _UPPER
                 and conds[k].feature == c.feature and _reading(conds[k]) == _reading(c)),
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
        if c.op in _CATEGORICAL:
            cats = ", ".join(format_category(v) for v in c.categories)
            parts.append(f"{name} {c.op} {{{cats}}}" + suffix([c]))
        else:
            parts.append(f"{name} {c.op} {format_threshold(c, precision)}" + suffix([c]))
    return " and ".join(parts)


def rule_text(ensemble, j, feature_names=None, *, show_missing=False, precision=None):
    """The text of rule (leaf column) ``j`` of ``ensemble``."""
    names = _names(ensemble, feature_names)
    return format_conditions(ensemble.rules[j], names, show_missing=show_missing,
                             precision=precision)


# ---------------------------------------------------------------------------
# parsing the text back
# ---------------------------------------------------------------------------
ParsedCondition = namedtuple("ParsedCondition", "feature op value missing zero_missing")
ParsedCondition.__doc__ = """One condition read from a rule's text.

feature : int (index into ``feature_names``); op : one of ``<= < > >= in
"not in"``; value : float, or frozenset of categories for ``in``/``not in``;
missing : whether a missing value satisfies it (the ``(or ...missing)``
suffix); zero_missing : whether 0 counts as missing (LightGBM's zero-as-missing
suffixes).
"""

_NUM_RE = re.compile(
    r"[-+]?(?:inf|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)", re.IGNORECASE
)
_OPS_AFTER_NAME = ("not in", "in", "<=", ">=", "<", ">")


class RuleParseError(ValueError):
    """A rule text that :func:`parse_rule` cannot read."""


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
    if op in _CATEGORICAL:
        value, pos = _parse_set(text, pos)
    else:
        value, pos = _parse_number(text, pos)
    missing, zero, pos = _parse_suffix(text, pos)
    return [ParsedCondition(feat, op, value, missing, zero)], pos


def evaluate_parsed(parsed, X, dtype="float64", zero_threshold=0.0):
    """Rows of ``X`` that satisfy every parsed condition.

    The input is read as the library reads it: rounded to ``dtype``, and
    values with ``|x| <= zero_threshold`` read as 0 (LightGBM:
    ``zero_threshold=LIGHTGBM_ZERO_THRESHOLD``, its kZeroThreshold).
    Numeric conditions compare it with the threshold rounded to ``dtype``;
    a missing value (NaN, and 0 for zero-as-missing conditions) satisfies a
    condition only if its ``missing`` flag says so.
    Categorical conditions read a value as ``trunc(x)`` (LightGBM's rule;
    XGBoost's agrees on non-negative values).

    Parameters
    ----------
    parsed : list of ParsedCondition
    X : array-like of shape (n_samples, n_features)
    dtype : {"float64", "float32"}
        The library's precision: float32 for scikit-learn and XGBoost,
        float64 for LightGBM.
    zero_threshold : float, default=0.0

    Returns
    -------
    ndarray of bool, shape (n_samples,)
    """
    X = np.asarray(X, dtype=np.float64)
    out = np.ones(X.shape[0], dtype=bool)
    for p in parsed:
        x = X[:, p.feature].astype(dtype).astype(np.float64)
        if zero_threshold > 0:
            x = np.where(np.abs(x) <= zero_threshold, 0.0, x)
        miss = np.isnan(x)
        if p.zero_missing:
            miss |= x == 0.0
        if p.op not in _CATEGORICAL:
            v = float(np.asarray(p.value, dtype=dtype))
        with np.errstate(invalid="ignore", over="ignore"):
            if p.op == "<=":
                ok = x <= v
            elif p.op == "<":
                ok = x < v
            elif p.op == ">":
                ok = x > v
            elif p.op == ">=":
                ok = x >= v
            else:
                cats = np.array(sorted(float(v) for v in p.value), dtype=np.float64)
                member = np.isin(np.trunc(np.where(miss, 0.0, x)), cats)
                ok = member if p.op == "in" else ~member
        ok = np.where(miss, p.missing, ok)
        out &= ok
    return out


def library_reading(ensemble):
    """How the ensemble's library reads its input, for :func:`evaluate_parsed`.

    Returns
    -------
    dict
        ``{"dtype": "float32" | "float64", "zero_threshold": float}``:
        float32 for scikit-learn and XGBoost; float64 and LightGBM's
        kZeroThreshold for LightGBM.  Taken from the ensemble's conditions.
    """
    for rule in ensemble.rules:
        for c in rule:
            if not c.is_categorical:
                return {"dtype": c.dtype,
                        "zero_threshold": float(getattr(c, "zero_threshold", 0.0) or 0.0)}
    source = getattr(ensemble, "source", None)
    if source == "lightgbm":
        return {"dtype": "float64", "zero_threshold": LIGHTGBM_ZERO_THRESHOLD}
    return {"dtype": "float32", "zero_threshold": 0.0}


# ---------------------------------------------------------------------------
# tables and reports
# ---------------------------------------------------------------------------
def _is_estimator(obj):
    return hasattr(obj, "ensemble_") and hasattr(obj, "coef_")


def _unpack(model_or_ensemble, coef, intercept=None):
    """Accept either (ensemble, coef) or a fitted FIRE estimator."""
    if _is_estimator(model_or_ensemble):
        est = model_or_ensemble
        if coef is None:
            coef = est.coef_
        if intercept is None:
            intercept = getattr(est, "intercept_", None)
        return est.ensemble_, coef, intercept, getattr(est, "feature_names_in_", None)
    if coef is None:
        raise TypeError("coef is required when the first argument is a rule ensemble")
    return model_or_ensemble, coef, intercept, None


def _names(ensemble, feature_names):
    if feature_names is not None:
        return [str(n) for n in feature_names]
    names = getattr(ensemble, "feature_names", None)
    return [str(n) for n in names] if names is not None else None


def _tree_of(ensemble, cols):
    ptr = np.asarray(ensemble.block_ptr)
    return np.searchsorted(ptr, np.asarray(cols), side="right") - 1


def _check_coef(ensemble, coef):
    coef = np.asarray(coef, dtype=np.float64)
    n_rules = int(ensemble.n_rules)
    if coef.shape != (n_rules,):
        raise ValueError(f"coef has shape {coef.shape}; expected ({n_rules},)")
    return coef


def _n_outputs(ensemble):
    return int(getattr(ensemble, "n_outputs", 1) or 1)


def _column_class(ensemble, cols):
    """Output (class) index of each column (0 for single-output ensembles)."""
    tree_class = getattr(ensemble, "tree_class", None)
    if tree_class is None:
        return np.zeros(len(cols), dtype=np.int64)
    return np.asarray(tree_class)[_tree_of(ensemble, cols)]


def _support(ensemble, X, sample_weight):
    """Weighted fraction of the rows of X in each leaf column, shape (R,)."""
    leaves = np.asarray(ensemble.leaf_table(X))
    n = leaves.shape[0]
    if n == 0:
        return np.full(int(ensemble.n_rules), np.nan)
    if sample_weight is None:
        w = np.full(n, 1.0 / n)
    else:
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.shape != (n,):
            raise ValueError(f"sample_weight has shape {w.shape}, expected ({n},)")
        w = w / w.sum()
    return np.bincount(leaves.ravel(), weights=np.repeat(w, leaves.shape[1]),
                       minlength=int(ensemble.n_rules))


def _missing_features(X, show_missing):
    """Resolve show_missing="auto" to the features with missing values in X."""
    if show_missing != "auto":
        return show_missing
    if X is None:
        return False
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        return True  # categorical / object columns: be explicit
    if arr.ndim != 2:
        return False
    return set(np.flatnonzero(np.isnan(arr).any(axis=0)).tolist())


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
    """
    ensemble, coef, _, est_names = _unpack(ensemble, coef)
    if feature_names is None:
        feature_names = est_names
    names = _names(ensemble, feature_names)
    coef = _check_coef(ensemble, coef)
    leaf_values = np.asarray(ensemble.leaf_values, dtype=np.float64)
    support = _support(ensemble, X, sample_weight) if X is not None else None
    show = _missing_features(X, show_missing)
    multi = _n_outputs(ensemble) > 1
    cols = np.flatnonzero(coef)
    trees = _tree_of(ensemble, cols)
    classes = _column_class(ensemble, cols)
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


def _estimator_intercept(est, X):
    """A fitted estimator's constant term: ``intercept_`` plus the ensemble's baseline.

    The estimator predicts ``baseline(X) + intercept_ + M w``; the baseline
    (a boosting model's initial prediction, 0 for a random forest) is the same
    for every row except for a gradient boosting model with a custom ``init``
    estimator, which the report then mentions.
    """
    b = np.asarray(est.intercept_, dtype=np.float64)
    ens = est.ensemble_
    try:
        if X is not None:
            base = np.asarray(ens.baseline(X), dtype=np.float64)
        else:
            base = np.asarray(ens.baseline(np.zeros((1, int(ens.n_features_in_)))),
                              dtype=np.float64)
    except Exception:  # e.g. a model that needs a DataFrame: report intercept_ alone
        return b, " (plus the ensemble's baseline)"
    if base.size == 0:
        return b, ""
    base = base.reshape(base.shape[0], -1)
    first = base[0]
    if not np.allclose(base, first, rtol=1e-12, atol=1e-12):
        return b, " (plus the ensemble's baseline, which varies by row)"
    if not np.any(first):
        return b, ""
    total = b + (first if first.size > 1 else first[0])
    return total, f" (FIRE intercept {_fmt(float(np.ravel(b)[0]), 4)} + ensemble baseline)"


def _fmt(v, digits):
    return f"{v:.{digits}g}"


def rules_report(ensemble, coef=None, intercept=None, feature_names=None, X=None,
                 sample_weight=None, *, show_missing="auto", precision=None, digits=4,
                 max_rules=None):
    """A plain-text report of the kept rules.

    Parameters
    ----------
    ensemble, coef, feature_names, X, sample_weight, show_missing, precision
        As in :func:`rules_table` (an estimator also supplies ``intercept``).
    intercept : float or array-like of shape (n_outputs,), optional
        The model's intercept (``intercept_`` of an estimator; 0 if omitted).
    digits : int, default=4
        Significant digits of the intercept and the contributions.
    max_rules : int, optional
        Print only the first ``max_rules`` rules (the counts cover all).

    Returns
    -------
    str
        The intercept, one line per rule, "if <conditions> then
        +<contribution>", largest contribution first and numbered as in
        :func:`firecy.plotting.plot_rules`, then the numbers of rules, trees
        and distinct antecedents.
    """
    baseline_note = ""
    if _is_estimator(ensemble) and intercept is None:
        intercept, baseline_note = _estimator_intercept(ensemble, X)
    ensemble, coef, intercept, est_names = _unpack(ensemble, coef, intercept)
    if feature_names is None:
        feature_names = est_names
    rows = rules_table(ensemble, coef, feature_names, X, sample_weight,
                       show_missing=show_missing, precision=precision, as_frame=False)
    coef = _check_coef(ensemble, coef)
    intercepts = np.atleast_1d(np.asarray(0.0 if intercept is None else intercept,
                                          dtype=np.float64))
    n_out = _n_outputs(ensemble)
    lines = []
    for k in range(n_out):
        krows = [r for r in rows if r.get("class", 0) == k]
        if n_out > 1:
            if not krows:
                continue
            lines.append(f"class {k}:")
        b = intercepts[k] if intercepts.size > k else intercepts[0]
        lines.append(f"intercept: {_fmt(b, digits)}{baseline_note}")
        lines.append("prediction = intercept + the contributions of the rules a row satisfies")
        shown = krows if max_rules is None else krows[:max_rules]
        width = len(str(len(shown)))
        for i, r in enumerate(shown, 1):
            sup = "" if math.isnan(r["support"]) else f", support {100 * r['support']:.1f}%"
            contrib = r["contribution"]
            sign = "+" if contrib >= 0 else "-"
            lines.append(
                f"{i:>{width}}. if {r['rule']} then {sign}{_fmt(abs(contrib), digits)}"
                f"   (tree {r['tree']}{sup})"
            )
        if max_rules is not None and len(krows) > max_rules:
            lines.append(f"... and {len(krows) - max_rules} more")
    n_trees = len(set(r["tree"] for r in rows))
    lines.append(
        f"{len(rows)} rules from {n_trees} trees, "
        f"{count_antecedents(ensemble, coef)} distinct antecedents (split nodes to read)"
    )
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# antecedents
# ---------------------------------------------------------------------------
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
    """
    ensemble, coef, _, _ = _unpack(ensemble, coef)
    coef = _check_coef(ensemble, coef)
    kept = np.flatnonzero(coef)
    paths = [np.asarray(ensemble.node_paths[j], dtype=np.int64) for j in kept]
    if not paths:
        return np.empty(0, dtype=np.int64)
    return np.unique(np.concatenate(paths))


def count_antecedents(ensemble, coef=None):
    """Number of distinct split nodes on the paths of the kept rules.

    This is what a reader must examine to understand the rule set (the
    "antecedents" of the FIRE paper, section 6): rules from one tree that
    share a parent share its split, so fused rule sets count fewer.

    Parameters
    ----------
    ensemble : RuleEnsemble or fitted FIRE estimator
    coef : array-like of shape (n_rules,)

    Returns
    -------
    int
    """
    return int(kept_antecedents(ensemble, coef).size)
