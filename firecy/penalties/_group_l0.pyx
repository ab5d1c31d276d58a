"""Group-L0 over trees, on top of any inner penalty.

GroupL0(inner, lam0) adds ``lam0`` (λ_0) for every tree with a nonzero
weight (the group-L0 block rule of the FAST supplement, Liu & Mazumder,
section D): the block update keeps the inner minimiser only if it beats the
zero block by more than lam0, and blocks are scored by the decrease an
update achieves (the direction vector means nothing for L0). The term is
stated in docs/objective.rst.
"""
from libc.stdlib cimport free, malloc

from firecy.penalties._base cimport Penalty, prox_decrease


cdef class GroupL0(Penalty):
    """Group-L0 over trees on top of an inner penalty.

    ``inner(w) + lam0 * #{trees t : w_t != 0}``. The path parameter ``lam``
    is the inner penalty's (λ_s); ``lam0`` has its own path
    (:func:`firecy.solver.group_l0_path`).

    Parameters
    ----------
    inner : Penalty
        E.g. ``L1(lam)``, ``MCP(lam, gamma)``, ``MCPFusion(...)``; a
        penalty with ``lam = 0`` gives group-L0 alone.
    lam0 : float, default=1.0
        Price of every tree that keeps a rule, non-negative.
    """
    def __init__(self, Penalty inner, double lam0=1.0):
        Penalty.__init__(self, inner.lam)
        if not lam0 >= 0.0:
            raise ValueError(f"lam0 must be non-negative, got {lam0!r}")
        self.inner = inner
        self.lam0 = lam0
        self.is_convex = False
        self.is_separable = False
        self.score_is_decrease = True

    cdef bint any_nonzero(self, const double* w, Py_ssize_t n) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(n):
            if w[j] != 0.0:
                return True
        return False

    cdef double value(self, const double* w, const double* curv,
                      Py_ssize_t n) except? -1 nogil:
        self.inner.lam = self.lam
        return self.inner.value(w, curv, n) + (self.lam0 if self.any_nonzero(w, n) else 0.0)

    cdef int prox(self, const double* z, const double* step,
                  const double* curv, double* out, Py_ssize_t n) except -1 nogil:
        cdef double keep = 0.0, drop = 0.0, d
        cdef Py_ssize_t j
        cdef double* zero
        self.inner.lam = self.lam
        self.inner.prox(z, step, curv, out, n)
        if not self.any_nonzero(out, n):
            return 0
        # keep the inner minimiser only if it beats the zero block by lam0
        for j in range(n):
            d = out[j] - z[j]
            keep += 0.5 * step[j] * d * d
            drop += 0.5 * step[j] * z[j] * z[j]
        keep += self.inner.value(out, curv, n) + self.lam0
        zero = <double*> malloc(n * sizeof(double))
        if zero == NULL:
            with gil:
                raise MemoryError()
        for j in range(n):
            zero[j] = 0.0
        drop += self.inner.value(zero, curv, n)
        free(zero)
        if keep >= drop:
            for j in range(n):
                out[j] = 0.0
        return 0

    cdef int subdiff(self, const double* w, const double* curv,
                     double* lo, double* hi, Py_ssize_t n) except -1 nogil:
        self.inner.lam = self.lam
        return self.inner.subdiff(w, curv, lo, hi, n)

    cdef double lambda_max(self, const double* grad, const double* curv,
                           Py_ssize_t n) except? -1 nogil:
        self.inner.lam = self.lam
        return self.inner.lambda_max(grad, curv, n)

    cdef double block_score(self, const double* w, const double* grad,
                            const double* step, const double* curv,
                            double* work, Py_ssize_t n) except? -1 nogil:
        return prox_decrease(self, w, grad, step, curv, work, n)

    cdef int local_quadratic(self, const double* w, const double* curv,
                             double* grad, double* hess, Py_ssize_t n) except -1 nogil:
        # lam0 is constant while the block stays nonzero
        self.inner.lam = self.lam
        return self.inner.local_quadratic(w, curv, grad, hess, n)

    cdef Py_ssize_t local_groups(self, const double* w, const double* curv,
                                 Py_ssize_t* group, double* grad, double* hess,
                                 Py_ssize_t n) except -1 nogil:
        self.inner.lam = self.lam
        return self.inner.local_groups(w, curv, group, grad, hess, n)

    def lam0_max_of(self, grad, curvature):
        """The smallest lam0 at which no block leaves zero (the lam0 path's
        start): the largest decrease a block update achieves from w = 0."""
        import numpy as np
        grad = np.asarray(grad, dtype=np.float64)
        saved = self.lam0
        self.lam0 = 0.0
        try:
            return max(0.0, self.block_score_of(np.zeros_like(grad), grad, curvature, curvature))
        finally:
            self.lam0 = saved

    def _repr_params(self):
        return f"{self.inner!r}, lam0={self.lam0!r}"

    def __reduce__(self):
        inner = self.inner
        inner.lam = self.lam
        return (GroupL0, (inner, self.lam0))
