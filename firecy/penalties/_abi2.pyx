"""The penalty contract (``Penalty``, ABI version 2) and its Python wrappers.

The contract is declared in ``_abi2.pxd`` (cimported through the public
header ``firecy/penalties/base.pxd``); docs/writing_penalties.rst explains
it and what is stable, docs/objective.rst what the shipped penalties
compute. The ``*_of`` methods are thin Python wrappers around the cdef
methods, for tests and interactive use.
"""
from libc.math cimport fabs, fmax, isfinite
from libc.stdlib cimport free, malloc

import numpy as np

ABI_VERSION = PENALTY_ABI_VERSION

# The header's layout as compiled into firecy, for the layout probes
# (firecy/_abi.py compares it with a plug-in's, see the end of _abi2.pxd)
LAYOUT = FIRECY_PENALTY_LAYOUT
LAYOUT_HASH = FIRECY_PENALTY_LAYOUT_HASH
LAYOUT_MEASURES = {
    "version": FIRECY_PENALTY_VERSION,
    "methods": FIRECY_PENALTY_METHODS,
    "Block": FIRECY_PENALTY_BLOCK_SIZE,
    "Penalty": FIRECY_PENALTY_OBJECT_SIZE,
}


# The local model a separable penalty without its own local_groups gets
# (derived_local_groups): the secants of its subdifferential are taken this
# far from w, relative to |w|. Exact for a penalty whose derivative is
# linear on each side of w (L1, MCP, SCAD); the rounding error of the
# difference is about 1e-12 relative at |w| ~ the penalty's own scale.
cdef double SECANT_STEP = 1e-4
# the two ends of the subdifferential at a nonzero weight count as one
# derivative when this close (relative): they may be computed by two formulas
cdef double SINGLE_VALUED_TOL = 1e-12


cdef inline bint single_valued(double lo, double hi) noexcept nogil:
    return (isfinite(lo) and isfinite(hi)
            and hi - lo <= SINGLE_VALUED_TOL * fmax(fmax(fabs(lo), fabs(hi)), 1e-300))


cdef Py_ssize_t derived_local_groups(Penalty pen, const Block* blk, const double* w,
                                     Py_ssize_t* group, double* grad,
                                     double* hess) except -1 nogil:
    """The local model of a separable penalty from its ``subdiff``: at a
    nonzero weight the subdifferential is the derivative P'(w); P'' is the
    larger of the two one-sided secants of P' (the model of the piece w is
    on, or the more curved one at a breakpoint: the engine keeps a Newton
    step only if F decreases). A weight whose subdifferential is an interval
    (a kink away from zero) or whose secants both cross a kink is held where
    it is (group -1) during the step. -2 if the penalty is not separable
    (its coordinates' subdifferentials then depend on each other)."""
    cdef Py_ssize_t k, n = blk.n, n_groups = 0
    cdef double d0, up, down, s, best
    cdef bint have
    cdef double* buf
    if not pen.flags & PENALTY_SEPARABLE:
        return -2
    if n == 0:
        return 0
    buf = <double*> malloc(7 * n * sizeof(double))
    if buf == NULL:
        with gil:
            raise MemoryError()
    # lo/hi at w, at w moved up, at w moved down; the moved weights
    cdef double* lo0 = buf
    cdef double* hi0 = buf + n
    cdef double* lo_up = buf + 2 * n
    cdef double* hi_up = buf + 3 * n
    cdef double* lo_dn = buf + 4 * n
    cdef double* hi_dn = buf + 5 * n
    cdef double* moved = buf + 6 * n
    try:
        pen.subdiff(blk, w, lo0, hi0)
        # separable: every coordinate moves at once (a zero stays at zero)
        for k in range(n):
            moved[k] = w[k] + SECANT_STEP * fabs(w[k])
        pen.subdiff(blk, moved, lo_up, hi_up)
        for k in range(n):
            moved[k] = w[k] - SECANT_STEP * fabs(w[k])
        pen.subdiff(blk, moved, lo_dn, hi_dn)
        for k in range(n):
            group[k] = -1
            if w[k] == 0.0 or not single_valued(lo0[k], hi0[k]):
                continue
            d0 = 0.5 * (lo0[k] + hi0[k])
            # the steps as rounded (w +- h in floating point)
            up = (w[k] + SECANT_STEP * fabs(w[k])) - w[k]
            down = w[k] - (w[k] - SECANT_STEP * fabs(w[k]))
            have = False
            best = 0.0
            if up > 0.0 and single_valued(lo_up[k], hi_up[k]):
                best = (0.5 * (lo_up[k] + hi_up[k]) - d0) / up
                have = True
            if down > 0.0 and single_valued(lo_dn[k], hi_dn[k]):
                s = (d0 - 0.5 * (lo_dn[k] + hi_dn[k])) / down
                best = fmax(best, s) if have else s
                have = True
            if not have or not isfinite(best):
                continue
            group[k] = n_groups
            grad[n_groups] = d0
            hess[n_groups] = best
            n_groups += 1
    finally:
        free(buf)
    return n_groups


cdef inline double direction_sq(const double* lo, const double* hi,
                                const double* grad, Py_ssize_t n) noexcept nogil:
    """Squared norm of d_k = dist(-grad_k, [lo_k, hi_k])."""
    cdef double total = 0.0, d
    cdef Py_ssize_t k
    for k in range(n):
        d = fmax(0.0, fmax(lo[k] + grad[k], -grad[k] - hi[k]))
        total += d * d
    return total


cdef class Penalty:
    """Base class of every penalty: the contract the solver talks to.

    Subclass it in Cython (``from firecy.penalties.base cimport Penalty``)
    and implement ``value``, ``prox``, ``subdiff`` and ``lambda_max`` as
    ``nogil`` methods (docs/writing_penalties.rst); or write the same
    methods in Python and pass the object itself wherever firecy takes a
    penalty (:func:`~firecy.penalties.as_penalty` wraps it).

    Parameters
    ----------
    lam : float
        The path parameter of the penalty (the sparsity strength λ_s for L1
        and MCP), non-negative.

    Examples
    --------
    >>> from firecy.penalties import L1
    >>> pen = L1(0.5)
    >>> pen.value_of([1.0, -2.0])
    1.5
    >>> pen.is_separable
    True
    """

    def __init__(self, double lam=1.0):
        if not lam >= 0.0:
            raise ValueError(f"lam must be a non-negative number, got {lam!r}")
        self.lam = lam

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        with gil:
            raise NotImplementedError(f"{type(self).__name__} does not implement value")

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        with gil:
            raise NotImplementedError(f"{type(self).__name__} does not implement prox")

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        with gil:
            raise NotImplementedError(f"{type(self).__name__} does not implement subdiff")

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        with gil:
            raise NotImplementedError(
                f"{type(self).__name__} does not implement lambda_max")

    cdef double block_score(self, const Block* blk, const double* w, const double* grad,
                            const double* step, double* work) except? -1 nogil:
        self.subdiff(blk, w, work, work + blk.n)
        return direction_sq(work, work + blk.n, grad, blk.n)

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        # a separable penalty: its model derived from subdiff; else none (-2)
        return derived_local_groups(self, blk, w, group, grad, hess)

    # ------------------------------------------------------------------
    # Python-level contract (looked up by name: not part of the ABI)

    @property
    def is_separable(self):
        """Whether the coordinates are independent (the ``PENALTY_SEPARABLE`` flag)."""
        return bool(self.flags & PENALTY_SEPARABLE)

    @property
    def score_is_decrease(self):
        """Whether ``block_score`` is an achievable decrease (``PENALTY_SCORE_IS_DECREASE``)."""
        return bool(self.flags & PENALTY_SCORE_IS_DECREASE)

    def check_blocks(self, block_ptr):
        """Raise ValueError if this penalty cannot act on a design with these blocks.

        The solver calls it once before each solve. The default accepts any
        design; a penalty with per-column data (rule lengths, a tree's node
        hierarchy) checks that its data fits ``block_ptr``.

        Parameters
        ----------
        block_ptr : ndarray of int64, shape (T + 1,)
            Block t is the columns ``block_ptr[t]:block_ptr[t + 1]``.
        """

    def bind_ensemble(self, ensemble):
        """This penalty for the rules of ``ensemble`` (default: itself).

        :class:`~firecy.FIRERegressor` calls it once it has the ensemble's
        rules, so that a penalty built by name can read per-rule data
        (:class:`~firecy.penalties.LengthWeightedL1` reads rule lengths).

        Parameters
        ----------
        ensemble : RuleEnsemble
        """
        return self

    # ------------------------------------------------------------------
    # Python wrappers: each takes and returns float64 NumPy arrays. A block
    # is given by its values; ``columns`` (default 0 .. n - 1) and ``block``
    # (default 0) say where it sits in the design.

    def value_of(self, w, curvature=None, *, columns=None, block=0):
        """Penalty value of the block ``w``."""
        cdef BlockArgs b = BlockArgs(w, curvature, columns, block)
        if b.blk.n == 0:
            return 0.0
        return self.value(&b.blk, &b.values[0])

    def prox_of(self, z, step=1.0, curvature=None, *, columns=None, block=0):
        """``argmin_x sum_k step_k / 2 (x_k - z_k)^2 + penalty(x)``."""
        cdef BlockArgs b = BlockArgs(z, curvature, columns, block)
        cdef const double[::1] s_ = _broadcast(step, b.blk.n, "step")
        out = np.zeros(b.blk.n)
        cdef double[::1] out_ = out
        if b.blk.n:
            self.prox(&b.blk, &b.values[0], &s_[0], &out_[0])
        return out

    def subdiff_of(self, w, curvature=None, *, columns=None, block=0):
        """The subdifferential intervals ``(lo, hi)`` at ``w``."""
        cdef BlockArgs b = BlockArgs(w, curvature, columns, block)
        lo = np.zeros(b.blk.n)
        hi = np.zeros(b.blk.n)
        cdef double[::1] lo_ = lo, hi_ = hi
        if b.blk.n:
            self.subdiff(&b.blk, &b.values[0], &lo_[0], &hi_[0])
        return lo, hi

    def direction_of(self, w, grad, curvature=None, *, columns=None, block=0):
        """The direction vector ``d_k = dist(-grad_k, subdiff_k)``."""
        lo, hi = self.subdiff_of(w, curvature, columns=columns, block=block)
        grad = np.asarray(grad, dtype=np.float64)
        return np.maximum(0.0, np.maximum(lo + grad, -grad - hi))

    def lambda_max_of(self, grad, curvature=None, *, columns=None, block=0):
        """Smallest ``lam`` for which 0 is stationary given the gradient at 0."""
        cdef BlockArgs b = BlockArgs(grad, curvature, columns, block)
        if b.blk.n == 0:
            return 0.0
        return self.lambda_max(&b.blk, &b.values[0])

    def local_groups_of(self, w, curvature=None, *, columns=None, block=0):
        """``(group, grad, hess)`` of the grouped local model, or None."""
        cdef BlockArgs b = BlockArgs(w, curvature, columns, block)
        cdef Py_ssize_t n = b.blk.n, n_groups
        group = np.full(n, -1, dtype=np.intp)
        grad = np.zeros(n)
        hess = np.zeros(n)
        cdef Py_ssize_t[::1] gr_ = group
        cdef double[::1] g_ = grad, h_ = hess
        if n == 0:
            return group, grad, hess
        n_groups = self.local_groups(&b.blk, &b.values[0], &gr_[0], &g_[0], &h_[0])
        if n_groups == -2:
            return None
        return group, grad[:n_groups], hess[:n_groups]

    def block_score_of(self, w, grad, step=1.0, curvature=None, *, columns=None, block=0):
        """Greedy selection score of the block."""
        cdef BlockArgs b = BlockArgs(w, curvature, columns, block)
        cdef const double[::1] g_ = _broadcast(grad, b.blk.n, "grad")
        cdef const double[::1] s_ = _broadcast(step, b.blk.n, "step")
        work = np.zeros(3 * b.blk.n + 1)
        cdef double[::1] work_ = work
        if b.blk.n == 0:
            return 0.0
        return self.block_score(&b.blk, &b.values[0], &g_[0], &s_[0], &work_[0])

    def __repr__(self):
        return f"{type(self).__name__}({self._repr_params()})"

    def _repr_params(self):
        return f"lam={self.lam!r}"


def _broadcast(values, Py_ssize_t n, name):
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != n):
        raise ValueError(f"{name} must be a scalar or a 1-D array of length {n}, "
                         f"got shape {arr.shape}")
    return np.ascontiguousarray(np.broadcast_to(arr, (n,)))


cdef class BlockArgs:
    """A block given from Python: its values and a ``Block`` that points into
    arrays this object keeps alive."""
    cdef Block blk
    cdef const double[::1] values, curv
    cdef const Py_ssize_t[::1] columns

    def __init__(self, values, curvature, columns, block):
        values = np.ascontiguousarray(values, dtype=np.float64)
        if values.ndim != 1:
            raise ValueError(f"a block must be a 1-D array, got shape {values.shape}")
        n = values.shape[0]
        self.values = values
        self.curv = _broadcast(1.0 if curvature is None else curvature, n, "curvature")
        if columns is None:
            columns = np.arange(n, dtype=np.intp)
        columns = np.ascontiguousarray(columns, dtype=np.intp)
        if columns.shape != (n,):
            raise ValueError(f"columns must have shape ({n},), got {columns.shape}")
        if n > 1 and np.any(np.diff(columns) <= 0):
            raise ValueError("columns must be increasing")
        if n and columns[0] < 0:
            raise ValueError("columns must be non-negative")
        if block < 0:
            raise ValueError(f"block must be non-negative, got {block!r}")
        self.columns = columns
        self.blk.n = n
        self.blk.index = block
        self.blk.columns = &self.columns[0] if n else NULL
        self.blk.curv = &self.curv[0] if n else NULL


# A plug-in compiled with more methods than firecy's Penalty copies that many
# method slots at import, before its layout probes refuse it: give the
# exported table null slots to copy (firecy/_layout.pyx).
from firecy._layout import pad_method_table as _pad_method_table

_pad_method_table(Penalty, FIRECY_PENALTY_METHODS)
