from firecy.penalties.base cimport Penalty


# Fusion within a block plus a sparsity term: lam |w| (gamma == 0) or the
# curvature-scaled MCP (gamma > 0), none when has_sparsity is False (then
# lam scales the fusion term alone). The fusion strength is
# lam_fusion() = fusion * lam.
cdef class FusedPenalty(Penalty):
    cdef public double fusion, gamma
    cdef public bint has_sparsity
    cdef double lam_fusion(self) noexcept nogil
    cdef double _lam_sparsity(self) noexcept nogil
    cdef double _curvature(self, const double* curv, Py_ssize_t j) noexcept nogil


cdef class Fusion(FusedPenalty):
    pass


cdef class L1Fusion(FusedPenalty):
    pass


cdef class MCPFusion(FusedPenalty):
    pass
