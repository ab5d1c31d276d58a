"""Sign constraints as a penalty: ``SignConstrained(penalty, lower, upper)``.

The constrained penalty is ``penalty(w) + sum_j I(lower_j <= w_j <= upper_j)``
with every bound at zero or infinite, so each coordinate's feasible set is
R, [0, inf), (-inf, 0] or {0}. The engine never sees the bounds: it talks to
the penalty through the contract, and the flag ``PENALTY_SIGN_BOUNDS``
(_signed.pxd) tells it to make no move of its own that could leave them.

Prox. For a separable penalty whose every coordinate term is even and
non-decreasing in ``|x|`` (L1, MCP, LengthWeightedL1, Unpenalised with or
without its ridge) the constrained prox is the unconstrained one projected
on the half-line, exactly: for ``z_j >= 0`` the unconstrained minimiser has
the sign of ``z_j`` (or is 0) and so is feasible under ``lower_j = 0``; for
``z_j < 0`` both ``step/2 (x - z_j)^2`` and the penalty grow with ``x >= 0``,
so 0 is the minimiser on the half-line. Fusion couples the coordinates and
that argument fails (steps 1, lam_fusion 1, z = (-5, -3), x_0 >= 0: clipping
the fused-lasso prox (-4, -4) gives (0, -4), objective 17, against 15 at the
constrained minimiser (0, -2)):
a FusedPenalty's bounded blocks go to the dynamic programme with
per-coordinate bounds (tv/_dp.pyx, ``fused_lasso_dp_bounded``).
"""
from libc.math cimport INFINITY, fabs, fmax, fmin, isnan
from libc.stdlib cimport free, malloc

from firecy.penalties.base cimport (
    Block, PENALTY_SCORE_IS_DECREASE, PENALTY_SEPARABLE, Penalty)
from firecy.penalties._fusion cimport FusedPenalty
from firecy.penalties._group_l0 cimport GroupL0, prox_decrease
from firecy.penalties.tv._dp cimport (
    fused_lasso_dp_bounded, fused_lasso_dp_work_size)

import numpy as np

SIGN_BOUNDS = PENALTY_SIGN_BOUNDS


cdef inline double _clamp(double x, double lo, double hi) noexcept nogil:
    # +0.0 where a bound clips or x is zero (never -0.0)
    if x == 0.0:
        return 0.0
    if x < lo:
        return lo + 0.0
    if x > hi:
        return hi + 0.0
    return x


cdef int _bad_column(Py_ssize_t j, Py_ssize_t n_columns) except -1 nogil:
    with gil:
        raise ValueError(
            f"column {j} is outside SignConstrained's bounds (length {n_columns}): "
            "lower and upper need one entry per design column")


cdef bint _walk_stationary(const double* grad, Py_ssize_t n, const double* u_lo,
                           const double* u_hi, double lam_fusion) noexcept nogil:
    """Whether -grad = u + D^T v with u_k in [u_lo[k], u_hi[k]] (possibly
    infinite) and |v| <= lam_fusion: the walk of _fusion.zero_is_stationary
    with one-sided steps. U_k (partial sums of u) moves by u_k at step k,
    stays within lam_fusion of G_k = -sum_{j<=k} grad_j inside the block and
    ends exactly at G_n; track the interval of reachable U."""
    cdef double lo = 0.0, hi = 0.0, G = 0.0
    cdef Py_ssize_t k
    for k in range(n):
        G -= grad[k]
        lo += u_lo[k]
        hi += u_hi[k]
        if k < n - 1:
            lo = fmax(lo, G - lam_fusion)
            hi = fmin(hi, G + lam_fusion)
            if lo > hi:
                return False
    return lo <= G <= hi


cdef class SignConstrained(Penalty):
    """A penalty with its weights held to half-lines at zero (sign constraints).

    ``penalty(w) + sum_j I(lower[j] <= w_j <= upper[j])``: weight j is held
    non-negative (``lower[j] = 0, upper[j] = inf``), non-positive
    (``lower[j] = -inf, upper[j] = 0``), at zero (both 0) or left free
    (``-inf, inf``). The arrays are indexed by the design's global column
    (``Block.columns``), so one object serves every block.

    The prox is exact when ``penalty`` is separable and each coordinate's
    term is even and non-decreasing in ``|w_j|`` (:class:`L1`, :class:`MCP`,
    :class:`LengthWeightedL1`, :class:`Unpenalised`): it is then the
    unconstrained prox clipped to the half-line. For the fusion penalties
    (:class:`Fusion`, :class:`L1Fusion`, :class:`MCPFusion`) clipping is not
    exact (the coordinates are coupled): a block with a bounded coordinate
    is solved exactly by the fused lasso's dynamic programme with
    per-coordinate bounds (the block problem stays convex). A separable penalty whose terms are not even (a
    plug-in) gets the clipped prox, which is then not its constrained prox.
    Group-L0 goes outside: ``GroupL0(SignConstrained(inner, lower, upper),
    lam0)`` decides keep-or-zero on the constrained prox (the other order is
    refused). The value is ``+inf`` outside the bounds, so a move the solver
    checks on the objective is refused there.

    Parameters
    ----------
    penalty : Penalty
        The penalty to constrain: a separable one (built-in, compiled
        plug-in or :class:`PythonPenalty` declaring ``is_separable``) or a
        :class:`FusedPenalty`. Its ``lam`` is this object's ``lam``.
    lower, upper : array-like of float, shape (n_columns,)
        Per design column: ``lower`` in {-inf, 0}, ``upper`` in {0, inf},
        ``lower <= upper``.

    Raises
    ------
    ValueError
        Bounds of different lengths, not 1-D, NaN, not in those sets, or
        ``lower > upper``.
    TypeError
        A penalty that cannot be bounded exactly (not separable and not a
        fusion penalty, or a :class:`GroupL0`: put the constraint inside it).

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.penalties import L1, SignConstrained
    >>> inf = np.inf
    >>> pen = SignConstrained(L1(0.5), lower=[0.0, -inf, 0.0], upper=[inf, 0.0, 0.0])
    >>> pen.prox_of([2.0, 2.0, 2.0])       # >= 0, <= 0, held at 0
    array([1.5, 0. , 0. ])
    >>> pen.prox_of([-2.0, -2.0, -2.0])
    array([ 0. , -1.5,  0. ])
    >>> pen.value_of([1.0, -1.0, 0.0]), pen.value_of([-1.0, 0.0, 0.0])
    (1.0, inf)

    At zero a bound adds its normal cone: a weight held non-negative may sit
    at zero under any gradient that pushes it down, so only the other side
    enters ``lambda_max``:

    >>> pen.subdiff_of([0.0, 0.0, 0.0])
    (array([-inf, -0.5, -inf]), array([0.5, inf, inf]))
    >>> pen.lambda_max_of([0.8, 0.3, -5.0])     # only the 0.3 pushes the right way
    0.3

    Fusion gets the exact bounded prox (clipping the unconstrained one,
    ``(-4, -4)``, would give ``(0, -4)``: objective 17 against 15 here):

    >>> from firecy.penalties import Fusion
    >>> SignConstrained(Fusion(1.0), [0.0, -inf], [inf, inf]).prox_of([-5.0, -3.0])
    array([ 0., -2.])

    """

    def __init__(self, penalty, lower, upper):
        from firecy.penalties._registry import as_penalty

        cdef Penalty pen = as_penalty(penalty)
        if isinstance(pen, SignConstrained):
            raise TypeError("the penalty is already SignConstrained: give one set of bounds")
        if isinstance(pen, GroupL0):
            raise TypeError(
                "SignConstrained(GroupL0(...)) would decide GroupL0's keep-or-zero on "
                "the unconstrained prox: use GroupL0(SignConstrained(inner, lower, upper), "
                "lam0) instead")
        if isinstance(pen, FusedPenalty):
            self.kind = 1
            self.fused = pen
        elif pen.flags & PENALTY_SEPARABLE:
            if pen.flags & PENALTY_SCORE_IS_DECREASE:
                raise TypeError(
                    f"{type(pen).__name__} scores blocks by decrease (an L0-type penalty): "
                    "its keep-or-zero rule must see the bounds; SignConstrained cannot "
                    "bound it (wrap its inner penalty instead)")
            self.kind = 0
        else:
            raise TypeError(
                f"SignConstrained cannot bound {type(pen).__name__}: it is not separable "
                "(its prox couples coordinates, so clipping it to the bounds is not the "
                "constrained prox) and it is not one of firecy's fusion penalties, whose "
                "prox takes bounds")
        lo = np.array(lower, dtype=np.float64, copy=True)
        hi = np.array(upper, dtype=np.float64, copy=True)
        if lo.ndim != 1 or hi.ndim != 1:
            raise ValueError(f"lower and upper must be 1-D arrays, got shapes "
                             f"{lo.shape} and {hi.shape}")
        if lo.shape != hi.shape:
            raise ValueError(f"lower and upper must have the same length (one entry per "
                             f"design column), got {lo.shape[0]} and {hi.shape[0]}")
        if np.isnan(lo).any() or np.isnan(hi).any():
            raise ValueError("lower and upper must not contain NaN (columns "
                             f"{np.flatnonzero(np.isnan(lo) | np.isnan(hi))[:5].tolist()})")
        bad = np.flatnonzero(~((lo == 0.0) | (lo == -np.inf)))
        if bad.size:
            raise ValueError(f"lower must be 0 or -inf, got {lo[bad[0]]!r} at column "
                             f"{int(bad[0])}")
        bad = np.flatnonzero(~((hi == 0.0) | (hi == np.inf)))
        if bad.size:
            raise ValueError(f"upper must be 0 or +inf, got {hi[bad[0]]!r} at column "
                             f"{int(bad[0])}")
        # lower in {-inf, 0} and upper in {0, inf}: lower > upper is impossible
        # now, but say so plainly should the sets ever widen
        bad = np.flatnonzero(lo > hi)
        if bad.size:
            raise ValueError(f"lower > upper at column {int(bad[0])}")
        lo[lo == 0.0] = 0.0     # -0.0 -> +0.0
        hi[hi == 0.0] = 0.0
        Penalty.__init__(self, pen.lam)
        self.inner = pen
        self._lower = lo
        self._upper = hi
        self.n_columns = lo.shape[0]
        self.flags = (pen.flags & (PENALTY_SEPARABLE | PENALTY_SCORE_IS_DECREASE)
                      ) | PENALTY_SIGN_BOUNDS

    # ------------------------------------------------------------------

    @property
    def lam(self):
        """The wrapped penalty's ``lam`` (the path parameter)."""
        return self.inner.lam

    @lam.setter
    def lam(self, double value):
        if not value >= 0.0:
            raise ValueError(f"lam must be a non-negative number, got {value!r}")
        # through Python: an inner penalty with its own lam property (Blockwise,
        # SignConstrained) passes it on; the typed C field would skip it
        (<object> self.inner).lam = value
        (<Penalty> self).lam = value

    @property
    def penalty(self):
        """The wrapped penalty (also ``inner``)."""
        return self.inner

    @property
    def lower(self):
        """The lower bounds per design column (a copy)."""
        return np.asarray(self._lower).copy()

    @property
    def upper(self):
        """The upper bounds per design column (a copy)."""
        return np.asarray(self._upper).copy()

    @property
    def gamma(self):
        """The wrapped penalty's MCP concavity (0 if it has none)."""
        return getattr(self.inner, "gamma", 0.0)

    @gamma.setter
    def gamma(self, value):
        self.inner.gamma = value

    cdef int bounds_of(self, const Block* blk, double* lb, double* ub) except -1 nogil:
        """The block's bounds; 1 if any is finite, 0 if none, -1 (ValueError)
        on a column outside the bounds' length."""
        cdef Py_ssize_t k, j
        cdef int bounded = 0
        for k in range(blk.n):
            j = blk.columns[k]
            if j < 0 or j >= self.n_columns:
                _bad_column(j, self.n_columns)
            lb[k] = self._lower[j]
            ub[k] = self._upper[j]
            if lb[k] == 0.0 or ub[k] == 0.0:
                bounded = 1
        return bounded

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        cdef Py_ssize_t k, j
        for k in range(blk.n):
            j = blk.columns[k]
            if j < 0 or j >= self.n_columns:
                _bad_column(j, self.n_columns)
            # w_j = -0.0 under lower = 0 is feasible (it is zero)
            if w[k] < self._lower[j] or w[k] > self._upper[j]:
                return INFINITY
        return self.inner.value(blk, w)

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef Py_ssize_t k, n = blk.n
        cdef int bounded, status = 0
        cdef double* buf = <double*> malloc(2 * n * sizeof(double) + 1)
        cdef double* work
        if buf == NULL:
            with gil:
                raise MemoryError()
        cdef double* lb = buf
        cdef double* ub = buf + n
        try:
            bounded = self.bounds_of(blk, lb, ub)
            if self.kind == 0 or not bounded:
                self.inner.prox(blk, z, step, out)
                for k in range(n):
                    out[k] = _clamp(out[k], lb[k], ub[k])
                return 0
            # a fusion penalty with a bounded coordinate: the bounded DP
            work = <double*> malloc(fused_lasso_dp_work_size(n) * sizeof(double) + 8)
            if work == NULL:
                with gil:
                    raise MemoryError()
            status = fused_lasso_dp_bounded(
                z, step, n, self.fused.lam_fusion(), self.fused._lam_sparsity(), self.fused.gamma,
                blk.curv if self.fused.gamma > 0.0 else NULL, lb, ub, out, work)
            free(work)
            if status != 0:
                with gil:
                    raise ValueError(
                        "fused lasso solver rejected the block (non-convex element: "
                        "step * gamma < curvature, or an invalid penalty level)")
            for k in range(n):
                out[k] = _clamp(out[k], lb[k], ub[k])   # exact already; no -0.0
        finally:
            free(buf)
        return 0

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        cdef Py_ssize_t k, j
        self.inner.subdiff(blk, w, lo, hi)
        for k in range(blk.n):
            j = blk.columns[k]
            if j < 0 or j >= self.n_columns:
                _bad_column(j, self.n_columns)
            if w[k] == 0.0:
                # the normal cone of the half-line at its end point
                if self._lower[j] == 0.0:
                    lo[k] = -INFINITY
                if self._upper[j] == 0.0:
                    hi[k] = INFINITY
        return 0

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        cdef Py_ssize_t k, n = blk.n
        cdef double m, mid, top
        cdef int it
        cdef double* buf = <double*> malloc(5 * n * sizeof(double) + 1)
        if buf == NULL:
            with gil:
                raise MemoryError()
        cdef double* lb = buf
        cdef double* ub = buf + n
        cdef double* g = buf + 2 * n
        cdef double* u_lo = buf + 3 * n
        cdef double* u_hi = buf + 4 * n
        try:
            self.bounds_of(blk, lb, ub)
            if self.kind == 0:
                # separable and even: coordinate j's condition reads only the
                # part of its gradient the normal cone does not absorb (a
                # gradient pushing w_j out of its half-line is absorbed)
                for k in range(n):
                    g[k] = grad[k]
                    if (grad[k] > 0.0 and lb[k] == 0.0) or (grad[k] < 0.0 and ub[k] == 0.0):
                        g[k] = 0.0
                return self.inner.lambda_max(blk, g)
            # fusion: bisection on the walk test with one-sided u ranges
            top = 0.0
            for k in range(n):
                top = fmax(top, fabs(grad[k]))
            if top == 0.0:
                return 0.0
            if not self.fused.has_sparsity:
                # no sparsity term: u_k is only the normal cone; lam scales
                # the fusion term alone, and |G_k| <= sum |grad| bounds it
                top = 0.0
                for k in range(n):
                    top += fabs(grad[k])
                top = top / self.fused.fusion * 1.01 + 1e-300
            m = 0.0
            if not self._stationary(grad, n, lb, ub, u_lo, u_hi, top):
                return INFINITY
            if self._stationary(grad, n, lb, ub, u_lo, u_hi, 0.0):
                return 0.0   # the normal cones absorb the whole gradient
            for it in range(200):
                mid = 0.5 * (m + top)
                if self._stationary(grad, n, lb, ub, u_lo, u_hi, mid):
                    top = mid
                else:
                    m = mid
                if top - m <= 1e-14 * top:
                    break
            return top
        finally:
            free(buf)

    cdef bint _stationary(self, const double* grad, Py_ssize_t n,
                          const double* lb, const double* ub, double* u_lo, double* u_hi,
                          double lam) noexcept nogil:
        cdef Py_ssize_t k
        cdef double s = lam if self.fused.has_sparsity else 0.0
        for k in range(n):
            u_lo[k] = -INFINITY if lb[k] == 0.0 else -s
            u_hi[k] = INFINITY if ub[k] == 0.0 else s
        return _walk_stationary(grad, n, u_lo, u_hi, self.fused.fusion * lam)

    cdef double block_score(self, const Block* blk, const double* w, const double* grad,
                            const double* step, double* work) except? -1 nogil:
        # the direction vector from this subdifferential (the normal cone
        # included: a coordinate at its bound pushed outwards scores 0), not
        # the inner penalty's score, which would not see the bounds
        cdef Py_ssize_t k, n = blk.n
        cdef double total = 0.0, d
        if self.flags & PENALTY_SCORE_IS_DECREASE:
            return prox_decrease(self, blk, w, grad, step, work)
        self.subdiff(blk, w, work, work + n)
        for k in range(n):
            d = fmax(0.0, fmax(work[k] + grad[k], -grad[k] - work[n + k]))
            total += d * d
        return total

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        # a feasible nonzero weight is strictly inside its half-line, where
        # the bounds are inactive: the inner model is exact there, while its
        # sign holds; weights at zero (at a bound or not) stay at zero as in
        # every local model (the engine's Newton steps stop at zero)
        return self.inner.local_groups(blk, w, group, grad, hess)

    # ------------------------------------------------------------------

    def check_blocks(self, block_ptr):
        """Raise ValueError unless the bounds have one entry per design column."""
        block_ptr = np.asarray(block_ptr)
        n = int(block_ptr[block_ptr.size - 1]) if block_ptr.size else 0
        if n != self.n_columns:
            raise ValueError(f"SignConstrained has bounds for {self.n_columns} columns, "
                             f"the design has {n}")
        self.inner.check_blocks(block_ptr)

    def bind_ensemble(self, ensemble):
        """The constraint on the inner penalty bound to ``ensemble``."""
        inner = self.inner.bind_ensemble(ensemble)
        return self if inner is self.inner else SignConstrained(inner, self.lower, self.upper)

    def restrict_to(self, blocks, columns):
        """This penalty on a sub-design: the blocks ``blocks`` of the design,
        whose columns ``columns`` are renumbered from 0 (what
        ``BlockDesign.subset_blocks`` returns). The bounds are sliced; the
        inner penalty (restricted too, if it restricts) is shared, so
        setting ``lam`` on either object sets it on both."""
        columns = np.asarray(columns, dtype=np.intp)
        inner = self.inner
        to = getattr(inner, "restrict_to", None)
        if to is not None:
            inner = to(blocks, columns)
        else:
            restrict = getattr(inner, "restrict_blocks", None)
            if restrict is not None:
                inner = restrict(blocks)
        return SignConstrained(inner, np.asarray(self._lower)[columns],
                               np.asarray(self._upper)[columns])

    def unpenalised_blocks(self, block_ptr):
        """The inner penalty's unpenalised blocks (none if it has no such method)."""
        find = getattr(self.inner, "unpenalised_blocks", None)
        return np.empty(0, dtype=np.intp) if find is None else find(block_ptr)

    def project(self, w):
        """``w`` clipped to the bounds (a new array; ``+0.0`` where clipped)."""
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.n_columns,):
            raise ValueError(f"w must have shape ({self.n_columns},), got {w.shape}")
        return np.clip(w, np.asarray(self._lower), np.asarray(self._upper)) + 0.0

    def _repr_params(self):
        return (f"{self.inner!r}, lower={np.asarray(self._lower).tolist()!r}, "
                f"upper={np.asarray(self._upper).tolist()!r}")

    def __reduce__(self):
        return (SignConstrained, (self.inner, self.lower, self.upper))
