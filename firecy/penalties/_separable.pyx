"""Separable sparsity penalties: L1 and the curvature-scaled MCP.

Both act coordinate by coordinate: for coordinate j with curvature a_j (the
datafit's second derivative along w_j, ``curv[j]``), MCP_j(w) = lam |w| -
a_j w^2 / (2 gamma) up to |w| = gamma lam / a_j and constant beyond; L1 is
lam |w|, which is MCP_j with a_j = 0.  So the two share one implementation:
the block loops of ``SeparablePenalty``, on the per-coordinate functions of
``_sparsity.pxd`` (also used by the fusion penalties), with ``curv`` NULL
for L1.  The
penalties, the curvature scaling and why it makes gamma scale-free are
stated in docs/objective.rst.
"""
from libc.math cimport fabs, fmax

from firecy.penalties.base cimport Block, PENALTY_SEPARABLE, Penalty
from firecy.penalties._sparsity cimport (
    mcp_prox_1d, mcp_quadratic_1d, mcp_subdiff_1d, mcp_value_1d)


cdef inline double _curvature(const double* curv, Py_ssize_t j) noexcept nogil:
    return curv[j] if curv != NULL else 0.0


cdef class SeparablePenalty(Penalty):
    """Base of L1 and MCP: the block loops, written once (internal).

    ``_gamma`` is MCP's concavity; 0 means L1, for which the coordinates'
    curvatures are not read (``curv`` is replaced by NULL: curvature 0).
    """

    cdef inline const double* _scaled(self, const double* curv) noexcept nogil:
        return curv if self._gamma > 0.0 else NULL

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        cdef double total = 0.0
        cdef Py_ssize_t j, n = blk.n
        cdef const double* curv = self._scaled(blk.curv)
        if curv == NULL:
            for j in range(n):
                total += fabs(w[j])
            return self.lam * total
        for j in range(n):
            total += mcp_value_1d(w[j], self.lam, self._gamma, curv[j])
        return total

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef Py_ssize_t j, n = blk.n
        cdef const double* curv = self._scaled(blk.curv)
        for j in range(n):
            out[j] = mcp_prox_1d(z[j], step[j], self.lam, self._gamma, _curvature(curv, j))
        return 0

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        cdef Py_ssize_t j, n = blk.n
        cdef const double* curv = self._scaled(blk.curv)
        for j in range(n):
            mcp_subdiff_1d(w[j], self.lam, self._gamma, _curvature(curv, j), &lo[j], &hi[j])
        return 0

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        cdef double m = 0.0
        cdef Py_ssize_t j
        for j in range(blk.n):
            m = fmax(m, fabs(grad[j]))
        return m

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        """The exact local model: one group per nonzero coordinate."""
        cdef Py_ssize_t j, n_groups = 0
        cdef const double* curv = self._scaled(blk.curv)
        for j in range(blk.n):
            if w[j] == 0.0:
                group[j] = -1
            else:
                group[j] = n_groups
                mcp_quadratic_1d(w[j], self.lam, self._gamma, _curvature(curv, j),
                                 &grad[n_groups], &hess[n_groups])
                n_groups += 1
        return n_groups


cdef class L1(SeparablePenalty):
    """The lasso penalty ``lam * sum_j |w_j|``.

    Parameters
    ----------
    lam : float, default=1.0
        Sparsity strength (λ_s), non-negative.

    Examples
    --------
    >>> from firecy.penalties import L1
    >>> pen = L1(0.5)
    >>> pen.value_of([2.0, -1.0])
    1.5

    Its prox is soft-thresholding at ``lam / step``: entries within it go
    to zero, the others shrink towards zero by it.

    >>> pen.prox_of([2.0, -0.3, 0.5, -1.0])
    array([ 1.5,  0. ,  0. , -0.5])
    >>> pen.prox_of([2.0, -0.3, 0.5, -1.0], step=2.0)
    array([ 1.75, -0.05,  0.25, -0.75])

    ``w = 0`` is stationary once ``lam`` reaches the largest ``|gradient|``:

    >>> pen.lambda_max_of([0.2, -0.8])
    0.8
    """

    def __init__(self, double lam=1.0):
        Penalty.__init__(self, lam)
        self._gamma = 0.0
        self.flags = PENALTY_SEPARABLE

    def __reduce__(self):
        return (L1, (self.lam,))


cdef class MCP(SeparablePenalty):
    """The minimax concave penalty, concavity scaled by each coordinate's curvature.

    ``MCP_j(w) = lam |w| - a_j w^2 / (2 gamma)`` for ``|w| <= gamma lam / a_j``
    and ``gamma lam^2 / (2 a_j)`` beyond, where ``a_j`` is the datafit's
    curvature along coordinate j (docs/objective.rst).

    Parameters
    ----------
    lam : float, default=1.0
        Sparsity strength (λ_s), non-negative.
    gamma : float, default=3.0
        Concavity, > 1. Close to 1 selects almost like L0, large values
        behave like the lasso.

    Examples
    --------
    With unit step and curvature the prox is firm thresholding: zero up to
    ``lam``, a steeper line up to ``gamma * lam``, and no shrinkage beyond
    (where the lasso would still shrink by ``lam``).

    >>> from firecy.penalties import L1, MCP
    >>> pen = MCP(1.0, gamma=3.0)
    >>> pen.prox_of([0.5, 2.0, 4.0], curvature=1.0)
    array([0. , 1.5, 4. ])
    >>> L1(1.0).prox_of([0.5, 2.0, 4.0])
    array([0., 1., 3.])

    Its value is flat at ``gamma * lam**2 / 2`` beyond ``gamma * lam``:

    >>> float(pen.value_of([4.0], curvature=1.0)), float(pen.value_of([9.0], curvature=1.0))
    (1.5, 1.5)
    """

    def __init__(self, double lam=1.0, double gamma=3.0):
        Penalty.__init__(self, lam)
        if not gamma > 1.0:
            raise ValueError(f"MCP needs gamma > 1, got gamma={gamma!r}")
        self._gamma = gamma
        self.flags = PENALTY_SEPARABLE

    @property
    def gamma(self):
        """The concavity parameter (> 1)."""
        return self._gamma

    @gamma.setter
    def gamma(self, double value):
        self._gamma = value

    def _repr_params(self):
        return f"lam={self.lam!r}, gamma={self.gamma!r}"

    def __reduce__(self):
        return (MCP, (self.lam, self.gamma))
