"""Exact rescaling of a regression problem by powers of two.

The squared-loss FIRE problem is homogeneous: with ``y = 2**ky * y'`` and
leaf values ``M = 2**kv * M'``, a solution ``(w', b')`` at ``lam'`` of the
scaled problem is the solution ``w = 2**(ky - kv) w'``, ``b = 2**ky b'`` at
``lam = 2**(ky + kv) lam'`` of the original one (the MCP and L1 terms and
fusion scale like the loss, ``4**ky``, when lambda does; the group-L0
price ``lam0`` scales by ``4**ky`` itself).  Multiplying by a power of two
is exact in floating point, so solving the scaled problem, with target and
leaf values of order one, gives the original problem's answer without the
overflow (``y`` of 1e300: squares are infinite) or underflow (``y`` of 1e-30:
gradients below the solver's absolute floors) the original arithmetic hits;
and a fit is exactly invariant to multiplying ``y`` by a power of two.

Only the built-in penalties ("mcp", "l1", with group-L0) are known to be
homogeneous; with any other penalty the scale is 1 (no rescaling).
"""
import copy
import math

import numpy as np

__all__ = ["PowerOfTwoScale", "check_finite_design"]


def _exponent(values):
    """k with max |values| / 2**k in [0.5, 1) (0 for all-zero values)."""
    top = float(np.max(np.abs(values))) if np.size(values) else 0.0
    if top == 0.0 or not math.isfinite(top):
        return 0
    return math.frexp(top)[1]


class PowerOfTwoScale:
    """The exponents ``ky`` (target) and ``kv`` (leaf values) of one fit.

    Parameters
    ----------
    target, leaf_values : ndarray
    enabled : bool
        False: the identity (``ky = kv = 0``).
    """

    def __init__(self, target, leaf_values, enabled=True):
        self.ky = _exponent(target) if enabled else 0
        self.kv = _exponent(leaf_values) if enabled else 0
        # lambda scales like y * M and the loss like y**2: in the original
        # units they must stay within float64's normal range
        if abs(self.ky + self.kv) > 1000 or abs(2 * self.ky) > 1000:
            raise ValueError(
                f"y (max |y - baseline| = {float(np.max(np.abs(target))):.3g}) and the "
                f"leaf values (max {float(np.max(np.abs(leaf_values))):.3g}) are too "
                "large or too small for float64: the squared loss or the penalty level "
                "overflows; rescale y, e.g. divide it by its standard deviation"
            )

    @property
    def lam_factor(self):
        """Original lambda / scaled lambda."""
        return math.ldexp(1.0, self.ky + self.kv)

    def scale_data(self, target, leaf_values):
        """The scaled target and leaf values."""
        return np.ldexp(target, -self.ky), np.ldexp(leaf_values, -self.kv)

    def scale_grid(self, grid):
        """The grid's penalty templates with the group-L0 price scaled (copies)."""
        out = []
        for params, pen in grid:
            if self.ky and hasattr(pen, "lam0"):
                pen = copy.deepcopy(pen)
                pen.lam0 = math.ldexp(float(pen.lam0), -2 * self.ky)
            out.append((params, pen))
        return out

    def unscale_path(self, path):
        """A path's fields back in the original units (in place)."""
        path.lambdas = np.ldexp(path.lambdas, self.ky + self.kv)
        path.lambda_max = math.ldexp(float(path.lambda_max), self.ky + self.kv)
        path.coefs = np.ldexp(path.coefs, self.ky - self.kv)
        path.intercepts = np.ldexp(path.intercepts, self.ky)
        for name in ("objectives", "validation_error", "validation_error_std"):
            setattr(path, name, np.ldexp(getattr(path, name), 2 * self.ky))
        return path


def check_finite_design(target, leaf_values, block_ptr, model):
    """A clear error when the fitted ensemble's numbers are not finite.

    A model fitted on a target near the float64 limit (``y`` of 1e300: the
    trees' squared-error criteria overflow) has infinite or NaN leaf values
    or baseline; the rule weights cannot be fitted to them. ``target`` None:
    check the leaf values only.
    """
    name = type(model).__name__
    if not np.all(np.isfinite(leaf_values)):
        raise ValueError(
            f"the fitted {name} has NaN or infinite leaf values (a model fitted on a "
            "target too large for float64 arithmetic overflows): rescale y, e.g. "
            "divide it by its standard deviation"
        )
    if target is None:   # a classifier's packed target: leaf values only
        return
    if np.all(np.diff(block_ptr) == 1) and np.ptp(target) > 0:
        raise ValueError(
            f"the fitted {name} has no split (every tree is a single leaf), so there "
            "are no rules to select; scikit-learn's trees do not split a node whose "
            "variance is below 2.2e-16, so a target of scale "
            f"{float(np.ptp(target)):.3g} needs rescaling (divide y by its standard "
            "deviation)"
        )
    if not np.all(np.isfinite(target)):
        raise ValueError(
            f"y minus the baseline prediction of the fitted {name} is NaN or infinite "
            "(overflow): rescale y, e.g. divide it by its standard deviation"
        )
