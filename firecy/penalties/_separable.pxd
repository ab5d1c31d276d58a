from firecy.penalties._base cimport Penalty


cdef class L1(Penalty):
    pass


cdef class MCP(Penalty):
    cdef public double gamma


# Scalar building blocks of the sparsity term, shared with the fusion and
# group penalties. ``curv`` is the coordinate's curvature a_j; with
# curv <= 0 MCP is lam |w| (so L1 is MCP at curv = 0, gamma unused).
cdef double soft_threshold(double z, double t) noexcept nogil
cdef double mcp_value_1d(double w, double lam, double gamma, double curv) noexcept nogil
cdef double mcp_prox_1d(double z, double step, double lam, double gamma,
                        double curv) noexcept nogil
cdef void mcp_subdiff_1d(double w, double lam, double gamma, double curv,
                         double* lo, double* hi) noexcept nogil
cdef void mcp_quadratic_1d(double w, double lam, double gamma, double curv,
                           double* grad, double* hess) noexcept nogil
