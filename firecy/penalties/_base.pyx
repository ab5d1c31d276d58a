"""The penalty contract (``Penalty``) and the wrapper for penalties in Python.

See ``_base.pxd`` for the contract itself (and docs/penalties.rst; what
the shipped penalties compute is in docs/objective.rst). The ``*_of``
methods are thin Python wrappers around the cdef methods, for tests and
interactive use.
"""
from libc.math cimport fabs, fmax, sqrt
from libc.stdlib cimport free, malloc

import numpy as np

cimport numpy as cnp

cnp.import_array()


cdef inline double direction_sq(const double* lo, const double* hi,
                                const double* grad, Py_ssize_t n) noexcept nogil:
    """Squared norm of d_j = dist(-grad_j, [lo_j, hi_j])."""
    cdef double total = 0.0, d
    cdef Py_ssize_t j
    for j in range(n):
        d = fmax(0.0, fmax(lo[j] + grad[j], -grad[j] - hi[j]))
        total += d * d
    return total


cdef double prox_decrease(Penalty penalty, const double* w, const double* grad,
                          const double* step, const double* curv,
                          double* work, Py_ssize_t n) except? -1 nogil:
    cdef double* z = work
    cdef double* x = work + n
    cdef double model = 0.0, delta
    cdef Py_ssize_t j
    for j in range(n):
        z[j] = w[j] - grad[j] / step[j] if step[j] > 0.0 else w[j]
    penalty.prox(z, step, curv, x, n)
    for j in range(n):
        delta = x[j] - w[j]
        model += grad[j] * delta + 0.5 * step[j] * delta * delta
    model += penalty.value(x, curv, n) - penalty.value(w, curv, n)
    return -model


cdef class Penalty:
    """Base class of every penalty: the contract the solver talks to.

    Subclass it in Cython (``cimport firecy.penalties._base``) and implement
    ``value``, ``prox``, ``subdiff`` and ``lambda_max`` as ``nogil`` methods;
    or write the same methods in Python and wrap the object with
    :class:`PythonPenalty` (``firecy.penalties.as_penalty`` does it).

    Parameters
    ----------
    lam : float
        The path parameter of the penalty (the sparsity strength λ_s for L1 and MCP).
    """

    def __init__(self, double lam=1.0):
        if not lam >= 0.0:
            raise ValueError(f"lam must be a non-negative number, got {lam!r}")
        self.lam = lam
        self.is_convex = True
        self.is_separable = False
        self.score_is_decrease = False

    cdef double value(self, const double* w, const double* curv,
                      Py_ssize_t n) except? -1 nogil:
        with gil:
            raise NotImplementedError(f"{type(self).__name__} does not implement value")

    cdef int prox(self, const double* z, const double* step,
                  const double* curv, double* out, Py_ssize_t n) except -1 nogil:
        with gil:
            raise NotImplementedError(f"{type(self).__name__} does not implement prox")

    cdef int subdiff(self, const double* w, const double* curv,
                     double* lo, double* hi, Py_ssize_t n) except -1 nogil:
        with gil:
            raise NotImplementedError(f"{type(self).__name__} does not implement subdiff")

    cdef double lambda_max(self, const double* grad, const double* curv,
                           Py_ssize_t n) except? -1 nogil:
        with gil:
            raise NotImplementedError(
                f"{type(self).__name__} does not implement lambda_max")

    cdef double block_score(self, const double* w, const double* grad,
                            const double* step, const double* curv,
                            double* work, Py_ssize_t n) except? -1 nogil:
        self.subdiff(w, curv, work, work + n, n)
        return direction_sq(work, work + n, grad, n)

    cdef int local_quadratic(self, const double* w, const double* curv,
                             double* grad, double* hess, Py_ssize_t n) except -1 nogil:
        return 0

    cdef Py_ssize_t local_groups(self, const double* w, const double* curv,
                                 Py_ssize_t* group, double* grad, double* hess,
                                 Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t j, n_groups = 0
        if not self.local_quadratic(w, curv, grad, hess, n):
            return -2
        for j in range(n):   # compact in place: n_groups <= j
            if w[j] != 0.0:
                grad[n_groups] = grad[j]
                hess[n_groups] = hess[j]
                group[j] = n_groups
                n_groups += 1
            else:
                group[j] = -1
        return n_groups

    # ------------------------------------------------------------------
    # Python wrappers: each takes and returns float64 NumPy arrays.

    def value_of(self, w, curvature=None):
        """Penalty value of the block ``w``."""
        cdef const double[::1] w_, c_
        w_, c_ = _block_arrays(w, curvature)
        return self.value(&w_[0], &c_[0], w_.shape[0]) if w_.shape[0] else 0.0

    def prox_of(self, z, step=1.0, curvature=None):
        """``argmin_x sum_j step_j / 2 (x_j - z_j)^2 + penalty(x)``."""
        cdef const double[::1] z_, c_, s_
        z_, c_ = _block_arrays(z, curvature)
        s_ = _broadcast(step, z_.shape[0], "step")
        out = np.zeros(z_.shape[0])
        cdef double[::1] out_ = out
        if z_.shape[0]:
            self.prox(&z_[0], &s_[0], &c_[0], &out_[0], z_.shape[0])
        return out

    def subdiff_of(self, w, curvature=None):
        """The subdifferential intervals ``(lo, hi)`` at ``w``."""
        cdef const double[::1] w_, c_
        w_, c_ = _block_arrays(w, curvature)
        lo = np.zeros(w_.shape[0])
        hi = np.zeros(w_.shape[0])
        cdef double[::1] lo_ = lo, hi_ = hi
        if w_.shape[0]:
            self.subdiff(&w_[0], &c_[0], &lo_[0], &hi_[0], w_.shape[0])
        return lo, hi

    def direction_of(self, w, grad, curvature=None):
        """The direction vector ``d_j = dist(-grad_j, subdiff_j)``."""
        lo, hi = self.subdiff_of(w, curvature)
        grad = np.asarray(grad, dtype=np.float64)
        return np.maximum(0.0, np.maximum(lo + grad, -grad - hi))

    def lambda_max_of(self, grad, curvature=None):
        """Smallest ``lam`` for which 0 is stationary given the gradient at 0."""
        cdef const double[::1] g_, c_
        g_, c_ = _block_arrays(grad, curvature)
        return self.lambda_max(&g_[0], &c_[0], g_.shape[0]) if g_.shape[0] else 0.0

    def local_quadratic_of(self, w, curvature=None):
        """``(grad, hess)`` of the local quadratic model at ``w``, or None."""
        cdef const double[::1] w_, c_
        w_, c_ = _block_arrays(w, curvature)
        grad = np.zeros(w_.shape[0])
        hess = np.zeros(w_.shape[0])
        cdef double[::1] g_ = grad, h_ = hess
        if w_.shape[0] == 0:
            return grad, hess
        if not self.local_quadratic(&w_[0], &c_[0], &g_[0], &h_[0], w_.shape[0]):
            return None
        return grad, hess

    def local_groups_of(self, w, curvature=None):
        """``(group, grad, hess)`` of the grouped local model, or None."""
        cdef const double[::1] w_, c_
        w_, c_ = _block_arrays(w, curvature)
        cdef Py_ssize_t n = w_.shape[0], n_groups
        group = np.full(n, -1, dtype=np.intp)
        grad = np.zeros(n)
        hess = np.zeros(n)
        cdef Py_ssize_t[::1] gr_ = group
        cdef double[::1] g_ = grad, h_ = hess
        if n == 0:
            return group, grad, hess
        n_groups = self.local_groups(&w_[0], &c_[0], &gr_[0], &g_[0], &h_[0], n)
        if n_groups == -2:
            return None
        return group, grad[:n_groups], hess[:n_groups]

    def block_score_of(self, w, grad, step=1.0, curvature=None):
        """Greedy selection score of the block."""
        cdef const double[::1] w_, c_, g_, s_
        w_, c_ = _block_arrays(w, curvature)
        g_ = _broadcast(grad, w_.shape[0], "grad")
        s_ = _broadcast(step, w_.shape[0], "step")
        work = np.zeros(3 * w_.shape[0] + 1)
        cdef double[::1] work_ = work
        if w_.shape[0] == 0:
            return 0.0
        return self.block_score(&w_[0], &g_[0], &s_[0], &c_[0], &work_[0], w_.shape[0])

    def __repr__(self):
        return f"{type(self).__name__}({self._repr_params()})"

    def _repr_params(self):
        return f"lam={self.lam!r}"


def _broadcast(values, Py_ssize_t n, name):
    arr = np.ascontiguousarray(np.broadcast_to(np.asarray(values, dtype=np.float64), (n,)))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a scalar or a 1-D array of length {n}")
    return arr


def _block_arrays(w, curvature):
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.ndim != 1:
        raise ValueError(f"a block must be a 1-D array, got shape {w.shape}")
    curv = _broadcast(1.0 if curvature is None else curvature, w.shape[0], "curvature")
    return w, curv


cdef inline object _view(const double* ptr, Py_ssize_t n):
    """A read-only NumPy copy of a C array (copies: the callee may keep it)."""
    out = np.empty(n)
    cdef double[::1] out_ = out
    cdef Py_ssize_t j
    for j in range(n):
        out_[j] = ptr[j]
    return out


cdef inline int _copy_out(object values, double* out, Py_ssize_t n, str what) except -1:
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape != (n,):
        raise ValueError(f"{what} returned shape {arr.shape}, expected ({n},)")
    cdef double[::1] arr_ = np.ascontiguousarray(arr)
    cdef Py_ssize_t j
    for j in range(n):
        out[j] = arr_[j]
    return 0


cdef int _copy_pair(object res, double* first, double* second, Py_ssize_t n,
                    str what, str name_a, str name_b) except -1:
    """Copy a Python penalty's pair of arrays ``(name_a, name_b)`` out."""
    try:
        a, b = res
    except (TypeError, ValueError):
        raise ValueError(f"{what} must return a pair ({name_a}, {name_b})")
    _copy_out(a, first, n, f"{what} {name_a}")
    _copy_out(b, second, n, f"{what} {name_b}")
    return 0


cdef class PythonPenalty(Penalty):
    """Wrap a penalty written in Python so the nogil engine can call it.

    The wrapped object implements, on 1-D float64 arrays of one block:
    ``value(w, curvature) -> float``, ``prox(z, step, curvature) -> array``,
    ``subdiff(w, curvature) -> (lo, hi)``, ``lambda_max(grad, curvature) ->
    float``; optionally ``block_score(w, grad, step, curvature) -> float``
    and ``local_quadratic(w, curvature) -> (grad, hess) or None`` (enables the
    engine's Newton steps; see ``Penalty.local_quadratic``).
    It has an attribute ``lam`` (set by the path before each solve) and
    optionally the flags ``is_convex`` (default True), ``is_separable``
    (default False) and ``score_is_decrease`` (default False; True when its
    ``block_score`` returns an achievable decrease of the objective). Each engine call takes the GIL once for the whole block;
    an exception raised by the object propagates out of the solver.
    """

    def __init__(self, obj):
        missing = [m for m in ("value", "prox", "subdiff", "lambda_max")
                   if not callable(getattr(obj, m, None))]
        if missing:
            raise TypeError(
                f"{type(obj).__name__} cannot be used as a penalty: it has no "
                f"method(s) {', '.join(missing)}")
        lam = getattr(obj, "lam", None)
        if lam is None:
            raise TypeError(f"{type(obj).__name__} must have a numeric attribute 'lam'")
        Penalty.__init__(self, float(lam))
        self.obj = obj
        self.is_convex = bool(getattr(obj, "is_convex", True))
        self.is_separable = bool(getattr(obj, "is_separable", False))
        self.score_is_decrease = bool(getattr(obj, "score_is_decrease", False))

    cdef double value(self, const double* w, const double* curv,
                      Py_ssize_t n) except? -1 nogil:
        with gil:
            self.obj.lam = self.lam
            return float(self.obj.value(_view(w, n), _view(curv, n)))

    cdef int prox(self, const double* z, const double* step,
                  const double* curv, double* out, Py_ssize_t n) except -1 nogil:
        with gil:
            self.obj.lam = self.lam
            res = self.obj.prox(_view(z, n), _view(step, n), _view(curv, n))
            _copy_out(res, out, n, f"{type(self.obj).__name__}.prox")
        return 0

    cdef int subdiff(self, const double* w, const double* curv,
                     double* lo, double* hi, Py_ssize_t n) except -1 nogil:
        with gil:
            self.obj.lam = self.lam
            res = self.obj.subdiff(_view(w, n), _view(curv, n))
            _copy_pair(res, lo, hi, n, f"{type(self.obj).__name__}.subdiff", "lo", "hi")
        return 0

    cdef double lambda_max(self, const double* grad, const double* curv,
                           Py_ssize_t n) except? -1 nogil:
        with gil:
            self.obj.lam = self.lam
            return float(self.obj.lambda_max(_view(grad, n), _view(curv, n)))

    cdef double block_score(self, const double* w, const double* grad,
                            const double* step, const double* curv,
                            double* work, Py_ssize_t n) except? -1 nogil:
        cdef bint has_score
        with gil:
            has_score = callable(getattr(self.obj, "block_score", None))
            if has_score:
                self.obj.lam = self.lam
                return float(self.obj.block_score(
                    _view(w, n), _view(grad, n), _view(step, n), _view(curv, n)))
        return Penalty.block_score(self, w, grad, step, curv, work, n)

    cdef int local_quadratic(self, const double* w, const double* curv,
                             double* grad, double* hess, Py_ssize_t n) except -1 nogil:
        with gil:
            method = getattr(self.obj, "local_quadratic", None)
            if not callable(method):
                return 0
            self.obj.lam = self.lam
            res = method(_view(w, n), _view(curv, n))
            if res is None:
                return 0
            _copy_pair(res, grad, hess, n, f"{type(self.obj).__name__}.local_quadratic",
                       "grad", "hess")
        return 1

    def _repr_params(self):
        return repr(self.obj)

    def __reduce__(self):
        return (PythonPenalty, (self.obj,))
