"""Exact simplification of a rule: redundant splits on one feature merged.

``x < 5 and x < 10`` becomes ``x < 5``; a rule keeps selecting exactly the
same rows, missing values included (see :func:`simplify_conditions`).
"""
from __future__ import annotations

import dataclasses
import math

__all__ = ["simplify_conditions"]

# operator families of a Condition
UPPER = ("<=", "<")
LOWER = (">", ">=")
CATEGORICAL = ("in", "not in")


def _zam(c):
    return bool(getattr(c, "zero_as_missing", False))


def reading(c):
    """How a condition reads its input: precision, zero rules."""
    return (c.dtype, _zam(c), float(getattr(c, "zero_threshold", 0.0) or 0.0))


def _cast(c):
    return getattr(c, "category_cast", "trunc")


def _family(c):
    if c.op in CATEGORICAL:
        return "cat"
    return "upper" if c.op in UPPER else "lower"


def _group_key(c):
    """Conditions with the same key are merged into one.

    The key holds everything that decides which rows a condition reads as
    missing and how it reads a value (feature, precision, zero-as-missing,
    category cast): within a group the missing rows are the same set and the
    non-missing rows are compared on the same number, so the conjunction of
    the group is again one condition of the group's family.
    """
    fam = _family(c)
    key = (c.feature, fam) + reading(c)
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

    Examples
    --------
    Two upper bounds on ``x0`` merge into the tighter one; the lower bound
    comes first:

    >>> from firecy.ensembles import Condition
    >>> from firecy.rules import simplify_conditions
    >>> rule = [Condition(0, "<=", 5.0), Condition(1, ">", 0.5),
    ...         Condition(0, "<=", 10.0), Condition(0, ">", 1.0)]
    >>> [c.to_text() for c in simplify_conditions(rule)]
    ['x0 > 1.0', 'x0 <= 5.0', 'x1 > 0.5']

    A merged bound lets a missing value through only if every bound did:

    >>> merged, = simplify_conditions([Condition(0, "<=", 5.0, missing=True),
    ...                                Condition(0, "<=", 10.0)])
    >>> merged.threshold, merged.missing
    (5.0, False)

    Categorical conditions merge into one set:

    >>> merged, = simplify_conditions([Condition(2, "in", categories=(1, 2, 3)),
    ...                                Condition(2, "not in", categories=(2,))])
    >>> merged.to_text()
    'x2 in {1, 3}'
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
