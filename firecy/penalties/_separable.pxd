from firecy.penalties._base cimport Penalty


cdef class L1(Penalty):
    pass


cdef class MCP(Penalty):
    cdef public double gamma


# scalar building blocks, shared with the fusion and group penalties
cdef double soft_threshold(double z, double t) noexcept nogil
cdef double mcp_value_1d(double w, double lam, double gamma, double curv) noexcept nogil
cdef double mcp_prox_1d(double z, double step, double lam, double gamma,
                        double curv) noexcept nogil
cdef void mcp_subdiff_1d(double w, double lam, double gamma, double curv,
                         double* lo, double* hi) noexcept nogil
