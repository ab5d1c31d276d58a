from firecy.penalties.base cimport Penalty


# L1 and MCP share their block loops: the sparsity term lam |w_j| (L1,
# _gamma == 0) or the curvature-scaled MCP with concavity _gamma (MCP,
# exposed as ``gamma``).
cdef class SeparablePenalty(Penalty):
    cdef double _gamma
    cdef const double* _scaled(self, const double* curv) noexcept nogil


cdef class L1(SeparablePenalty):
    pass


cdef class MCP(SeparablePenalty):
    pass
