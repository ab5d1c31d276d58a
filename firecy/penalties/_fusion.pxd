from firecy.penalties._base cimport Penalty


# Fusion within a block plus an L1 (gamma <= 0) or curvature-scaled MCP
# (gamma > 0) sparsity term: lam1 = l1_scale * lam, lam_f = fusion_scale * lam.
cdef class FusedPenalty(Penalty):
    cdef public double l1_scale, fusion_scale, gamma
    cdef double lam1(self) noexcept nogil
    cdef double lam_tv(self) noexcept nogil


cdef class Fusion(FusedPenalty):
    pass


cdef class L1Fusion(FusedPenalty):
    pass


cdef class MCPFusion(FusedPenalty):
    pass


# lam0 for every block with a nonzero weight, on top of ``inner``
cdef class GroupL0(Penalty):
    cdef public Penalty inner
    cdef public double lam0
    cdef bint any_nonzero(self, const double* w, Py_ssize_t n) noexcept nogil
