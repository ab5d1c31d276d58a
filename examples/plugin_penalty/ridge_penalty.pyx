# cython: language_level=3, boundscheck=False, wraparound=False
"""A compiled penalty living outside firecy: the ridge ``lam/2 ||w||^2``.

It subclasses firecy's public contract (``firecy/penalties/base.pxd``,
installed with the package) and runs inside the nogil engine at C speed.
Build it with the ``setup.py`` next to this file; register it with
``firecy.register_penalty("ridge", Ridge)`` or through the
``firecy.penalties`` entry-point group of your package (see
examples/firecy-plugin-example/ for a complete package).
"""
from libc.math cimport INFINITY
from firecy.penalties.base cimport Block, PENALTY_SEPARABLE, Penalty


cdef class Ridge(Penalty):
    def __init__(self, double lam=1.0):
        Penalty.__init__(self, lam)
        self.flags = PENALTY_SEPARABLE

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        cdef double total = 0.0
        cdef Py_ssize_t k
        for k in range(blk.n):
            total += w[k] * w[k]
        return 0.5 * self.lam * total

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef Py_ssize_t k
        for k in range(blk.n):
            out[k] = step[k] * z[k] / (step[k] + self.lam) if step[k] + self.lam > 0.0 else 0.0
        return 0

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        cdef Py_ssize_t k
        for k in range(blk.n):
            lo[k] = hi[k] = self.lam * w[k]
        return 0

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        cdef Py_ssize_t k
        for k in range(blk.n):
            if grad[k] != 0.0:
                return INFINITY   # a ridge never makes w = 0 optimal
        return 0.0

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        # exact quadratic: one group per nonzero coordinate
        cdef Py_ssize_t k, n_groups = 0
        for k in range(blk.n):
            if w[k] == 0.0:
                group[k] = -1
                continue
            group[k] = n_groups
            grad[n_groups] = self.lam * w[k]
            hess[n_groups] = self.lam
            n_groups += 1
        return n_groups

    def __reduce__(self):
        return (Ridge, (self.lam,))
