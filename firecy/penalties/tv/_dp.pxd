# One-dimensional fused lasso solvers, weighted (Johnson's dynamic
# programme): C-level API. Conventions (return values, workspace, aliasing,
# thread safety) as in tv/_condat.pxd.


# Weighted problem with an optional L1 term, by Johnson's dynamic programme:
#     out = argmin_x sum_i [c_i/2 (x_i - z_i)^2 + lam1 |x_i|]
#                    + lam_tv * sum_{i>0} |x_i - x_{i-1}|
# c_i >= 0 (c_i == 0: the element has no data term); ``c`` may be NULL for
# unit weights. lam1 == 0 drops the L1 term. Linear time in the worst case.
# Where the minimiser is not unique (only possible with zero weights, or
# with c_i gamma == a_i under MCP) one is chosen deterministically: the last
# element takes the minimiser closest to 0, each earlier one the point of its
# own minimising interval closest to its right neighbour (lam_tv == 0: each
# element the minimiser closest to 0).
# Workspace: fused_lasso_dp_l1_work_size(n) = 7n + 6 doubles.
cdef Py_ssize_t fused_lasso_dp_l1_work_size(Py_ssize_t n) noexcept nogil
cdef int fused_lasso_dp_l1(const double* z, const double* c, Py_ssize_t n,
                           double lam_tv, double lam1, double* out,
                           double* work) noexcept nogil


# Weighted problem with an L1 or a per-element MCP term:
#     out = argmin_x sum_i [c_i/2 (x_i - z_i)^2 + phi_i(x_i)]
#                    + lam_tv * sum_{i>0} |x_i - x_{i-1}|
#     phi_i(x) = lam1 |x| - a_i x^2 / (2 gamma)   if |x| <= gamma lam1 / a_i
#              = gamma lam1^2 / (2 a_i)           otherwise
# (firecy's MCP: concavity gamma scaled by the per-element curvature a_i, see
# _separable.pyx). a == NULL (gamma then ignored) or a_i == 0 give
# phi_i = lam1 |x| (L1); with a != NULL gamma must be finite and > 0.
# Convexity requires c_i * gamma >= a_i for every i (checked: -1 otherwise).
# Same tie rule as fused_lasso_dp_l1. Linear time without MCP elements; with
# them, O(n log n) in the worst case (the kinks at +-gamma lam1 / a_i enter a
# small sorted array, or heaps if many stay live) and near-linear in practice.
# Workspace: fused_lasso_dp_work_size(n) = 15n + 10 + ceil(n / 4) doubles.
cdef Py_ssize_t fused_lasso_dp_work_size(Py_ssize_t n) noexcept nogil
cdef int fused_lasso_dp(const double* z, const double* c, Py_ssize_t n,
                        double lam_tv, double lam1, double gamma,
                        const double* a, double* out,
                        double* work) noexcept nogil


# fused_lasso_dp with bounds lb_i <= x_i <= ub_i on every element (lb, ub
# both NULL: none; lb_i may be -inf, ub_i +inf; -1 if some lb_i > ub_i):
# the exact minimiser of the bounded problem (still convex). Same
# workspace as fused_lasso_dp; ``a`` NULL gives the L1 term.
cdef int fused_lasso_dp_bounded(const double* z, const double* c, Py_ssize_t n,
                                double lam_tv, double lam1, double gamma,
                                const double* a, const double* lb, const double* ub,
                                double* out, double* work) noexcept nogil


# Internal: the shared core (``c`` NULL: unit weights; ``curv`` NULL: no
# MCP), with ``first_shift`` added to z_0 (Condat's hand-over).
cdef int _dp_solve(const double* z, const double* c, Py_ssize_t n,
                   double lam, double lam1, double gamma, const double* curv,
                   double first_shift, double* out, double* work) noexcept nogil
