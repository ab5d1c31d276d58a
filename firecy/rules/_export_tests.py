"""The tests a rule's conditions become when it leaves the library.

Each condition becomes a test that reproduces the library's reading exactly:
its operator, its precision, its missing values and its categories.

Precision without float32.  scikit-learn and XGBoost compare ``float32(x)``
with the threshold.  Rounding to float32 is monotone, so the float64 values
``x`` that satisfy ``float32(x) <= t`` form a half-line ``x <= m`` or
``x < m``, where ``m`` is the midpoint between the largest float32 ``f <= t``
and the next float32 up (a float64 holds it exactly); the tie ``x == m``
rounds to the float32 with an even mantissa, which decides ``<=`` or ``<``.
The exported comparison is that float64 one (:func:`float64_comparison`), so
neither Python nor SQL needs a float32 type.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["float64_comparison", "NumericTest", "LabelTest", "CodeTest", "condition_test"]

_F32_MAX = float(np.finfo(np.float32).max)
_TWO_128 = 2.0 ** 128
_COMPLEMENT = {"<=": ">", "<": ">=", ">": "<=", ">=": "<"}


def _even(f32) -> bool:
    """Whether a finite float32 has an even mantissa (infinities count as even)."""
    if not np.isfinite(f32):
        return True
    return int(np.float32(f32).view(np.uint32)) % 2 == 0


def _float32_below(t, strict):
    """The largest float32 f with f <= t (f < t if ``strict``), as a float,
    -inf if there is none."""
    with np.errstate(over="ignore"):
        f = np.float32(t)
    if math.isnan(t):
        raise ValueError("NaN threshold")
    if float(f) > t or (strict and float(f) == t):
        with np.errstate(over="ignore"):
            f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


def float64_comparison(op, threshold, dtype="float32"):
    """The float64 comparison equivalent to the library's comparison.

    Parameters
    ----------
    op : {"<=", "<", ">", ">="}
    threshold : float
    dtype : {"float32", "float64"}
        The precision the library rounds the input to before comparing.

    Returns
    -------
    (op64, t64) : (str, float)
        For every float64 ``x`` that is not NaN, ``x op64 t64`` holds if and
        only if ``dtype(x) op threshold`` does.

    Examples
    --------
    scikit-learn rounds the input to float32 before it compares: 0.50000001
    is 0.5 in float32, so it satisfies ``x <= 0.5`` there but not in float64.
    The equivalent float64 comparison moves the threshold to the halfway
    point to the next float32:

    >>> import numpy as np
    >>> from firecy.rules import float64_comparison
    >>> op64, t64 = float64_comparison("<=", 0.5)
    >>> op64, t64
    ('<=', 0.5000000298023224)
    >>> x = 0.50000001
    >>> bool(np.float32(x) <= 0.5), x <= 0.5, x <= t64
    (True, False, True)
    >>> float64_comparison("<", 0.5)
    ('<', 0.4999999850988388)
    >>> float64_comparison("<=", 0.5, dtype="float64")
    ('<=', 0.5)
    """
    if op not in _COMPLEMENT:
        raise ValueError(f"not a numeric operator: {op!r}")
    threshold = float(threshold)
    if dtype == "float64":
        return op, threshold
    if dtype != "float32":
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    if op in (">", ">="):
        op64, t64 = float64_comparison(_COMPLEMENT[op], threshold, dtype)
        return _COMPLEMENT[op64], t64
    if op == "<" and threshold == -math.inf:
        return "<", -math.inf           # nothing is below -inf
    # float32(x) <= f, with f the largest float32 satisfying the comparison
    f = _float32_below(threshold, strict=(op == "<"))
    if f == math.inf:
        return "<=", math.inf
    if f == -math.inf:
        lo, hi = -_TWO_128, -_F32_MAX   # -inf behaves as -2**128 in rounding
        tie_down = True                 # the tie rounds to -inf ("even")
    else:
        lo = f
        with np.errstate(over="ignore"):
            g = float(np.nextafter(np.float32(f), np.float32(np.inf)))
        hi = _TWO_128 if g == math.inf else g
        tie_down = _even(np.float32(f))
    mid = (lo + hi) / 2.0               # exact: both are float32 values
    return ("<=" if tie_down else "<"), mid


# ---------------------------------------------------------------------------
# the plan: what both renderers print
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class NumericTest:
    """``x op t`` on the float64 input; a NaN / None satisfies it iff
    ``missing``; unless ``zero_band`` is None, inputs with
    ``|x| <= zero_band`` are read as 0, which satisfies it iff ``zero_value``."""

    feature: int
    op: str
    t: float
    missing: bool
    zero_band: float | None = None
    zero_value: bool = False


@dataclass(frozen=True)
class LabelTest:
    """``value in labels`` (``negate``: not in) on a category label; a missing
    value satisfies it iff ``missing``."""

    feature: int
    labels: tuple
    negate: bool
    missing: bool


@dataclass(frozen=True)
class CodeTest:
    """The input read as a category code lies in one of ``ranges``: each
    ``(lo_op, lo, hi_op, hi)`` means ``x lo_op lo and x hi_op hi`` on the
    float64 input (``negate``: in none of them); missing iff ``missing``."""

    feature: int
    ranges: tuple
    negate: bool
    missing: bool


def _numeric_test(c):
    op64, t64 = float64_comparison(c.op, c.threshold, c.dtype)
    band = float(getattr(c, "zero_threshold", 0.0) or 0.0)
    if band and c.dtype != "float64":
        raise NotImplementedError("a zero threshold with a float32 comparison")
    zero_value = c.missing if c.zero_as_missing else _compare(0.0, c.op, c.threshold)
    if not band and not c.zero_as_missing:
        return NumericTest(c.feature, op64, t64, c.missing)
    if not c.zero_as_missing and zero_value == _compare(band, op64, t64) \
            == _compare(-band, op64, t64):
        # the comparison is constant on [-band, band]: reading 0 changes nothing
        return NumericTest(c.feature, op64, t64, c.missing)
    return NumericTest(c.feature, op64, t64, c.missing, band, zero_value)


def _compare(x, op, t):
    return {"<=": x <= t, "<": x < t, ">": x > t, ">=": x >= t}[op]


def _code_ranges(codes, cast, dtype):
    """Float64 ranges of the inputs read as one of ``codes``."""
    codes = sorted({int(k) for k in codes if float(k) >= 0 and float(k).is_integer()})
    runs = []
    for k in codes:
        if runs and runs[-1][1] == k:
            runs[-1][1] = k + 1
        else:
            runs.append([k, k + 1])
    out = []
    for a, b in runs:
        if a == 0 and cast == "trunc":
            # LightGBM truncates toward zero: (-1, 1) reads as category 0
            lo = float64_comparison(">", -1.0, dtype)
        else:
            lo = float64_comparison(">=", float(a), dtype)
        hi = float64_comparison("<", float(b), dtype)
        out.append((lo[0], lo[1], hi[0], hi[1]))
    return tuple(out)


def condition_test(c):
    """The test of one (simplified) condition, in the library's exact reading."""
    c = c.as_label_set()
    if not c.is_categorical:
        return _numeric_test(c)
    negate = c.op == "not in"
    if c.labels or c.category_cast == "exact":
        return LabelTest(c.feature, tuple(c.categories), negate, c.missing)
    return CodeTest(c.feature, _code_ranges(c.categories, c.category_cast, c.dtype),
                    negate, c.missing)
