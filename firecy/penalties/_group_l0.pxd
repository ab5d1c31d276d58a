from firecy.penalties.base cimport Block, Penalty


# lam0 for every block with a nonzero weight, on top of ``inner``
cdef class GroupL0(Penalty):
    cdef public Penalty inner
    cdef public double lam0
    cdef bint any_nonzero(self, const double* w, Py_ssize_t n) noexcept nogil


# the decrease of the block's model achieved by the penalty's prox point (an
# L0-type block score; also the score BlockwisePenalty gives its other blocks)
cdef double prox_decrease(Penalty penalty, const Block* blk, const double* w,
                          const double* grad, const double* step,
                          double* work) except? -1 nogil
