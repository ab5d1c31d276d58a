# A Cholesky factor Q = L L^T of a growing and shrinking symmetric positive
# definite matrix (the scaled Hessian of the datafit on the support), with
# columns appended in batches (level-3 BLAS) and deleted one at a time
# (Givens rotations). See _cholesky.pyx.

cdef class SupportCholesky:
    cdef double* L              # column-major, leading dimension cap, lower triangle
    cdef readonly Py_ssize_t k  # order of the factor
    cdef readonly Py_ssize_t cap
    cdef Py_ssize_t max_cap
    # a column is accepted only if its squared distance to the span of the
    # factor's columns is at least dep_tol times its squared norm
    cdef public double dep_tol

    cdef int reserve(self, Py_ssize_t need) except -1 nogil
    cdef void forward(self, double* b) noexcept nogil
    cdef void backward(self, double* y) noexcept nogil
    cdef void solve(self, double* b) noexcept nogil
    cdef void unit_solve(self, Py_ssize_t p, double* out) noexcept nogil
    cdef Py_ssize_t append(self, double* BS, Py_ssize_t ldb, double* BE, Py_ssize_t b,
                           char* accepted, double* work) except -1 nogil
    cdef void delete(self, Py_ssize_t p) noexcept nogil
    cdef void clear(self) noexcept nogil
