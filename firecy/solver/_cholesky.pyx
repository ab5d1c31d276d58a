"""An updatable Cholesky factor for the active-set Newton solver.

``Q = L L^T`` is the datafit's Hessian on the current support, in scaled
coordinates (unit diagonal), so that the rank test below is scale free. The
support changes by a few columns at a time, so the factor is updated rather
than recomputed (O(k^2) per change instead of O(k^3)):

* ``append``: a batch of b columns (their Gram entries with the factor's
  columns, BS, and among themselves, BE). ``Y = L^{-1} BS`` is one triangular
  solve with b right-hand sides (level-3 BLAS), the Schur complement
  ``C = BE - Y^T Y`` one symmetric rank-k update; C is then factored column
  by column, and a column whose squared distance to the span of the factor's
  columns (its pivot) falls below ``dep_tol`` is *rejected*: forests are full
  of exact linear dependencies (a tree's leaves sum to the intercept's
  column; two trees with the same first split share a region), and a
  near-zero pivot would turn into a Newton step of 1e12. The caller moves
  along such a null direction instead (an active-set pivot).
* ``delete``: removing row and column p of Q is removing row p of L, which
  leaves one nonzero above the diagonal in each later column; Givens
  rotations of adjacent columns restore the triangle (O((k - p) k)).

L is stored column-major with leading dimension ``cap`` (the BLAS layout).
"""
from libc.math cimport sqrt, fabs
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memmove

import numpy as np

from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer

from scipy.linalg import cython_blas as _cython_blas

# SciPy's BLAS, the functions ``from scipy.linalg.cython_blas cimport ...``
# would bind, read from the same capsules (scipy.linalg.cython_blas's
# __pyx_capi__) when the module loads. Declared here, the build needs no
# SciPy (a cimport needs its .pxd): SciPy stays a run-time dependency only,
# and pip's isolated build environment does not install it.
ctypedef void (*drot_t)(int *n, double *dx, int *incx, double *dy, int *incy,
                        double *c, double *s) noexcept nogil
ctypedef void (*drotg_t)(double *da, double *db, double *c, double *s) noexcept nogil
ctypedef void (*dsyrk_t)(char *uplo, char *trans, int *n, int *k, double *alpha,
                         double *a, int *lda, double *beta, double *c,
                         int *ldc) noexcept nogil
ctypedef void (*dtrsm_t)(char *side, char *uplo, char *transa, char *diag, int *m,
                         int *n, double *alpha, double *a, int *lda, double *b,
                         int *ldb) noexcept nogil
ctypedef void (*dtrsv_t)(char *uplo, char *trans, char *diag, int *n, double *a,
                         int *lda, double *x, int *incx) noexcept nogil


cdef void* _blas(str name) except NULL:
    capsule = _cython_blas.__pyx_capi__[name]
    return PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule))


cdef drot_t drot = <drot_t>_blas("drot")
cdef drotg_t drotg = <drotg_t>_blas("drotg")
cdef dsyrk_t dsyrk = <dsyrk_t>_blas("dsyrk")
cdef dtrsm_t dtrsm = <dtrsm_t>_blas("dtrsm")
cdef dtrsv_t dtrsv = <dtrsv_t>_blas("dtrsv")


cdef class SupportCholesky:
    """``Q = L L^T`` for a symmetric positive definite Q that gains and loses
    columns (see the module docstring).

    Parameters
    ----------
    max_cap : int
        The largest order the factor may reach.
    dep_tol : float, default=1e-9
        Relative pivot below which an appended column counts as dependent.
    """

    def __cinit__(self, Py_ssize_t max_cap, double dep_tol=1e-9):
        self.L = NULL
        self.k = 0
        self.cap = 0
        self.max_cap = max_cap
        self.dep_tol = dep_tol

    def __dealloc__(self):
        free(self.L)

    cdef int reserve(self, Py_ssize_t need) except -1 nogil:
        """Grow the storage to order ``need`` at least (keeps the factor)."""
        cdef Py_ssize_t new_cap, j
        cdef double* fresh
        if need <= self.cap:
            return 0
        if need > self.max_cap:
            with gil:
                raise MemoryError(f"Cholesky factor of order {need} exceeds {self.max_cap}")
        new_cap = max(need, min(self.max_cap, self.cap + self.cap // 2 + 64))
        fresh = <double*> malloc(new_cap * new_cap * sizeof(double))
        if fresh == NULL:
            with gil:
                raise MemoryError()
        for j in range(self.k):
            memcpy(fresh + j * new_cap, self.L + j * self.cap, self.k * sizeof(double))
        free(self.L)
        self.L = fresh
        self.cap = new_cap
        return 0

    cdef void clear(self) noexcept nogil:
        self.k = 0

    cdef void forward(self, double* b) noexcept nogil:
        """b <- L^{-1} b."""
        cdef int n = <int> self.k, lda = <int> self.cap, one = 1
        if n > 0:
            dtrsv(b"L", b"N", b"N", &n, self.L, &lda, b, &one)

    cdef void backward(self, double* y) noexcept nogil:
        """y <- L^{-T} y."""
        cdef int n = <int> self.k, lda = <int> self.cap, one = 1
        if n > 0:
            dtrsv(b"L", b"T", b"N", &n, self.L, &lda, y, &one)

    cdef void solve(self, double* b) noexcept nogil:
        """b <- Q^{-1} b."""
        self.forward(b)
        self.backward(b)

    cdef void unit_solve(self, Py_ssize_t p, double* out) noexcept nogil:
        """out <- Q^{-1} e_p (the forward solve starts at row p)."""
        cdef Py_ssize_t i, k = self.k, cap = self.cap
        cdef int m = <int> (k - p - 1), lda = <int> cap, one = 1
        cdef double yp = 1.0 / self.L[p + p * cap]
        for i in range(p):
            out[i] = 0.0
        out[p] = yp
        for i in range(p + 1, k):
            out[i] = -self.L[i + p * cap] * yp
        if m > 0:
            dtrsv(b"L", b"N", b"N", &m, self.L + (p + 1) + (p + 1) * cap, &lda,
                  out + p + 1, &one)
        self.backward(out)

    cdef Py_ssize_t append(self, double* BS, Py_ssize_t ldb, double* BE, Py_ssize_t b,
                           char* accepted, double* work) except -1 nogil:
        """Append the independent ones among b new columns, in order.

        BS (k x b, column-major, leading dimension ldb): Q between the
        factor's columns and the new ones; overwritten with L^{-1} BS. BE
        (b x b, column-major): Q among the new columns; its lower triangle is
        overwritten. accepted[q] is set to 1 or 0. work holds b * b + 2 * b
        doubles. Returns the number of columns appended.
        """
        cdef Py_ssize_t k = self.k, q, r, s, c, m = 0, a
        cdef int ik = <int> k, ib = <int> b, ildb = <int> ldb, lda = <int> self.cap
        cdef double one = 1.0, minus_one = -1.0, val, piv
        cdef double* lf = work               # lf[q * b + r]: row q of C's factor
        cdef double* norm = work + b * b     # diagonal of BE before the update
        cdef double* acc = work + b * b + b  # accepted candidates, in order
        if b == 0:
            return 0
        for q in range(b):
            norm[q] = BE[q + q * b]
        if k > 0:
            dtrsm(b"L", b"L", b"N", b"N", &ik, &ib, &one, self.L, &lda, BS, &ildb)
            dsyrk(b"L", b"T", &ib, &ik, &minus_one, BS, &ildb, &one, BE, &ib)
        # left-looking Cholesky of the Schur complement, skipping columns
        # whose pivot says they lie in the span of the others
        for q in range(b):
            for r in range(m):
                a = <Py_ssize_t> acc[r]
                val = BE[q + a * b]
                for s in range(r):
                    val -= lf[q * b + s] * lf[a * b + s]
                lf[q * b + r] = val / lf[a * b + r]
            piv = BE[q + q * b]
            for r in range(m):
                piv -= lf[q * b + r] * lf[q * b + r]
            if norm[q] > 0.0 and piv > self.dep_tol * norm[q]:
                lf[q * b + m] = sqrt(piv)
                acc[m] = q
                m += 1
                accepted[q] = 1
            else:
                accepted[q] = 0
        if m == 0:
            return 0
        self.reserve(k + m)
        for r in range(m):
            q = <Py_ssize_t> acc[r]
            for c in range(k):
                self.L[(k + r) + c * self.cap] = BS[c + q * ldb]
            for s in range(r + 1):
                self.L[(k + r) + (k + s) * self.cap] = lf[q * b + s]
        self.k = k + m
        return m

    cdef void delete(self, Py_ssize_t p) noexcept nogil:
        """Remove row and column p of Q from the factor."""
        cdef Py_ssize_t k = self.k, cap = self.cap, j, start, r
        cdef double* L = self.L
        cdef double ca, sa, a, bb
        cdef int len_, one = 1
        # drop row p: later rows move up one place in every column
        for j in range(k):
            start = p + 1 if j <= p else j
            if start < k:
                memmove(L + (start - 1) + j * cap, L + start + j * cap,
                        (k - start) * sizeof(double))
        # column r + 1 now has one entry above the diagonal, in row r:
        # rotate columns r and r + 1 to zero it
        for r in range(p, k - 1):
            a = L[r + r * cap]
            bb = L[r + (r + 1) * cap]
            if bb != 0.0:
                drotg(&a, &bb, &ca, &sa)
                len_ = <int> (k - 1 - r)
                drot(&len_, L + r + r * cap, &one, L + r + (r + 1) * cap, &one, &ca, &sa)
            if L[r + r * cap] < 0.0:
                for j in range(r, k - 1):
                    L[j + r * cap] = -L[j + r * cap]
        self.k = k - 1

    # -- Python access, for tests ------------------------------------------

    def factor(self):
        """L as a dense (k, k) array."""
        out = np.zeros((self.k, self.k))
        cdef Py_ssize_t i, j
        for j in range(self.k):
            for i in range(j, self.k):
                out[i, j] = self.L[i + j * self.cap]
        return out

    def append_columns(self, BS, BE):
        """Append columns given their Gram entries; returns the accepted mask."""
        cdef Py_ssize_t b = BE.shape[0]
        bs = np.asfortranarray(np.array(BS, dtype=np.float64).reshape(self.k, b))
        be = np.asfortranarray(np.array(BE, dtype=np.float64))
        acc = np.zeros(b, dtype=np.int8)
        work = np.zeros(b * b + 2 * b + 1)
        cdef double[::1, :] bs_ = bs
        cdef double[::1, :] be_ = be
        cdef signed char[::1] acc_ = acc
        cdef double[::1] work_ = work
        if b == 0:
            return acc.astype(bool)
        self.append(&bs_[0, 0] if self.k > 0 else &work_[0], max(self.k, 1), &be_[0, 0], b,
                     <char*> &acc_[0], &work_[0])
        return acc.astype(bool)

    def delete_column(self, Py_ssize_t p):
        if not 0 <= p < self.k:
            raise IndexError(p)
        self.delete(p)

    def solve_vector(self, b):
        out = np.array(b, dtype=np.float64)
        cdef double[::1] o = out
        self.solve(&o[0])
        return out

    def unit_solve_vector(self, Py_ssize_t p):
        out = np.zeros(self.k)
        cdef double[::1] o = out
        self.unit_solve(p, &o[0])
        return out
