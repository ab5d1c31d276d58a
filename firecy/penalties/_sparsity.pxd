# The sparsity term coordinate by coordinate: header-only inline functions,
# so that every penalty that uses them (L1, MCP, the fusion penalties)
# compiles them into its own loops.
#
# ``curv`` is the coordinate's curvature a_j. MCP_j(w) = lam |w| -
# curv w^2 / (2 gamma) for |w| <= gamma lam / curv, gamma lam^2 / (2 curv)
# beyond (docs/objective.rst); with curv <= 0 it is lam |w|, so L1 is MCP at
# curv = 0 (gamma unused).
from libc.math cimport copysign, fabs, fmax


cdef inline double soft_threshold(double z, double t) noexcept nogil:
    if z > t:
        return z - t
    if z < -t:
        return z + t
    return 0.0


cdef inline double mcp_value_1d(double w, double lam, double gamma, double curv) noexcept nogil:
    cdef double aw = fabs(w)
    if curv <= 0.0:
        return lam * aw
    if aw <= gamma * lam / curv:
        return lam * aw - curv * w * w / (2.0 * gamma)
    return gamma * lam * lam / (2.0 * curv)


cdef inline double mcp_prox_1d(double z, double step, double lam, double gamma,
                               double curv) noexcept nogil:
    """argmin_x step/2 (x - z)^2 + MCP(x) (global minimiser)."""
    cdef double kappa, knot, x, best, f0, f1
    if step <= 0.0:
        return 0.0
    if curv <= 0.0:
        return soft_threshold(z, lam / step)
    knot = gamma * lam / curv          # where the penalty flattens
    kappa = gamma * step / curv        # > 1: the subproblem is convex
    if kappa > 1.0:
        if fabs(z) > knot:
            return z
        return kappa / (kappa - 1.0) * soft_threshold(z, lam / step)
    # nonconvex subproblem (step < curv / gamma; the engine never asks for
    # it): the minimum is at 0, at z beyond the knot, or at the knot
    best = 0.0
    f0 = 0.5 * step * z * z
    x = copysign(fmax(fabs(z), knot), z)
    f1 = 0.5 * step * (x - z) * (x - z) + mcp_value_1d(x, lam, gamma, curv)
    if f1 < f0:
        best = x
    return best


cdef inline void mcp_subdiff_1d(double w, double lam, double gamma, double curv,
                                double* lo, double* hi) noexcept nogil:
    cdef double aw = fabs(w)
    if w == 0.0:
        lo[0] = -lam
        hi[0] = lam
    elif curv <= 0.0:
        lo[0] = hi[0] = copysign(lam, w)
    elif aw <= gamma * lam / curv:
        lo[0] = hi[0] = copysign(lam, w) - curv * w / gamma
    else:
        lo[0] = hi[0] = 0.0


cdef inline void mcp_quadratic_1d(double w, double lam, double gamma, double curv,
                                  double* grad, double* hess) noexcept nogil:
    """First and second derivative of MCP_j at w != 0 (exact while |w| stays
    on the same side of 0 and of the knot gamma lam / curv)."""
    grad[0] = 0.0
    hess[0] = 0.0
    if curv <= 0.0:
        grad[0] = copysign(lam, w)
    elif fabs(w) <= gamma * lam / curv:
        grad[0] = copysign(lam, w) - curv * w / gamma
        hess[0] = -curv / gamma
