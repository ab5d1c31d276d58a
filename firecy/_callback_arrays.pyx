"""C arrays to NumPy and back, for the wrappers that call Python plug-ins."""
import numpy as np

from libc.string cimport memcpy


cdef object numpy_copy(const double* ptr, Py_ssize_t n):
    """A NumPy copy of a C array (a copy: the Python callee may keep it)."""
    out = np.empty(n)
    cdef double[::1] out_ = out
    if n > 0:
        memcpy(&out_[0], ptr, n * sizeof(double))
    return out


cdef int copy_into(object arr, double* out, Py_ssize_t n) except -1:
    """Copy the first ``n`` values of a float64 array the caller has checked."""
    cdef const double[::1] a = arr
    if a.shape[0] < n:
        raise ValueError(f"expected {n} values, got {a.shape[0]}")
    if n > 0:
        memcpy(out, &a[0], n * sizeof(double))
    return 0
