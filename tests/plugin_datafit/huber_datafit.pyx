# cython: language_level=3, boundscheck=False, wraparound=False
"""A compiled datafit living outside firecy (a test plug-in): the Huber loss

    loss(y, eta) = r^2 / 2 if |r| <= delta else delta (|r| - delta / 2),  r = eta - y,

with curvature bound 1. It implements only the three per-sample methods of
the contract (``firecy/datafits/base.pxd``); the base class derives the rest.
"""
from libc.math cimport fabs
from firecy.datafits.base cimport Datafit


cdef class Huber(Datafit):
    cdef public double delta

    def __init__(self, double delta=1.0):
        self.delta = delta

    cdef int loss(self, const double* y, const double* eta, double* out,
                  Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        cdef double r
        for i in range(n):
            r = fabs(eta[i] - y[i])
            out[i] = 0.5 * r * r if r <= self.delta else self.delta * (r - 0.5 * self.delta)
        return 0

    cdef int gradient_hessian(self, const double* y, const double* eta, double* grad,
                              double* hess, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        cdef double r
        for i in range(n):
            r = eta[i] - y[i]
            grad[i] = r if fabs(r) <= self.delta else (self.delta if r > 0 else -self.delta)
            if hess != NULL:
                hess[i] = 1.0 if fabs(r) <= self.delta else 0.0
        return 0

    cdef int curvature_bound(self, const double* y, double* out,
                             Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        for i in range(n):
            out[i] = 1.0
        return 0
