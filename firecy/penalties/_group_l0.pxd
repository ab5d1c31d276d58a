from firecy.penalties.base cimport Penalty


# lam0 for every block with a nonzero weight, on top of ``inner``
cdef class GroupL0(Penalty):
    cdef public Penalty inner
    cdef public double lam0
    cdef bint any_nonzero(self, const double* w, Py_ssize_t n) noexcept nogil
