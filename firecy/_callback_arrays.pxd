# C arrays to NumPy and back, for the wrappers that call plug-ins written in
# Python (penalties/_python.pyx, datafits/_python.pyx). Internal: not part of
# the installed plug-in ABI (penalties/base.pxd, datafits/base.pxd).

cdef object numpy_copy(const double* ptr, Py_ssize_t n)
cdef int copy_into(object arr, double* out, Py_ssize_t n) except -1
