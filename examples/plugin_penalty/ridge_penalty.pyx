# cython: language_level=3, boundscheck=False, wraparound=False
"""A compiled penalty living outside firecy: the ridge ``lam/2 ||w||^2``.

It subclasses firecy's contract (``firecy/penalties/_base.pxd``, installed
with the package) and runs inside the nogil engine at C speed. Build it with
the ``setup.py`` next to this file; register it with
``firecy.penalties.register_penalty("ridge", Ridge)`` or through the
``firecy.penalties`` entry-point group of your package.
"""
from libc.math cimport INFINITY
from firecy.penalties._base cimport Penalty


cdef class Ridge(Penalty):
    def __init__(self, double lam=1.0):
        Penalty.__init__(self, lam)
        self.is_convex = True
        self.is_separable = True

    cdef double value(self, const double* w, const double* curv,
                      Py_ssize_t n) except? -1 nogil:
        cdef double total = 0.0
        cdef Py_ssize_t j
        for j in range(n):
            total += w[j] * w[j]
        return 0.5 * self.lam * total

    cdef int prox(self, const double* z, const double* step,
                  const double* curv, double* out, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(n):
            out[j] = step[j] * z[j] / (step[j] + self.lam)
        return 0

    cdef int subdiff(self, const double* w, const double* curv,
                     double* lo, double* hi, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(n):
            lo[j] = hi[j] = self.lam * w[j]
        return 0

    cdef double lambda_max(self, const double* grad, const double* curv,
                           Py_ssize_t n) except? -1 nogil:
        cdef Py_ssize_t j
        for j in range(n):
            if grad[j] != 0.0:
                return INFINITY   # a ridge never makes w = 0 optimal
        return 0.0

    cdef int local_quadratic(self, const double* w, const double* curv,
                             double* grad, double* hess, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(n):
            grad[j] = self.lam * w[j]
            hess[j] = self.lam
        return 1

    def __reduce__(self):
        return (Ridge, (self.lam,))
