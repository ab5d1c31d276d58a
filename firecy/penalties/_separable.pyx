"""Separable sparsity penalties: L1 and MCP.

MCP objective (used everywhere in firecy). For coordinate j with curvature
a_j = sum_i s_i M_ij^2 / sum_i s_i (the datafit's second derivative along w_j),

    MCP_j(w) = lam * |w| - a_j * w**2 / (2 * gamma)   if |w| <= gamma * lam / a_j
             = gamma * lam**2 / (2 * a_j)             otherwise,

i.e. the textbook MCP with concavity parameter gamma / a_j. Scaling the
concavity by the curvature (as papers/000 does per block with gamma / L_t)
keeps every coordinate subproblem strongly convex for any gamma > 1, and makes
gamma scale-free: gamma -> 1+ approaches hard thresholding, gamma -> inf the
lasso, whatever the leaf sizes. A coordinate with a_j = 0 gets the L1 penalty.
"""
from libc.math cimport fabs, fmax, copysign, INFINITY

from firecy.penalties._base cimport Penalty


cdef inline double soft_threshold(double z, double t) noexcept nogil:
    if z > t:
        return z - t
    if z < -t:
        return z + t
    return 0.0


cdef inline double max_abs(const double* x, Py_ssize_t n) noexcept nogil:
    cdef double m = 0.0
    cdef Py_ssize_t j
    for j in range(n):
        m = fmax(m, fabs(x[j]))
    return m


cdef double mcp_value_1d(double w, double lam, double gamma, double curv) noexcept nogil:
    cdef double aw = fabs(w)
    if curv <= 0.0:
        return lam * aw
    if aw <= gamma * lam / curv:
        return lam * aw - curv * w * w / (2.0 * gamma)
    return gamma * lam * lam / (2.0 * curv)


cdef double mcp_prox_1d(double z, double step, double lam, double gamma,
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


cdef void mcp_subdiff_1d(double w, double lam, double gamma, double curv,
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


cdef class L1(Penalty):
    """The lasso penalty ``lam * sum_j |w_j|``.

    Parameters
    ----------
    lam : float, default=1.0
        Regularisation strength (lambda_s), non-negative.
    """

    def __init__(self, double lam=1.0):
        Penalty.__init__(self, lam)
        self.is_convex = True
        self.is_separable = True

    cdef double value(self, const double* w, const double* curv,
                      Py_ssize_t n) except? -1 nogil:
        cdef double total = 0.0
        cdef Py_ssize_t j
        for j in range(n):
            total += fabs(w[j])
        return self.lam * total

    cdef int prox(self, const double* z, const double* step,
                  const double* curv, double* out, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(n):
            out[j] = soft_threshold(z[j], self.lam / step[j]) if step[j] > 0.0 else 0.0
        return 0

    cdef int subdiff(self, const double* w, const double* curv,
                     double* lo, double* hi, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(n):
            if w[j] == 0.0:
                lo[j] = -self.lam
                hi[j] = self.lam
            else:
                lo[j] = hi[j] = copysign(self.lam, w[j])
        return 0

    cdef double lambda_max(self, const double* grad, const double* curv,
                           Py_ssize_t n) except? -1 nogil:
        return max_abs(grad, n)

    cdef int local_quadratic(self, const double* w, const double* curv,
                             double* grad, double* hess, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(n):
            grad[j] = copysign(self.lam, w[j]) if w[j] != 0.0 else 0.0
            hess[j] = 0.0
        return 1

    def __reduce__(self):
        return (L1, (self.lam,))


cdef class MCP(Penalty):
    """The minimax concave penalty, concavity scaled by each coordinate's curvature.

    ``MCP_j(w) = lam |w| - a_j w^2 / (2 gamma)`` for ``|w| <= gamma lam / a_j``
    and ``gamma lam^2 / (2 a_j)`` beyond, where ``a_j`` is the datafit's
    curvature along coordinate j (see the module docstring).

    Parameters
    ----------
    lam : float, default=1.0
        Regularisation strength (lambda_s), non-negative.
    gamma : float, default=3.0
        Concavity, > 1. Close to 1 selects almost like L0, large values
        behave like the lasso.
    """

    def __init__(self, double lam=1.0, double gamma=3.0):
        Penalty.__init__(self, lam)
        if not gamma > 1.0:
            raise ValueError(f"MCP needs gamma > 1, got gamma={gamma!r}")
        self.gamma = gamma
        self.is_convex = False
        self.is_separable = True

    cdef double value(self, const double* w, const double* curv,
                      Py_ssize_t n) except? -1 nogil:
        cdef double total = 0.0
        cdef Py_ssize_t j
        for j in range(n):
            total += mcp_value_1d(w[j], self.lam, self.gamma, curv[j])
        return total

    cdef int prox(self, const double* z, const double* step,
                  const double* curv, double* out, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(n):
            out[j] = mcp_prox_1d(z[j], step[j], self.lam, self.gamma, curv[j])
        return 0

    cdef int subdiff(self, const double* w, const double* curv,
                     double* lo, double* hi, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(n):
            mcp_subdiff_1d(w[j], self.lam, self.gamma, curv[j], &lo[j], &hi[j])
        return 0

    cdef double lambda_max(self, const double* grad, const double* curv,
                           Py_ssize_t n) except? -1 nogil:
        return max_abs(grad, n)

    cdef int local_quadratic(self, const double* w, const double* curv,
                             double* grad, double* hess, Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t j
        for j in range(n):
            grad[j] = 0.0
            hess[j] = 0.0
            if w[j] == 0.0:
                continue
            if curv[j] <= 0.0:
                grad[j] = copysign(self.lam, w[j])
            elif fabs(w[j]) <= self.gamma * self.lam / curv[j]:
                grad[j] = copysign(self.lam, w[j]) - curv[j] * w[j] / self.gamma
                hess[j] = -curv[j] / self.gamma
        return 1

    def _repr_params(self):
        return f"lam={self.lam!r}, gamma={self.gamma!r}"

    def __reduce__(self):
        return (MCP, (self.lam, self.gamma))
