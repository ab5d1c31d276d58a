"""Fusion within a tree, alone or with L1 / MCP.

Fusion is ``lam_fusion * sum_{j>0} |w_j - w_{j-1}|`` over the leaves of one
tree in left-to-right order (never across trees), so leaves that share
parents are pulled together; ``lam_fusion = fusion * lam``:

    Fusion(lam)                         lam_fusion = lam, no sparsity term
    L1Fusion(lam, fusion)         lam |w| + fusion * lam * TV(w)
    MCPFusion(lam, gamma, fusion) MCP(w; lam, gamma) + fusion * lam * TV(w)

The prox (the exact block minimisation of the engine) is
``argmin_x sum_j step_j/2 (x_j - z_j)^2 + penalty(x)``:

* all ``step_j`` equal and L1 (or no sparsity term): the unweighted fused
  lasso (Condat's direct algorithm) followed by soft-thresholding, which is
  exact in this case only (FIRE supplement, Liu & Mazumder, KDD 2023,
  section C.3);
* otherwise (tree blocks: step_j = a_j differ per leaf; or MCP): the
  weighted dynamic programme, which solves the whole problem exactly: with
  firecy's curvature-scaled MCP each element's loss stays convex, so the
  block problem is convex and the DP's answer is its global minimiser. (The
  paper's thresholding of the fused solution is only stationary for MCP.)

The terms are stated in docs/objective.rst.
"""
from libc.math cimport fabs, fmax, fmin, copysign, INFINITY
from libc.stdlib cimport malloc, free

from firecy.penalties.base cimport Block, Penalty
from firecy.penalties._sparsity cimport (
    mcp_quadratic_1d, mcp_subdiff_1d, mcp_value_1d, soft_threshold)
from firecy.penalties.tv._condat cimport fused_lasso_1d, fused_lasso_1d_work_size
from firecy.penalties.tv._dp cimport (
    fused_lasso_dp, fused_lasso_dp_l1, fused_lasso_dp_l1_work_size, fused_lasso_dp_work_size)


cdef inline void sub_interval(double x, double scale, double* lo, double* hi) noexcept nogil:
    """scale * sub|.|(x): {scale sign x} if x != 0 else [-scale, scale]."""
    if x > 0.0:
        lo[0] = hi[0] = scale
    elif x < 0.0:
        lo[0] = hi[0] = -scale
    else:
        lo[0] = -scale
        hi[0] = scale


cdef bint zero_is_stationary(const double* grad, Py_ssize_t n, double lam,
                             double lam_fusion) noexcept nogil:
    """Whether -grad = u + D^T v with |u_j| <= lam, |v_k| <= lam_fusion.

    With partial sums G_k = -sum_{j<k} grad_j and U_k of u, the fusion
    multipliers are v_k = U_k - G_k, so feasibility is a walk: U moves by at
    most lam per step, stays within lam_fusion of G_k inside the block and ends
    exactly at G_n. Track the interval of reachable U_k.
    """
    cdef double lo = 0.0, hi = 0.0, G = 0.0
    cdef Py_ssize_t k
    for k in range(n):
        G -= grad[k]
        lo -= lam
        hi += lam
        if k < n - 1:
            lo = fmax(lo, G - lam_fusion)
            hi = fmin(hi, G + lam_fusion)
            if lo > hi:
                return False
    return lo <= G <= hi


cdef double pure_fusion_lambda_max(const double* grad, Py_ssize_t n,
                                   double scale) noexcept nogil:
    """Without a sparsity term, 0 is stationary iff the gradient sums to 0
    (the block's level is unpenalised) and lam_fusion >= max_k |G_k|."""
    cdef double G = 0.0, m = 0.0
    cdef Py_ssize_t k
    for k in range(n - 1):
        G -= grad[k]
        m = fmax(m, fabs(G))
    G -= grad[n - 1]
    if fabs(G) > 1e-12 * scale * n:
        return INFINITY
    return m


cdef class FusedPenalty(Penalty):
    """Base of the fusion penalties: sparsity term plus fusion within a block.

    The sparsity term is ``lam |w_j|`` (``gamma == 0``) or the curvature-
    scaled MCP of :class:`MCP` (``gamma > 0``), absent when ``has_sparsity``
    is False; the fusion term is ``lam_fusion() = fusion * lam`` times
    the block's total variation. Build one of its subclasses,
    :class:`Fusion`, :class:`L1Fusion` or :class:`MCPFusion`; ``lam`` is the
    path parameter (λ_s; for :class:`Fusion`, the fusion strength).

    Attributes
    ----------
    fusion : float
        λ_f / λ_s: the fusion term is ``fusion * lam`` times the total
        variation (1 for :class:`Fusion`).
    gamma : float
        The MCP concavity of the sparsity term; 0 for the L1 term.
    has_sparsity : bool
        Whether there is a sparsity term (False for :class:`Fusion`).

    Examples
    --------
    >>> from firecy.penalties import FusedPenalty, L1Fusion
    >>> pen = L1Fusion(1.0, fusion=0.5)
    >>> isinstance(pen, FusedPenalty), pen.has_sparsity, pen.gamma
    (True, True, 0.0)

    Its value is ``lam * sum |w_j| + fusion * lam * sum |w_j - w_{j-1}|``:

    >>> pen.value_of([2.0, 2.0, 0.0, 0.0])    # 1 * 4 + 0.5 * 1 * 2
    5.0
    """

    cdef double lam_fusion(self) noexcept nogil:
        return self.fusion * self.lam

    cdef inline double _lam_sparsity(self) noexcept nogil:
        # lam for the sparsity term: 0 without one (Fusion alone)
        return self.lam if self.has_sparsity else 0.0

    cdef inline double _curvature(self, const double* curv, Py_ssize_t j) noexcept nogil:
        # MCP reads the coordinate's curvature; L1 is MCP at curvature 0
        return curv[j] if self.gamma > 0.0 else 0.0

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        cdef double total = 0.0, tv = 0.0, lam = self._lam_sparsity()
        cdef const double* curv = blk.curv
        cdef Py_ssize_t j, n = blk.n
        for j in range(n):
            total += mcp_value_1d(w[j], lam, self.gamma, self._curvature(curv, j))
            if j > 0:
                tv += fabs(w[j] - w[j - 1])
        return total + self.lam_fusion() * tv

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef Py_ssize_t j, n = blk.n
        cdef bint equal_steps = True
        cdef double c = step[0], lam = self._lam_sparsity(), lam_fusion = self.lam_fusion()
        cdef double* work
        cdef int status
        for j in range(1, n):
            if step[j] != c:
                equal_steps = False
                break
        cdef bint unweighted = equal_steps and self.gamma <= 0.0 and c > 0.0
        # the workspace is allocated per call (a few hundred bytes for a
        # tree): a penalty object may be shared by solves in several threads
        cdef Py_ssize_t size = (fused_lasso_1d_work_size(n) if unweighted
                                else fused_lasso_dp_l1_work_size(n) if self.gamma <= 0.0
                                else fused_lasso_dp_work_size(n))
        work = <double*> malloc(size * sizeof(double))
        if work == NULL:
            with gil:
                raise MemoryError()
        if unweighted:
            # TV prox then soft-thresholding is exact here (module docstring);
            # the workspace lets Condat's algorithm hand over to the DP on
            # its rare quadratic cases
            status = fused_lasso_1d(z, n, lam_fusion / c, out, work)
            if status == 0 and lam > 0.0:
                for j in range(n):
                    out[j] = soft_threshold(out[j], lam / c)
        elif self.gamma <= 0.0:
            status = fused_lasso_dp_l1(z, step, n, lam_fusion, lam, out, work)
        else:
            status = fused_lasso_dp(z, step, n, lam_fusion, lam, self.gamma, blk.curv, out, work)
        free(work)
        if status != 0:
            with gil:
                raise ValueError(
                    "fused lasso solver rejected the block (non-convex element: "
                    "step * gamma < curvature, or an invalid penalty level)")
        return 0

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        cdef const double* curv = blk.curv
        cdef Py_ssize_t j, n = blk.n
        cdef double a_lo, a_hi, b_lo, b_hi
        cdef double lam = self._lam_sparsity(), lam_fusion = self.lam_fusion()
        for j in range(n):
            mcp_subdiff_1d(w[j], lam, self.gamma, self._curvature(curv, j), &lo[j], &hi[j])
            if j > 0:   # + lam_fusion sub(w_j - w_{j-1})
                sub_interval(w[j] - w[j - 1], lam_fusion, &a_lo, &a_hi)
                lo[j] += a_lo
                hi[j] += a_hi
            if j < n - 1:   # - lam_fusion sub(w_{j+1} - w_j)
                sub_interval(w[j + 1] - w[j], lam_fusion, &b_lo, &b_hi)
                lo[j] -= b_hi
                hi[j] -= b_lo
        return 0

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        """Smallest lam with 0 stationary, by bisection on the walk test."""
        cdef double lo = 0.0, hi = 0.0, mid
        cdef Py_ssize_t j, it, n = blk.n
        for j in range(n):
            hi = fmax(hi, fabs(grad[j]))
        if hi == 0.0:
            return 0.0
        if not self.has_sparsity:
            return pure_fusion_lambda_max(grad, n, hi) / self.fusion
        for it in range(100):
            mid = 0.5 * (lo + hi)
            if zero_is_stationary(grad, n, mid, self.fusion * mid):
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-14 * hi:
                break
        return hi

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        """Segments of equal weights move together; zero segments stay."""
        cdef const double* curv = blk.curv
        cdef Py_ssize_t start = 0, end, j, n_groups = 0, n = blk.n
        cdef double v, g, h, dg, dh
        cdef double lam = self._lam_sparsity(), lam_fusion = self.lam_fusion()
        while start < n:
            v = w[start]
            end = start + 1
            while end < n and w[end] == v:
                end += 1
            if v == 0.0:
                for j in range(start, end):
                    group[j] = -1
            else:
                g = 0.0
                h = 0.0
                for j in range(start, end):
                    group[j] = n_groups
                    mcp_quadratic_1d(v, lam, self.gamma, self._curvature(curv, j), &dg, &dh)
                    g += dg
                    h += dh
                if start > 0:      # + lam_fusion |v - w_left|
                    g += copysign(lam_fusion, v - w[start - 1])
                if end < n:        # + lam_fusion |w_right - v|
                    g -= copysign(lam_fusion, w[end] - v)
                grad[n_groups] = g
                hess[n_groups] = h
                n_groups += 1
            start = end
        return n_groups

    def _repr_params(self):
        return (f"lam={self.lam!r}, fusion={self.fusion!r}, "
                f"has_sparsity={self.has_sparsity!r}, gamma={self.gamma!r}")


cdef class Fusion(FusedPenalty):
    """Fusion alone: ``lam * sum_{j>0} |w_j - w_{j-1}|`` within each tree.

    Parameters
    ----------
    lam : float, default=1.0
        The fusion strength (λ_f; there is no sparsity term, so the
        path parameter scales the fusion term: ``fusion`` is 1),
        non-negative. The level of a block is not penalised, so
        ``lambda_max`` is infinite unless the gradient sums to zero.

    Examples
    --------
    Its prox is the 1-D fused lasso (:func:`fused_lasso`): the two levels
    of a step move towards each other by ``lam / 2``, the mean is kept.

    >>> from firecy.penalties import Fusion
    >>> pen = Fusion(0.5)
    >>> pen.value_of([0.0, 0.0, 3.0, 3.0])
    1.5
    >>> pen.prox_of([0.0, 0.0, 3.0, 3.0])
    array([0.25, 0.25, 2.75, 2.75])
    >>> pen.lambda_max_of([1.0, -1.0]), pen.lambda_max_of([1.0, 1.0])
    (1.0, inf)
    """

    def __init__(self, double lam=1.0):
        Penalty.__init__(self, lam)
        self.has_sparsity = False
        self.fusion = 1.0
        self.gamma = 0.0

    def _repr_params(self):
        return f"lam={self.lam!r}"

    def __reduce__(self):
        return (Fusion, (self.lam,))


cdef _set_fusion(FusedPenalty pen, double fusion):
    if not fusion >= 0.0:
        raise ValueError(f"fusion must be non-negative, got {fusion!r}")
    pen.has_sparsity = True
    pen.fusion = fusion


cdef class L1Fusion(FusedPenalty):
    """``lam * sum_j |w_j| + fusion * lam * sum_{j>0} |w_j - w_{j-1}|``.

    Parameters
    ----------
    lam : float, default=1.0
        Sparsity strength (λ_s), non-negative.
    fusion : float, default=0.5
        λ_f / λ_s, non-negative (the same as ``FIRERegressor``'s ``fusion``).

    Examples
    --------
    The prox fuses neighbours into segments and soft-thresholds the
    segments: two close weights share one value, two small ones drop out.

    >>> import numpy as np
    >>> from firecy.penalties import L1Fusion
    >>> pen = L1Fusion(1.0, fusion=0.5)
    >>> pen.value_of([2.0, 2.0, 0.0, 0.0])    # 1 * (2 + 2) + 0.5 * 1 * |0 - 2|
    5.0
    >>> np.round(pen.prox_of([3.0, 3.2, -0.2, 0.1]), 12)
    array([1.85, 1.85, 0.  , 0.  ])
    """

    def __init__(self, double lam=1.0, double fusion=0.5):
        Penalty.__init__(self, lam)
        _set_fusion(self, fusion)
        self.gamma = 0.0

    def _repr_params(self):
        return f"lam={self.lam!r}, fusion={self.fusion!r}"

    def __reduce__(self):
        return (L1Fusion, (self.lam, self.fusion))


cdef class MCPFusion(FusedPenalty):
    """Curvature-scaled MCP plus fusion within each tree.

    ``sum_j MCP_j(w_j; lam, gamma) + fusion * lam * sum_{j>0} |w_j - w_{j-1}|``
    with MCP_j as in :class:`MCP`.

    Parameters
    ----------
    lam : float, default=1.0
        Sparsity strength (λ_s), non-negative.
    gamma : float, default=3.0
        Concavity, > 1.
    fusion : float, default=0.5
        λ_f / λ_s, non-negative (the same as ``FIRERegressor``'s ``fusion``).

    Examples
    --------
    As :class:`L1Fusion`, neighbours fuse and small segments drop out; but a
    segment beyond ``gamma * lam`` (in units of the curvature) is not shrunk
    by the sparsity term, only pulled by the fusion term towards its
    neighbour:

    >>> import numpy as np
    >>> from firecy.penalties import L1Fusion, MCPFusion
    >>> z = [5.0, 5.2, 0.4, 0.1]
    >>> np.round(MCPFusion(1.0, gamma=3.0, fusion=0.5).prox_of(z, curvature=1.0), 12)
    array([4.85, 4.85, 0.  , 0.  ])
    >>> np.round(L1Fusion(1.0, fusion=0.5).prox_of(z), 12)
    array([3.85, 3.85, 0.  , 0.  ])
    """

    def __init__(self, double lam=1.0, double gamma=3.0, double fusion=0.5):
        Penalty.__init__(self, lam)
        if not gamma > 1.0:
            raise ValueError(f"MCP needs gamma > 1, got gamma={gamma!r}")
        _set_fusion(self, fusion)
        self.gamma = gamma

    def _repr_params(self):
        return f"lam={self.lam!r}, gamma={self.gamma!r}, fusion={self.fusion!r}"

    def __reduce__(self):
        return (MCPFusion, (self.lam, self.gamma, self.fusion))
