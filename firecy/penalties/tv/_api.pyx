"""The Python API of the 1-D fused lasso solvers.

:func:`fused_lasso` and :func:`fused_lasso_weighted` validate their input
and call the C solvers (``_condat``, ``_dp``) without the GIL.
"""
import numpy as np

from libc.math cimport isfinite

from firecy.penalties.tv._condat cimport fused_lasso_1d, fused_lasso_1d_work_size
from firecy.penalties.tv._dp cimport (
    fused_lasso_dp, fused_lasso_dp_l1, fused_lasso_dp_l1_work_size,
    fused_lasso_dp_work_size)

__all__ = ["fused_lasso", "fused_lasso_weighted"]


cdef Py_ssize_t _first_invalid(const double[::1] values,
                               bint nonnegative) noexcept nogil:
    """Index of the first non-finite (or, if asked, negative) value; -1 if
    none. One C pass: the wrappers' checks cost little next to the solve."""
    cdef Py_ssize_t i
    for i in range(values.shape[0]):
        if not isfinite(values[i]) or (nonnegative and values[i] < 0.0):
            return i
    return -1


cdef Py_ssize_t _first_nonconvex(object weights, const double[::1] curvature,
                                 double gamma):
    """First i with curvature_i > 0 and weights_i * gamma < curvature_i."""
    cdef const double[::1] c
    cdef Py_ssize_t i
    cdef double ci = 1.0
    if weights is not None:
        c = weights
    for i in range(curvature.shape[0]):
        if weights is not None:
            ci = c[i]
        if curvature[i] > 0.0 and not (ci * gamma >= curvature[i]):
            return i
    return -1


def _as_signal(values, name, bint nonnegative=False):
    arr = np.ascontiguousarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    bad = _first_invalid(arr, nonnegative)
    if bad >= 0:
        if not np.isfinite(arr[bad]):
            raise ValueError(f"{name} contains NaN or infinite values")
        raise ValueError(f"{name} must be non-negative, {name}[{bad}] = {arr[bad]!r}")
    return arr


def _as_level(value, name):
    value = float(value)
    if not np.isfinite(value) or value < 0.0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return value


def _as_elementwise(values, name, n):
    arr = _as_signal(values, name, nonnegative=True)
    if arr.shape[0] != n:
        raise ValueError(
            f"{name} has length {arr.shape[0]}, expected {n} (the signal's length)")
    return arr


def fused_lasso(y, lam):
    """Unweighted 1-D fused lasso (total-variation denoising).

    Solves ``argmin_x 1/2 sum_i (x_i - y_i)**2 + lam * sum_{i>0} |x_i - x_{i-1}|``
    exactly, in linear time in practice, by Condat's direct algorithm.

    Parameters
    ----------
    y : array_like of shape (n,)
        Signal; finite values.
    lam : float
        Fusion level, ``>= 0``.

    Returns
    -------
    x : ndarray of shape (n,)
        The (unique) minimiser.

    Raises
    ------
    ValueError
        If ``y`` is not 1-D or not finite, or ``lam`` is negative or not finite.

    See Also
    --------
    fused_lasso_weighted : weights, L1 and MCP terms.

    Notes
    -----
    Adding ``lam1 * ||x||_1`` to this (equal-weight) problem is solved exactly
    by soft-thresholding the result at ``lam1``; with unequal weights it is
    not (use :func:`fused_lasso_weighted`).

    Examples
    --------
    A noisy step: each level is fitted by one value, and the two values
    move towards each other by ``lam / 2`` (``lam`` spread over a segment
    of two).

    >>> import numpy as np
    >>> from firecy.penalties import fused_lasso
    >>> np.round(fused_lasso([0.0, 0.2, 3.0, 2.8], 0.5), 12)
    array([0.35, 0.35, 2.65, 2.65])

    A large enough ``lam`` fuses everything into the mean:

    >>> fused_lasso([1.0, 3.0, 0.0, 2.0], 1.0)
    array([1.5, 1.5, 1.5, 1.5])
    """
    cdef const double[::1] y_view
    cdef double[::1] out_view, work_view
    cdef double lam_c = _as_level(lam, "lam")
    cdef Py_ssize_t n
    cdef int status
    y_arr = _as_signal(y, "y")
    n = y_arr.shape[0]
    if n == 0:
        return np.empty(0)
    # (separate allocations: a view into one buffer would keep the
    # workspace alive as long as the result)
    out = np.empty(n)
    y_view = y_arr
    out_view = out
    work_view = np.empty(fused_lasso_1d_work_size(n))
    with nogil:
        status = fused_lasso_1d(&y_view[0], n, lam_c, &out_view[0], &work_view[0])
    if status != 0:  # pragma: no cover - arguments were validated above
        raise ValueError("invalid arguments")
    return out


def _prepare_weighted(z, lam_tv, weights, lam1, gamma, curvature):
    z_arr = _as_signal(z, "z")
    n = z_arr.shape[0]
    lam_tv = _as_level(lam_tv, "lam_tv")
    lam1 = _as_level(lam1, "lam1")
    c_arr = None if weights is None else _as_elementwise(weights, "weights", n)
    a_arr = None
    if gamma is None:
        if curvature is not None:
            raise ValueError("curvature is only used with gamma (MCP)")
        gamma = 0.0
    else:
        gamma = float(gamma)
        if not np.isfinite(gamma) or gamma <= 0.0:
            raise ValueError(f"gamma must be a finite number > 0, got {gamma!r}")
        if curvature is None:
            a_arr = np.ones(n) if c_arr is None else c_arr
        else:
            a_arr = _as_elementwise(curvature, "curvature", n)
        i = _first_nonconvex(c_arr, a_arr, gamma)
        if i >= 0:
            c_eff = np.ones(n) if c_arr is None else c_arr
            raise ValueError(
                "MCP term makes the problem non-convex: need "
                f"weights * gamma >= curvature, element {i} has weight "
                f"{c_eff[i]!r}, curvature {a_arr[i]!r}, gamma {gamma!r}")
    return z_arr, lam_tv, c_arr, lam1, gamma, a_arr


def fused_lasso_weighted(z, lam_tv, weights=None, lam1=0.0, gamma=None,
                         curvature=None):
    """Weighted 1-D fused lasso with an optional L1 or MCP term.

    Solves::

        argmin_x  sum_i [ c_i/2 (x_i - z_i)**2 + phi_i(x_i) ]
                  + lam_tv * sum_{i>0} |x_i - x_{i-1}|

    with ``c = weights`` and ``phi_i(x) = lam1 |x|`` (L1, ``gamma=None``) or
    firecy's MCP with per-element concavity ``gamma / a_i``::

        phi_i(x) = lam1 |x| - a_i x**2 / (2 gamma)   if |x| <= gamma lam1 / a_i
                 = gamma lam1**2 / (2 a_i)           otherwise

    by Johnson's dynamic programme (linear time; ``O(n log n)`` worst case
    with MCP).

    Parameters
    ----------
    z : array_like of shape (n,)
        Centres of the data terms; finite.
    lam_tv : float
        Fusion level, ``>= 0``.
    weights : array_like of shape (n,), optional
        ``c_i >= 0``; default all ones. A zero weight leaves the element with
        no data term (its value is then set by its neighbours and ``phi_i``).
    lam1 : float, default=0.0
        Sparsity level, ``>= 0``.
    gamma : float, optional
        MCP concavity (``> 0``). ``None`` (default) gives the L1 term.
    curvature : array_like of shape (n,), optional
        ``a_i >= 0`` for MCP; default ``weights`` (the curvature of the data
        term, as firecy's block updates use it). ``a_i = 0`` gives L1 for
        that element. The problem must stay convex:
        ``weights * gamma >= curvature`` elementwise.

    Returns
    -------
    x : ndarray of shape (n,)
        A minimiser. It is unique when all weights are positive; otherwise
        ties are broken deterministically (the last element takes the
        minimiser closest to 0, each earlier element the value closest to its
        right neighbour's).

    Raises
    ------
    ValueError
        On non-finite or non-1-D inputs, length mismatches, negative
        weights, curvature or levels, ``gamma <= 0``, ``curvature`` without
        ``gamma``, or a non-convex MCP term.

    See Also
    --------
    fused_lasso : the unweighted problem (faster).

    Examples
    --------
    With unit weights and no sparsity term it is :func:`fused_lasso`; an L1
    term then soft-thresholds the fused segments (exactly, since the weights
    are equal):

    >>> import numpy as np
    >>> from firecy.penalties import fused_lasso, fused_lasso_weighted
    >>> z = [0.0, 0.2, 3.0, 2.8]
    >>> bool(np.allclose(fused_lasso_weighted(z, 0.5), fused_lasso(z, 0.5)))
    True
    >>> np.round(fused_lasso_weighted(z, 0.5, lam1=0.5), 12)
    array([0.  , 0.  , 2.15, 2.15])

    An MCP term instead of L1 (``gamma``) shrinks the large segment less:

    >>> np.round(fused_lasso_weighted(z, 0.5, lam1=1.0, gamma=3.0), 12)
    array([0.   , 0.   , 2.475, 2.475])

    A zero weight leaves an element to its neighbours:

    >>> np.round(fused_lasso_weighted([1.0, 9.0, 1.0], 0.1, weights=[1.0, 0.0, 1.0]), 12)
    array([1., 1., 1.])
    """
    cdef const double[::1] z_view, c_view, a_view
    cdef double[::1] out_view, work_view
    cdef const double* c_ptr = NULL
    cdef const double* a_ptr = NULL
    cdef Py_ssize_t n
    cdef double lam_c, lam1_c, gamma_c
    cdef int status
    z_arr, lam_tv, c_arr, lam1, gamma, a_arr = _prepare_weighted(
        z, lam_tv, weights, lam1, gamma, curvature)
    n = z_arr.shape[0]
    if n == 0:
        return np.empty(0)
    lam_c = lam_tv
    lam1_c = lam1
    gamma_c = gamma
    out = np.empty(n)
    z_view = z_arr
    out_view = out
    work_view = np.empty(fused_lasso_dp_work_size(n) if a_arr is not None
                         else fused_lasso_dp_l1_work_size(n))
    if c_arr is not None:
        c_view = c_arr
        c_ptr = &c_view[0]
    if a_arr is not None:
        a_view = a_arr
        a_ptr = &a_view[0]
        with nogil:
            status = fused_lasso_dp(&z_view[0], c_ptr, n, lam_c, lam1_c, gamma_c,
                                    a_ptr, &out_view[0], &work_view[0])
    else:
        with nogil:
            status = fused_lasso_dp_l1(&z_view[0], c_ptr, n, lam_c, lam1_c,
                                       &out_view[0], &work_view[0])
    if status != 0:  # pragma: no cover - arguments were validated above
        raise ValueError("invalid arguments")
    return out
