"""Input checks, one copy of each: every part of firecy validates through these.

Each check raises a ``TypeError`` (wrong kind of value) or ``ValueError``
(right kind, bad value) whose message names the parameter, and returns the
value in the form the caller computes with.
"""
import numbers

import numpy as np

__all__ = ["check_real", "check_int", "check_sample_weight"]


def check_real(value, name, *, low=None, low_inclusive=True, allow_none=False):
    """A finite real number (not a bool) as a float, optionally bounded below.

    Parameters
    ----------
    value : object
    name : str
        The parameter's name, for the error message.
    low : float, optional
        Lower bound.
    low_inclusive : bool, default=True
        Whether ``value == low`` is allowed.
    allow_none : bool, default=False
        Pass ``None`` through.

    Returns
    -------
    float or None
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None:
        if low_inclusive and value < low:
            raise ValueError(f"{name} must be >= {low}, got {value!r}")
        if not low_inclusive and value <= low:
            raise ValueError(f"{name} must be > {low}, got {value!r}")
    return value


def check_int(value, name, *, low, allow_none=False):
    """An integer (not a bool) ``>= low`` as an int.

    Parameters
    ----------
    value : object
    name : str
        The parameter's name, for the error message.
    low : int
        Smallest allowed value.
    allow_none : bool, default=False
        Pass ``None`` through.

    Returns
    -------
    int or None
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value!r}")
    return int(value)


def check_sample_weight(sample_weight, n_samples, *, normalize=False):
    """Sample weights as a float64 array of shape ``(n_samples,)``.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,), scalar or None
        ``None`` means equal weights; a scalar is repeated. The weights must
        be numeric, finite and non-negative, with a positive sum.
    n_samples : int
    normalize : bool, default=False
        Divide by the sum, so the weights sum to one (what the solver's
        datafit uses: see ``docs/objective.rst``).

    Returns
    -------
    ndarray of float64, shape (n_samples,), C-contiguous
        A new array: the caller may modify it.
    """
    if sample_weight is None:
        return np.full(n_samples, 1.0 / n_samples if normalize else 1.0)
    sw = np.asarray(sample_weight)
    if sw.dtype == object or not (np.issubdtype(sw.dtype, np.number) or sw.dtype == bool):
        raise TypeError(f"sample_weight must be numeric, got dtype {sw.dtype}")
    sw = np.array(sw, dtype=np.float64, order="C")
    if sw.ndim == 0:
        sw = np.full(n_samples, float(sw))
    if sw.shape != (n_samples,):
        raise ValueError(
            f"sample_weight has shape {sw.shape}, expected ({n_samples},) for "
            f"{n_samples} samples"
        )
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be non-negative")
    with np.errstate(over="ignore"):
        total = sw.sum()
    if not np.isfinite(total):
        raise ValueError(
            "sample_weight sums to more than float64 can hold: divide the weights by a "
            "constant (only their ratios matter to the objective)"
        )
    if total <= 0:
        raise ValueError("sample_weight sums to zero")
    if normalize:
        sw /= total
    return sw


def check_not_library_matrix(X):
    """A TypeError for an XGBoost ``DMatrix`` or a LightGBM ``Dataset``: they
    hold the library's binned copy of the data, which rules cannot read back."""
    kind = type(X)
    if (kind.__name__ == "DMatrix" and kind.__module__.startswith("xgboost")) or (
            kind.__name__ == "Dataset" and kind.__module__.startswith("lightgbm")):
        raise TypeError(
            f"X is a {kind.__module__.split('.')[0]} {kind.__name__}, which firecy cannot "
            "read rows back from: pass the numpy array, scipy sparse matrix or pandas "
            "DataFrame it was built from")
