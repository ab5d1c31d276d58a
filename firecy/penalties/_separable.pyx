"""Separable sparsity penalties: L1 and the curvature-scaled MCP.

Both act coordinate by coordinate: for coordinate j with curvature a_j (the
datafit's second derivative along w_j, ``curv[j]``), MCP_j(w) = lam |w| -
a_j w^2 / (2 gamma) up to |w| = gamma lam / a_j and constant beyond; L1 is
lam |w|, which is MCP_j with a_j = 0.  So the two share one implementation:
the per-coordinate functions below (also used by the fusion penalties), with
``curv`` NULL for L1.  The penalties, the curvature scaling and why it makes
gamma scale-free are stated in docs/objective.rst.
"""
from libc.math cimport fabs, fmax, copysign

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


cdef void mcp_quadratic_1d(double w, double lam, double gamma, double curv,
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


# ---------------------------------------------------------------------------
# block loops shared by L1 (curv NULL) and MCP
# ---------------------------------------------------------------------------
cdef inline double _curvature(const double* curv, Py_ssize_t j) noexcept nogil:
    return curv[j] if curv != NULL else 0.0


cdef double separable_value(double lam, double gamma, const double* w,
                            const double* curv, Py_ssize_t n) noexcept nogil:
    cdef double total = 0.0
    cdef Py_ssize_t j
    if curv == NULL:
        for j in range(n):
            total += fabs(w[j])
        return lam * total
    for j in range(n):
        total += mcp_value_1d(w[j], lam, gamma, curv[j])
    return total


cdef void separable_prox(double lam, double gamma, const double* z, const double* step,
                         const double* curv, double* out, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        out[j] = mcp_prox_1d(z[j], step[j], lam, gamma, _curvature(curv, j))


cdef void separable_subdiff(double lam, double gamma, const double* w, const double* curv,
                            double* lo, double* hi, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        mcp_subdiff_1d(w[j], lam, gamma, _curvature(curv, j), &lo[j], &hi[j])


cdef void separable_quadratic(double lam, double gamma, const double* w,
                              const double* curv, double* grad, double* hess,
                              Py_ssize_t n) noexcept nogil:
    """The exact local quadratic model on the nonzero coordinates."""
    cdef Py_ssize_t j
    for j in range(n):
        if w[j] == 0.0:
            grad[j] = 0.0
            hess[j] = 0.0
        else:
            mcp_quadratic_1d(w[j], lam, gamma, _curvature(curv, j), &grad[j], &hess[j])


cdef class L1(Penalty):
    """The lasso penalty ``lam * sum_j |w_j|``.

    Parameters
    ----------
    lam : float, default=1.0
        Sparsity strength (lambda_s), non-negative.
    """

    def __init__(self, double lam=1.0):
        Penalty.__init__(self, lam)
        self.is_convex = True
        self.is_separable = True

    cdef double value(self, const double* w, const double* curv,
                      Py_ssize_t n) except? -1 nogil:
        return separable_value(self.lam, 0.0, w, NULL, n)

    cdef int prox(self, const double* z, const double* step,
                  const double* curv, double* out, Py_ssize_t n) except -1 nogil:
        separable_prox(self.lam, 0.0, z, step, NULL, out, n)
        return 0

    cdef int subdiff(self, const double* w, const double* curv,
                     double* lo, double* hi, Py_ssize_t n) except -1 nogil:
        separable_subdiff(self.lam, 0.0, w, NULL, lo, hi, n)
        return 0

    cdef double lambda_max(self, const double* grad, const double* curv,
                           Py_ssize_t n) except? -1 nogil:
        return max_abs(grad, n)

    cdef int local_quadratic(self, const double* w, const double* curv,
                             double* grad, double* hess, Py_ssize_t n) except -1 nogil:
        separable_quadratic(self.lam, 0.0, w, NULL, grad, hess, n)
        return 1

    def __reduce__(self):
        return (L1, (self.lam,))


cdef class MCP(Penalty):
    """The minimax concave penalty, concavity scaled by each coordinate's curvature.

    ``MCP_j(w) = lam |w| - a_j w^2 / (2 gamma)`` for ``|w| <= gamma lam / a_j``
    and ``gamma lam^2 / (2 a_j)`` beyond, where ``a_j`` is the datafit's
    curvature along coordinate j (docs/objective.rst).

    Parameters
    ----------
    lam : float, default=1.0
        Sparsity strength (lambda_s), non-negative.
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
        return separable_value(self.lam, self.gamma, w, curv, n)

    cdef int prox(self, const double* z, const double* step,
                  const double* curv, double* out, Py_ssize_t n) except -1 nogil:
        separable_prox(self.lam, self.gamma, z, step, curv, out, n)
        return 0

    cdef int subdiff(self, const double* w, const double* curv,
                     double* lo, double* hi, Py_ssize_t n) except -1 nogil:
        separable_subdiff(self.lam, self.gamma, w, curv, lo, hi, n)
        return 0

    cdef double lambda_max(self, const double* grad, const double* curv,
                           Py_ssize_t n) except? -1 nogil:
        return max_abs(grad, n)

    cdef int local_quadratic(self, const double* w, const double* curv,
                             double* grad, double* hess, Py_ssize_t n) except -1 nogil:
        separable_quadratic(self.lam, self.gamma, w, curv, grad, hess, n)
        return 1

    def _repr_params(self):
        return f"lam={self.lam!r}, gamma={self.gamma!r}"

    def __reduce__(self):
        return (MCP, (self.lam, self.gamma))
