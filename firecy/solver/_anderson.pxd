# Anderson extrapolation of a fixed-point iteration (see _anderson.pyx).

cdef enum:
    ANDERSON_K = 5      # extrapolate over the last ANDERSON_K differences

cdef Py_ssize_t anderson_weights(const double* snapshots, Py_ssize_t stride,
                                 Py_ssize_t n_snap, Py_ssize_t n,
                                 double* coef) noexcept nogil
