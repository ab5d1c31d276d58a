"""The one threshold formatter: the shortest text that reads as the model reads.

Every printed rule (``rules_``, reports, summaries, risk cards, plots, the
CLI) writes a numeric threshold with :func:`format_threshold`; the exports
(Python, SQL, JSON) keep the exact float64 value instead.

* A float32 comparison (scikit-learn trees, XGBoost: the input is rounded to
  float32 first) prints the shortest text of the float32 boundary it is
  equivalent to.  Read back as the library reads it, the text selects the
  same rows for every input.
* A float64 comparison (LightGBM, HistGradientBoosting) prints the shortest
  decimal ``d`` such that ``x <= d`` selects the same values as the model's
  threshold among every number written with at most 15 significant digits
  (all a CSV file holds unless it was written as a float64 ``repr``) and
  every float32 value (data stored in float32), and the threshold itself
  (HistGradientBoosting splits at data values), except LightGBM's, which sit
  just above its data values, never on one: LightGBM's
  ``868.2000000000002`` prints as ``868.2``, a HistGradientBoosting
  threshold of full precision prints in full.  No text shorter than the
  float64 ``repr`` can be exact for all float64 inputs (the threshold itself
  is one), so a value written to 16-17 digits that lies between ``d`` and
  the threshold can read differently: the CLI checks the rows it shows and
  prints such a condition exactly (``Condition.exact_text``), and
  ``exact=True`` prints the ``repr``.
* LightGBM's split between 0 and the positive values (threshold
  1.0000000180025095e-35, the edge of the band LightGBM reads as zero)
  prints as ``0.0``: ``x > 0.0`` under LightGBM's reading; ``exact=True``
  prints the edge.
"""
from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal

import numpy as np

__all__ = ["format_threshold", "short_threshold"]

_DIGITS = 15   # decimal digits every float64 holds exactly (DBL_DIG)


def _float64_boundary(cond):
    """``B`` with: the model selects the "lower" side (``<=`` / ``<``) iff
    ``x <= B`` for float64 ``x``, or None for a threshold left exact."""
    t = float(cond.threshold)
    if not np.isfinite(t) or cond.zero_threshold > 0 and abs(t) <= 1e-30:
        return None
    if cond.dtype == "float64":
        return t if cond.op in ("<=", ">") else float(np.nextafter(t, -np.inf))
    f = np.float32(t)   # largest float32 on the lower side
    if cond.op in ("<=", ">"):
        if float(f) > t:
            f = np.nextafter(f, np.float32(-np.inf))
    elif float(f) >= t:
        f = np.nextafter(f, np.float32(-np.inf))
    if not np.isfinite(f):
        return None
    up = np.nextafter(f, np.float32(np.inf))
    mid = (float(f) + float(up)) / 2          # exact in float64
    even = int(np.asarray(f).view(np.uint32)) % 2 == 0
    return mid if even else float(np.nextafter(mid, -np.inf))   # ties to even


def _grid_neighbours(b):
    """(g1, g2): consecutive 15-digit decimals with float(g1) <= b < float(g2)."""
    ctx = Context(prec=_DIGITS, rounding=ROUND_FLOOR)
    g1 = ctx.plus(Decimal(b))
    step = Decimal((0, (1,), g1.adjusted() - _DIGITS + 1))
    g2 = g1 + step
    while float(g2) <= b:
        g1, g2 = g2, g2 + Decimal((0, (1,), g2.adjusted() - _DIGITS + 1))
    return float(g1), float(g2)


def _float32_neighbours(b):
    """(f1, f2): consecutive float32 values with f1 <= b < f2 (as float64;
    -inf / inf beyond float32's range)."""
    with np.errstate(over="ignore"):  # b beyond float32's range: (max, inf)
        f = np.float32(b)
        if float(f) > b:
            f = np.nextafter(f, np.float32(-np.inf))
        return float(f), float(np.nextafter(f, np.float32(np.inf)))


def short_threshold(cond):
    """The shortest threshold ``d`` for which ``x <op> d`` in float64 selects
    what ``cond`` selects, for every 15-significant-digit ``x`` and every
    float32 ``x``, or None (a non-finite threshold, or LightGBM's zero band)."""
    b = _float64_boundary(cond)
    if b is None:
        return None
    g_lo, g_hi = _grid_neighbours(b)
    f_lo, f_hi = _float32_neighbours(b)
    lo, hi = max(g_lo, f_lo), min(g_hi, f_hi)
    strict = cond.op in ("<", ">=")
    # the threshold itself is a likely input: HistGradientBoosting splits at
    # data values, so it keeps its side. LightGBM's thresholds (its
    # conditions carry its zero band) sit just above its data values
    # (27.600000000000005 above 27.6), never on one
    t = float(cond.threshold)
    if cond.dtype == "float64" and not cond.zero_threshold > 0:
        if strict:
            hi = min(hi, t)     # "x < d" leaves t out
        else:
            lo = max(lo, t)     # "x <= d" takes t in
    for digits in range(1, 18):
        for rounding in (ROUND_FLOOR, ROUND_CEILING):
            d = float(Context(prec=digits, rounding=rounding).plus(Decimal(b)))
            # printed "x <= d" must select the 15-digit x <= lo; "x < d" too
            if (lo < d <= hi) if strict else (lo <= d < hi):
                return d
    return None


def _float32_text(cond):
    """The float32 boundary equivalent to ``cond``, in its shortest text:
    ``x <= t`` and ``x > t`` do not change when t becomes the largest
    float32 <= t, nor ``x < t`` and ``x >= t`` with the smallest float32
    >= t; that float32's shortest text reads back as the same float32."""
    thr = float(cond.threshold)
    f = np.float32(thr)
    if cond.op in ("<=", ">") and float(f) > thr:
        f = np.nextafter(f, np.float32(-np.inf))
    elif cond.op in ("<", ">=") and float(f) < thr:
        f = np.nextafter(f, np.float32(np.inf))
    text = str(f)
    try:
        ok = bool(np.isfinite(f)) and np.float32(float(text)) == f
    except ValueError:
        ok = False
    # never seen; guards against a double rounding through float64
    return text if ok else repr(float(f))


def format_threshold(cond, precision=None, *, exact=False) -> str:
    """The text of ``cond``'s threshold (see the module's docstring).

    Parameters
    ----------
    cond : Condition
    precision : int, optional
        Round to that many significant digits instead (display only; not
        exact).
    exact : bool, default=False
        For a float64 comparison, print the threshold's ``repr`` (exact for
        every float64 input) instead of the shortest 15-digit-exact decimal.
        Also set per condition by ``cond.exact_text``.

    Returns
    -------
    str
    """
    thr = float(cond.threshold)
    if precision is not None:
        return f"{thr:.{int(precision)}g}"
    if not math.isfinite(thr):
        return repr(thr)
    if cond.dtype == "float32":
        return _float32_text(cond)
    if not (exact or getattr(cond, "exact_text", False)):
        if _is_lightgbm_zero(cond):
            return "0.0"
        d = short_threshold(cond)
        if d is not None:
            return repr(d)
    return repr(thr)


def _is_lightgbm_zero(cond):
    """LightGBM's split between 0 and the positive values: its threshold is
    its zero band's edge (``kZeroThreshold``, 1.0000000180025095e-35), and as
    LightGBM reads every ``|x| <= kZeroThreshold`` as 0, ``x <= edge`` is
    ``x <= 0`` (and ``x > edge`` is ``x > 0``) for every input."""
    band = float(getattr(cond, "zero_threshold", 0.0) or 0.0)
    return band > 0 and float(cond.threshold) == band
