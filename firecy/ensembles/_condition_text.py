"""The text of conditions: one copy for every printed rule.

:func:`format_conditions` writes a rule (its conditions simplified, a lower
and an upper bound on one feature as one interval) with the library's
operators, thresholds from :mod:`firecy.ensembles._threshold_text`, categories
as Python literals and the missing-value suffixes; ``firecy.rules`` gives it
its public name, and :meth:`Condition.to_text` and
:meth:`RuleEnsemble.rule_text` use it here, so the text lives below the
readable-output package and nothing imports upwards.
"""
from __future__ import annotations

import numpy as np

from firecy._escape import display_text
from firecy.ensembles._simplify import CATEGORICAL, LOWER, UPPER, reading, simplify_conditions
from firecy.ensembles._threshold_text import format_threshold

__all__ = ["ALL_ROWS", "format_conditions", "format_category", "missing_suffix",
           "format_threshold", "MISSING_SUFFIX", "ZERO_MISSING_SUFFIX",
           "NOT_ZERO_MISSING_SUFFIX"]

MISSING_SUFFIX = " (or missing)"
ZERO_MISSING_SUFFIX = " (or zero/missing)"
NOT_ZERO_MISSING_SUFFIX = " (not zero/missing)"


def format_category(value) -> str:
    """A category as a Python literal (integral floats as integers)."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return repr(value if not isinstance(value, np.str_) else str(value))


def missing_suffix(conds) -> str:
    """Suffix of one printed clause made of ``conds`` (one feature).

    A missing value satisfies the clause only if it satisfies every
    condition in it; zero-as-missing conditions say so either way, since a
    reader would otherwise take 0 for an ordinary value.
    """
    missing = all(c.missing for c in conds)
    if any(getattr(c, "zero_as_missing", False) for c in conds):
        return ZERO_MISSING_SUFFIX if missing else NOT_ZERO_MISSING_SUFFIX
    return MISSING_SUFFIX if missing else ""


ALL_ROWS = "(all rows)"


def _feature_name(feature_names, j):
    if feature_names is None:
        return f"x{j}"
    # a name with a newline or a bidi mark must not forge or reorder report lines
    return display_text(feature_names[j])


def format_conditions(conditions, feature_names=None, *, show_missing=False,
                      precision=None, simplify=True, exact=False):
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
        Round thresholds to this many significant digits (display only: the
        text then need not select the rule's rows).
    simplify : bool, default=True
        Merge redundant conditions first (:func:`simplify_conditions`).
    exact : bool, default=False
        Print every threshold so that the text, read as the library reads
        its input (:func:`~firecy.rules.parse_rule` and
        :func:`~firecy.rules.evaluate_parsed` with
        :func:`~firecy.rules.library_reading`), selects exactly the rule's
        rows for every input: a float64 threshold as its ``repr``. The
        default prints a float64 threshold as the shortest decimal that is
        exact for inputs written with at most 15 significant digits (and
        LightGBM's zero threshold as ``0.0``); float32 thresholds
        (scikit-learn trees, XGBoost) are exact either way (see
        :mod:`firecy.rules`). Exclusive with ``precision``.

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
    >>> from firecy.rules import LIGHTGBM_ZERO_THRESHOLD
    >>> c = Condition(0, "<=", 868.2000000000002, dtype="float64",   # LightGBM's
    ...               zero_threshold=LIGHTGBM_ZERO_THRESHOLD)
    >>> format_conditions([c]), format_conditions([c], exact=True)
    ('x0 <= 868.2', 'x0 <= 868.2000000000002')
    """
    if exact and precision is not None:
        raise ValueError("exact=True prints thresholds exactly; precision rounds them for "
                         "display: give one of them")
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
                    f"{format_threshold(c, precision, exact=exact)} {lop} {name} {u.op} "
                    f"{format_threshold(u, precision, exact=exact)}" + suffix([c, u])
                )
                continue
        if c.op in CATEGORICAL:
            cats = ", ".join(format_category(v) for v in c.categories)
            parts.append(f"{name} {c.op} {{{cats}}}" + suffix([c]))
        else:
            parts.append(f"{name} {c.op} {format_threshold(c, precision, exact=exact)}"
                         + suffix([c]))
    return " and ".join(parts)
