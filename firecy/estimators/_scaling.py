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
import warnings

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
            if hasattr(path, name):   # a selection's path has them, a solver's not
                setattr(path, name, np.ldexp(getattr(path, name), 2 * self.ky))
        return path


# scikit-learn's splitter treats a feature whose values span at most this
# much within a node as constant (sklearn/tree/_splitter.pyx, FEATURE_THRESHOLD)
_SKLEARN_FEATURE_THRESHOLD = 1e-7


# LightGBM's kZeroThreshold: a feature value of smaller magnitude bins as zero
_LIGHTGBM_ZERO = 1e-35


def _library(model):
    """The library a model comes from: "sklearn", "lightgbm", "xgboost", ..."""
    return type(model).__module__.split(".")[0]


def _feature_ranges(X, as_float32=False):
    """Each numeric feature's range over its non-missing values (None when X
    is not a numeric array, e.g. a DataFrame with categorical columns)."""
    try:
        X = np.asarray(X, dtype=np.float32 if as_float32 else np.float64)
    except (TypeError, ValueError):
        return None
    if X.ndim != 2 or X.shape[0] == 0:
        return None
    with np.errstate(over="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # all-NaN columns
        ranges = np.nanmax(X, axis=0).astype(np.float64) - np.nanmin(X, axis=0)
    return np.nan_to_num(ranges, nan=0.0)


def _no_split_reason(target, model, X):
    """Why the fitted trees made no split, as far as the data tell."""
    library, name = _library(model), type(model).__name__
    scale = float(np.ptp(target))
    if X is not None:
        if library == "sklearn":
            ranges = _feature_ranges(X)
            if ranges is not None and np.all(ranges <= _SKLEARN_FEATURE_THRESHOLD):
                return (
                    f"every feature of X spans at most {float(np.max(ranges)):.3g}, and "
                    "scikit-learn's trees treat a feature whose values span less than "
                    f"{_SKLEARN_FEATURE_THRESHOLD:g} as constant: rescale X (e.g. "
                    "sklearn.preprocessing.StandardScaler)")
        elif library == "xgboost":
            ranges = _feature_ranges(X, as_float32=True)
            if ranges is not None and np.all(ranges == 0):
                return (
                    "XGBoost stores X in float32, where every feature of X is constant "
                    "(values beyond float32's range, about 1e-38 to 3e38, underflow or "
                    "overflow): rescale X (e.g. sklearn.preprocessing.StandardScaler)")
        elif library == "lightgbm":
            try:
                Xf = np.asarray(X, dtype=np.float64)
            except (TypeError, ValueError):
                Xf = None
            if Xf is not None:
                # LightGBM bins |x| <= 1e-35 as zero (kZeroThreshold in its meta.h)
                ranges = _feature_ranges(np.where(np.abs(Xf) <= _LIGHTGBM_ZERO, 0.0, Xf))
                if ranges is not None and np.all(ranges == 0):
                    return (
                        "LightGBM treats values of magnitude below "
                        f"{_LIGHTGBM_ZERO:g} as zero, which leaves every feature of X "
                        "constant: rescale X (e.g. sklearn.preprocessing.StandardScaler)")
        ranges = _feature_ranges(X)
        if ranges is not None and np.all(ranges == 0):
            return "every feature of X is constant: there is nothing to split on"
    if library == "sklearn":
        return (
            "scikit-learn's trees do not split a node whose variance is below 2.2e-16, "
            f"so a target of scale {scale:.3g} needs rescaling (divide y by its "
            "standard deviation)")
    lib = {"lightgbm": "LightGBM", "xgboost": "XGBoost", "catboost": "CatBoost"}.get(library, library)
    if scale > 1e150 or scale < 1e-6:
        what = ("overflow float64" if scale > 1 else
                f"fall below {lib}'s minimum split gain")
        return (
            f"{lib} computes split gains from sums of squared gradients, which {what} "
            f"for a target of scale {scale:.3g}: rescale y (divide it by its standard "
            "deviation)")
    return (
        f"X and y look usable (target scale {scale:.3g}): check the {name}'s "
        "parameters that stop splitting (minimum samples or weight per leaf, minimum "
        "gain, depth)")


def check_finite_design(target, leaf_values, block_ptr, model, X=None):
    """A clear error when the fitted ensemble's numbers are not finite.

    A model fitted on a target near the float64 limit (``y`` of 1e300: the
    trees' squared-error criteria overflow) has infinite or NaN leaf values
    or baseline; the rule weights cannot be fitted to them. ``target`` None:
    check the leaf values only. A model without a split says why, from
    ``X`` (the features the model was fitted on) and the target.
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
            f"are no rules to select; {_no_split_reason(target, model, X)}"
        )
    if not np.all(np.isfinite(target)):
        raise ValueError(
            f"y minus the baseline prediction of the fitted {name} is NaN or infinite "
            "(overflow): rescale y, e.g. divide it by its standard deviation"
        )
